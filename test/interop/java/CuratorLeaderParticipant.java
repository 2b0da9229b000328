import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.retry.RetryOneTime;

/**
 * The Curator 5 side of the leader interop tests (leader.test.ts); leader-participant.mjs speaks
 * the same protocol on @zk/locks.
 *
 * Arguments: connectString path mode terms|hold markerDir id
 *   mode: latch (LeaderLatch: a new latch per term, closed at the end of the term),
 *         selector (LeaderSelector with autoRequeue: one term per takeLeadership call),
 *         none (no election: the negative control that shows the marker check catches two leaders).
 *   terms: a count, or "hold" (lead once, print LEADER, then on each stdin line: "participants"
 *         prints PARTICIPANTS <id:leader,...> as this process sees them; "leave" gives leadership
 *         up, prints LEFT and exits). With "hold", a process that is not leader yet prints QUEUED
 *         once its node exists.
 *
 * Counted runs print READY once connected and start on the first stdin line. Inside every term
 * the exclusion check needs no clock: the leader creates markerDir/leader with exclusive create
 * (an existing file means another leader is acting), appends "<id> L" to markerDir/log, and
 * deletes the file. Ends with {"id":..., "acquisitions":N, "violations":V} and exit status 0.
 */
public class CuratorLeaderParticipant {
  private final Path dir;
  private final String id;
  private final AtomicInteger violations = new AtomicInteger();

  private CuratorLeaderParticipant(Path dir, String id) {
    this.dir = dir;
    this.id = id;
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 6) {
      System.err.println("usage: CuratorLeaderParticipant connect path mode terms markerDir id");
      System.exit(2);
    }
    String path = args[1];
    String mode = args[2];
    CuratorFramework client = CuratorFrameworkFactory.newClient(args[0], 10_000, 10_000, new RetryOneTime(100));
    client.start();
    try {
      if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) throw new IllegalStateException("not connected to " + args[0]);
      BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      CuratorLeaderParticipant p = new CuratorLeaderParticipant(Paths.get(args[4]), args[5]);
      if (args[3].equals("hold")) {
        p.hold(client, path, mode, stdin);
        return;
      }
      int terms = Integer.parseInt(args[3]);
      say("READY");
      stdin.readLine();
      AtomicInteger done = new AtomicInteger();
      if (mode.equals("latch")) {
        for (int n = 0; n < terms; n++) {
          LeaderLatch latch = new LeaderLatch(client, path, p.id);
          latch.start();
          latch.await();
          p.term(false);
          done.incrementAndGet();
          latch.close();
        }
      } else if (mode.equals("selector")) {
        CountDownLatch finished = new CountDownLatch(1);
        LeaderSelector selector = new LeaderSelector(client, path, new LeaderSelectorListenerAdapter() {
          @Override
          public void takeLeadership(CuratorFramework c) throws Exception {
            if (done.get() >= terms) return;
            p.term(false);
            if (done.incrementAndGet() >= terms) finished.countDown();
          }
        });
        selector.setId(p.id);
        selector.autoRequeue();
        selector.start();
        finished.await();
        selector.close();
      } else {
        for (int n = 0; n < terms; n++) {
          p.term(true); // a "term" without an election
          done.incrementAndGet();
        }
      }
      say("{\"id\":\"" + p.id + "\",\"acquisitions\":" + done.get() + ",\"violations\":" + p.violations.get() + "}");
    } finally {
      client.close();
    }
  }

  private void hold(CuratorFramework client, String path, String mode, BufferedReader stdin) throws Exception {
    if (mode.equals("latch")) {
      LeaderLatch latch = new LeaderLatch(client, path, id);
      latch.addListener(new LeaderLatchListener() {
        @Override
        public void isLeader() {
          say("LEADER");
        }

        @Override
        public void notLeader() {
          say("NOT-LEADER");
        }
      });
      latch.start();
      while (latch.getOurPath() == null) Thread.sleep(5);
      say("QUEUED");
      for (String line; (line = stdin.readLine()) != null; ) {
        if (line.equals("participants")) say("PARTICIPANTS " + describe(latch.getParticipants()));
        if (line.equals("leave")) break;
      }
      latch.close();
    } else {
      CountDownLatch leave = new CountDownLatch(1);
      LeaderSelector[] selector = new LeaderSelector[1];
      selector[0] = new LeaderSelector(client, path, new LeaderSelectorListenerAdapter() {
        @Override
        public void takeLeadership(CuratorFramework c) throws Exception {
          say("LEADER");
          leave.await();
        }
      });
      selector[0].setId(id);
      selector[0].start();
      say("QUEUED");
      for (String line; (line = stdin.readLine()) != null; ) {
        if (line.equals("participants")) say("PARTICIPANTS " + describe(selector[0].getParticipants()));
        if (line.equals("leave")) break;
      }
      leave.countDown();
      selector[0].close();
    }
    say("LEFT");
  }

  private static String describe(java.util.Collection<Participant> participants) {
    StringBuilder s = new StringBuilder();
    for (Participant q : participants) s.append(s.length() == 0 ? "" : ",").append(q.getId()).append(':').append(q.isLeader());
    return s.toString();
  }

  private static void say(String line) {
    synchronized (System.out) {
      System.out.println(line);
      System.out.flush();
    }
  }

  /** One leader's term; `slow` widens the window (only the control uses it). */
  private void term(boolean slow) throws Exception {
    Path marker = dir.resolve("leader");
    boolean mine = true;
    try {
      Files.createFile(marker);
    } catch (FileAlreadyExistsException e) {
      violations.incrementAndGet(); // another leader is acting; its file is not ours to delete
      mine = false;
    }
    // One short O_APPEND write per term: appends from several processes do not interleave.
    Files.write(dir.resolve("log"), (id + " L\n").getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    if (slow) Thread.sleep(1);
    else Thread.yield();
    if (mine) Files.delete(marker);
  }
}
