import java.io.BufferedReader;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.leader.Participant;

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
  private final Interop.Markers markers;
  private final String id;

  private CuratorLeaderParticipant(Interop.Markers markers) {
    this.markers = markers;
    this.id = markers.id();
  }

  public static void main(String[] args) throws Exception {
    Interop.expectArgs(args, "CuratorLeaderParticipant connect path mode terms markerDir id", 6);
    String path = args[1];
    String mode = args[2];
    try (CuratorFramework client = Interop.connect(args[0], 10_000)) {
      BufferedReader stdin = Interop.stdin();
      CuratorLeaderParticipant p = new CuratorLeaderParticipant(new Interop.Markers(Paths.get(args[4]), args[5]));
      if (args[3].equals("hold")) {
        p.hold(client, path, mode, stdin);
        return;
      }
      int terms = Integer.parseInt(args[3]);
      Interop.awaitStart(stdin);
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
      Interop.result(p.id, done.get(), p.markers.violations());
    }
  }

  private void hold(CuratorFramework client, String path, String mode, BufferedReader stdin) throws Exception {
    if (mode.equals("latch")) {
      LeaderLatch latch = new LeaderLatch(client, path, id);
      latch.addListener(new LeaderLatchListener() {
        @Override
        public void isLeader() {
          Interop.say("LEADER");
        }

        @Override
        public void notLeader() {
          Interop.say("NOT-LEADER");
        }
      });
      latch.start();
      while (latch.getOurPath() == null) Thread.sleep(5);
      Interop.say("QUEUED");
      for (String line; (line = stdin.readLine()) != null; ) {
        if (line.equals("participants")) Interop.say("PARTICIPANTS " + describe(latch.getParticipants()));
        if (line.equals("leave")) break;
      }
      latch.close();
    } else {
      CountDownLatch leave = new CountDownLatch(1);
      LeaderSelector[] selector = new LeaderSelector[1];
      selector[0] = new LeaderSelector(client, path, new LeaderSelectorListenerAdapter() {
        @Override
        public void takeLeadership(CuratorFramework c) throws Exception {
          Interop.say("LEADER");
          leave.await();
        }
      });
      selector[0].setId(id);
      selector[0].start();
      Interop.say("QUEUED");
      for (String line; (line = stdin.readLine()) != null; ) {
        if (line.equals("participants")) Interop.say("PARTICIPANTS " + describe(selector[0].getParticipants()));
        if (line.equals("leave")) break;
      }
      leave.countDown();
      selector[0].close();
    }
    Interop.say("LEFT");
  }

  private static String describe(java.util.Collection<Participant> participants) {
    StringBuilder s = new StringBuilder();
    for (Participant q : participants) s.append(s.length() == 0 ? "" : ",").append(q.getId()).append(':').append(q.isLeader());
    return s.toString();
  }

  /** One leader's term; `slow` widens the window (only the control uses it). */
  private void term(boolean slow) throws Exception {
    // Another leader acting too is a violation (counted by claim).
    Path marker = markers.claim("leader");
    markers.log("L");
    Interop.Markers.pause(slow);
    markers.drop(marker);
  }
}
