// The Curator side of the leader workloads (issue 13), driven by bench/workloads/leader.ts; the
// Node side is bench/workloads/leader-participant.mjs (one participant) and leader.ts itself
// (100 latches in one process).
//
//   java -cp <curator jars>:<classes> LeaderBenchDriver participant <connect> <path> <sessionTimeoutMs> <id>
//   java -cp <curator jars>:<classes> LeaderBenchDriver latches <connect> <path> <count> <sessionTimeoutMs>
//
// participant: one Curator client, one LeaderLatch, for the failover workloads (this process is
//   SIGKILLed or partitioned). Prints "READY <negotiated session timeout ms> <session id, 0x hex>"
//   once connected; stdin "join" starts the latch. Prints "LEADER" from
//   LeaderLatchListener.isLeader, "LOST notLeader" from notLeader (Curator calls it when the
//   connection is SUSPENDED, with its default error policy), "STATE <ConnectionState>" on every
//   connection state change. When stdin ends it closes the latch and the client and exits.
// latches: <count> Curator clients (one session each), one LeaderLatch each (ids p0, p1, ...).
//   Prints "READY" once every client is connected, every latch started and one of them leads.
//   Each stdin line "change" closes the leader's latch (its node is deleted: the next one leads)
//   and waits for the next isLeader; it then starts a new latch with the same id on the same
//   client (a node at the back of the queue), and prints "CHANGED " and a JSON object
//   {"latencyUs":..,"releaser":"0x..","node":"/..","leader":"0x.."}: the time from the close()
//   call to the next isLeader call, the old leader's session, the node that was deleted and the
//   new leader's session. The bench counts the notifications on the server (mntr, wchp).
//   A failed change prints CHANGED {"error":"..."}. When stdin ends every latch and client is closed.
//
// Only the protocol lines go to stdout; Curator logs nowhere (slf4j-nop on the classpath).

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.ZooKeeper;

public final class LeaderBenchDriver {
  /** How long a client may take to connect, and a change to complete, before the driver fails. */
  private static final long WAIT_S = 30;

  public static void main(String[] args) throws Exception {
    if (args.length == 5 && args[0].equals("participant")) {
      participant(args[1], args[2], Integer.parseInt(args[3]), args[4]);
    } else if (args.length == 5 && args[0].equals("latches")) {
      latches(args[1], args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]));
    } else {
      System.err.println("usage: LeaderBenchDriver participant <connect> <path> <sessionTimeoutMs> <id>");
      System.err.println("       LeaderBenchDriver latches <connect> <path> <count> <sessionTimeoutMs>");
      System.exit(2);
    }
    System.exit(0);
  }

  private static CuratorFramework client(String connect, int sessionTimeoutMs) throws Exception {
    CuratorFramework c = CuratorFrameworkFactory.builder()
        .connectString(connect)
        .sessionTimeoutMs(sessionTimeoutMs)
        .connectionTimeoutMs(Math.min(sessionTimeoutMs, 15_000))
        .retryPolicy(new ExponentialBackoffRetry(100, 3))
        .build();
    c.start();
    return c;
  }

  private static void participant(String connect, String path, int sessionTimeoutMs, String id) throws Exception {
    CuratorFramework client = client(connect, sessionTimeoutMs);
    client.getConnectionStateListenable().addListener((c, state) -> say("STATE " + state));
    if (!client.blockUntilConnected((int) WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("not connected to " + connect);
    ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
    say("READY " + zk.getSessionTimeout() + " 0x" + Long.toHexString(zk.getSessionId()));
    BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    LeaderLatch latch = null;
    for (String line; (line = stdin.readLine()) != null; ) {
      if (line.equals("join") && latch == null) {
        latch = new LeaderLatch(client, path, id);
        latch.addListener(new LeaderLatchListener() {
          @Override
          public void isLeader() {
            say("LEADER");
          }

          @Override
          public void notLeader() {
            say("LOST notLeader");
          }
        });
        latch.start();
      }
    }
    if (latch != null) latch.close();
    client.close();
  }

  private static void latches(String connect, String path, int count, int sessionTimeoutMs) throws Exception {
    List<CuratorFramework> clients = new ArrayList<>();
    try {
      for (int i = 0; i < count; i++) clients.add(client(connect, sessionTimeoutMs));
      for (CuratorFramework c : clients) {
        if (!c.blockUntilConnected((int) WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("not connected to " + connect);
      }
      // The latch that called isLeader last, when, and who waits for the next one.
      AtomicInteger leader = new AtomicInteger(-1);
      AtomicLong leaderAt = new AtomicLong();
      AtomicReference<CountDownLatch> next = new AtomicReference<>(new CountDownLatch(1));
      LeaderLatch[] latches = new LeaderLatch[count];
      for (int i = 0; i < count; i++) latches[i] = latch(clients.get(i), path, i, leader, leaderAt, next);
      for (LeaderLatch l : latches) l.start();
      if (!next.get().await(WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("no leader within " + WAIT_S + " s");
      say("READY");
      BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line; (line = stdin.readLine()) != null; ) {
        if (!line.equals("change")) continue;
        try {
          int i = leader.get();
          LeaderLatch old = latches[i];
          if (!old.hasLeadership()) throw new IllegalStateException("latch p" + i + " was told it leads but has no leadership");
          String node = old.getOurPath();
          String releaser = session(clients.get(i));
          CountDownLatch woken = new CountDownLatch(1);
          next.set(woken);
          long t0 = System.nanoTime();
          old.close();
          if (!woken.await(WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("no next leader within " + WAIT_S + " s");
          long t1 = leaderAt.get();
          latches[i] = latch(clients.get(i), path, i, leader, leaderAt, next);
          latches[i].start();
          say("CHANGED {\"latencyUs\":" + (t1 - t0) / 1000.0 + ",\"releaser\":\"" + releaser + "\",\"node\":\"" + node + "\",\"leader\":\"" + session(clients.get(leader.get())) + "\"}");
        } catch (Exception e) {
          say("CHANGED {\"error\":\"" + String.valueOf(e).replace('"', '\'').replace('\\', '/') + "\"}");
        }
      }
      for (LeaderLatch l : latches) l.close();
    } finally {
      for (CuratorFramework c : clients) c.close();
    }
  }

  private static LeaderLatch latch(CuratorFramework client, String path, int i, AtomicInteger leader, AtomicLong leaderAt, AtomicReference<CountDownLatch> next) {
    LeaderLatch latch = new LeaderLatch(client, path, "p" + i);
    latch.addListener(new LeaderLatchListener() {
      @Override
      public void isLeader() {
        long at = System.nanoTime();
        leader.set(i);
        leaderAt.set(at);
        next.get().countDown();
      }

      @Override
      public void notLeader() {
        // a closed latch (CloseMode.SILENT) is not told
      }
    });
    return latch;
  }

  private static String session(CuratorFramework client) throws Exception {
    return "0x" + Long.toHexString(client.getZookeeperClient().getZooKeeper().getSessionId());
  }

  private static void say(String line) {
    synchronized (System.out) {
      System.out.println(line);
      System.out.flush();
    }
  }
}
