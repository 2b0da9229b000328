import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.data.Stat;

/**
 * The Curator 5 participant of the fault suite: the Java twin of ../participant.mjs, so Curator
 * processes take the same lock in the same histories as ours (network.test.ts).
 *
 * Arguments: connect lockPath who durationMs sessionTimeoutMs resourceUrl workMs [kind [permits]]
 *
 * Loops until durationMs has passed: InterProcessMutex.acquire(5 s) on lockPath, then logs
 * {"who","t","kind":"acquired","token","mode":"write"}, three POSTs to
 * resourceUrl?who=..&token=..&node=.. each followed by workMs of sleep, {"kind":"released"},
 * release(). `kind` picks the recipe as participant.mjs does: `mutex` (the default),
 * `semaphore` (InterProcessSemaphoreV2 with `permits`, one lease a hold), `latch` (LeaderLatch:
 * a hold is a term, from await() to close(); a new latch then queues at the back) or `selector`
 * (LeaderSelector with autoRequeue: a hold is one takeLeadership()). Leaders stop writing once
 * they logged lost (the adapter also interrupts a selector's leader on SUSPENDED). Every line is one JSON object
 * on stdout; `t` is System.nanoTime() as a decimal string, which on Linux is CLOCK_MONOTONIC, the
 * clock of Node's process.hrtime.bigint() (network.test.ts checks that before relying on it).
 *
 * - The fencing token is the czxid of the lock node this hold created, as @zk/locks's
 *   fencingToken: Curator gives none, so it is read with exists() on the node's path
 *   (InterProcessMutex.getLockPath(), protected, reached through a subclass; a semaphore lease's
 *   leases/ node; LeaderLatch.getOurPath(); for a selector, the first lock node in Curator's
 *   order, checked to carry our id). Without it (the node is already gone) nothing is written:
 *   an error is logged and the hold given up.
 * - {"kind":"lost","reason"} is logged, at most once per hold, when the connection state becomes
 *   SUSPENDED or LOST while the lock is held. SUSPENDED is the signal: Curator's documentation says
 *   a lock cannot be trusted from SUSPENDED on (the client heard nothing for 2/3 of the session
 *   timeout; the server may expire the session a third later), while LOST comes a full session
 *   timeout after SUSPENDED, after another client may already hold the lock.
 * - Failures are logged as {"kind":"error","message"}; an uncaught one ends the process with 1.
 *   Like participant.mjs the writes of a hold go out whatever happened meanwhile ("I think I hold
 *   the lock"): the fenced resource is what refuses a stale one.
 *
 * `CuratorFaultParticipant --clock` prints System.nanoTime() for every line read on stdin (the
 * clock check of network.test.ts).
 */
public class CuratorFaultParticipant {
  private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);
  private static String who = "?";

  /** InterProcessMutex with its lock node's path in reach. */
  private static final class Mutex extends InterProcessMutex {
    Mutex(CuratorFramework client, String path) {
      super(client, path);
    }

    /** The node of the hold of the current thread, or null. */
    String nodePath() {
      return getLockPath();
    }
  }

  /** Set while this process believes it holds the lock; lost is logged once per hold. Guarded by OUT. */
  private static boolean holding;
  private static boolean lostLogged;

  public static void main(String[] args) throws Exception {
    if (args.length == 1 && args[0].equals("--clock")) {
      BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      while (in.readLine() != null) OUT.println(System.nanoTime());
      return;
    }
    if (args.length < 7 || args.length > 9) {
      System.err.println("usage: CuratorFaultParticipant connect lockPath who durationMs sessionTimeoutMs resourceUrl workMs [mutex|semaphore|latch|selector [permits]]");
      System.exit(2);
    }
    String connect = args[0];
    String lockPath = args[1];
    who = args[2];
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Long.parseLong(args[3]));
    int sessionTimeout = Integer.parseInt(args[4]);
    String resource = args[5] + "?who=" + URLEncoder.encode(who, StandardCharsets.UTF_8) + "&token=";
    long workMs = Long.parseLong(args[6]);
    String kind = args.length > 7 ? args[7] : "mutex";
    int permits = args.length > 8 ? Integer.parseInt(args[8]) : 1;
    Thread.setDefaultUncaughtExceptionHandler((thread, e) -> {
      log("error", "\"message\":" + json("crash: " + e));
      System.exit(1);
    });

    CuratorFramework client = CuratorFrameworkFactory.newClient(connect, sessionTimeout, sessionTimeout, new RetryNTimes(3, 100));
    client.getConnectionStateListenable().addListener((c, state) -> {
      if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) lost(state.toString());
    });
    client.start();
    while (!client.blockUntilConnected(1, TimeUnit.SECONDS)) {
      log("error", "\"message\":" + json("connect: not connected to " + connect + " after 1 s"));
      if (System.nanoTime() >= end) exit(client, 0);
    }
    switch (kind) {
      case "mutex":
        break;
      case "semaphore":
        semaphore(client, lockPath, end, resource, workMs, permits);
        exit(client, 0);
        break;
      case "latch":
        latch(client, lockPath, end, resource, workMs);
        exit(client, 0);
        break;
      case "selector":
        selector(client, lockPath, end, resource, workMs);
        exit(client, 0);
        break;
      default:
        System.err.println("unknown kind " + kind);
        System.exit(2);
    }
    Mutex mutex = new Mutex(client, lockPath);
    while (System.nanoTime() < end) {
      boolean acquired;
      try {
        acquired = mutex.acquire(5, TimeUnit.SECONDS);
      } catch (Exception e) {
        log("error", "\"message\":" + json("acquire: " + e));
        Thread.sleep(50);
        continue;
      }
      if (!acquired) {
        log("error", "\"message\":" + json("acquire: timed out after 5000 ms"));
        continue;
      }
      long t = System.nanoTime();
      synchronized (OUT) {
        lostLogged = false;
        holding = true;
      }
      // Acquired while already suspended: no state change will come to say so.
      if (!client.getZookeeperClient().isConnected()) lost("not connected at acquire");
      Long token = null;
      try {
        Stat stat = client.checkExists().forPath(mutex.nodePath());
        if (stat != null) token = stat.getCzxid();
        else log("error", "\"message\":" + json("no fencing token: lock node " + mutex.nodePath() + " is gone"));
      } catch (Exception e) {
        log("error", "\"message\":" + json("no fencing token: " + e));
      }
      if (token != null) {
        log(t, "acquired", "\"token\":\"" + token + "\",\"mode\":\"write\"");
        for (int k = 0; k < 3; k++) {
          post(resource + token + "&node=" + URLEncoder.encode(mutex.nodePath(), StandardCharsets.UTF_8));
          Thread.sleep(workMs);
        }
      }
      synchronized (OUT) {
        holding = false;
        if (token != null) log("released", null);
      }
      try {
        mutex.release();
      } catch (Exception e) {
        log("error", "\"message\":" + json("release: " + e));
      }
    }
    exit(client, 0);
  }

  /** Marks the start of a hold (lost is logged once per hold from now on). */
  private static void begin(CuratorFramework client) {
    synchronized (OUT) {
      lostLogged = false;
      holding = true;
    }
    // Acquired while already suspended: no state change will come to say so.
    if (!client.getZookeeperClient().isConnected()) lost("not connected at acquire");
  }

  /** The creation zxid of `node`, or null (logged) when it is gone or cannot be read. */
  private static Long tokenOf(CuratorFramework client, String node) {
    try {
      Stat stat = node == null ? null : client.checkExists().forPath(node);
      if (stat != null) return stat.getCzxid();
      log("error", "\"message\":" + json("no fencing token: node " + node + " is gone"));
    } catch (Exception e) {
      log("error", "\"message\":" + json("no fencing token: " + e));
    }
    return null;
  }

  /**
   * One hold begun at `t` (after {@link #begin}): acquired, three writes with workMs after each,
   * released. A leader (`stopOnLost`) writes no more once it logged lost, or when interrupted.
   */
  private static void hold(long t, Long token, String node, String resource, long workMs, boolean stopOnLost) {
    if (token != null) {
      log(t, "acquired", "\"token\":\"" + token + "\",\"mode\":\"write\"");
      try {
        for (int k = 0; k < 3; k++) {
          synchronized (OUT) {
            if (stopOnLost && lostLogged) break;
          }
          post(resource + token + "&node=" + URLEncoder.encode(node, StandardCharsets.UTF_8));
          Thread.sleep(workMs);
        }
      } catch (InterruptedException e) {
        // a selector's leadership cancelled (SUSPENDED): the term ends here
      }
    }
    synchronized (OUT) {
      holding = false;
      if (token != null) log("released", null);
    }
  }

  /** InterProcessSemaphoreV2 with `permits`: one lease a hold. */
  private static void semaphore(CuratorFramework client, String path, long end, String resource, long workMs, int permits) throws InterruptedException {
    InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, path, permits);
    while (System.nanoTime() < end) {
      Lease lease;
      try {
        lease = semaphore.acquire(5, TimeUnit.SECONDS);
      } catch (Exception e) {
        log("error", "\"message\":" + json("acquire: " + e));
        Thread.sleep(50);
        continue;
      }
      if (lease == null) {
        log("error", "\"message\":" + json("acquire: timed out after 5000 ms"));
        continue;
      }
      long t = System.nanoTime();
      begin(client);
      String node = path + "/leases/" + lease.getNodeName();
      hold(t, tokenOf(client, node), node, resource, workMs, false);
      semaphore.returnLease(lease);
    }
  }

  /** LeaderLatch: a term from await() to close(); then a new latch queues at the back. */
  private static void latch(CuratorFramework client, String path, long end, String resource, long workMs) throws Exception {
    LeaderLatch latch = null;
    while (System.nanoTime() < end) {
      if (latch == null) {
        latch = new LeaderLatch(client, path, who);
        latch.start();
      }
      if (!latch.await(5, TimeUnit.SECONDS)) {
        log("error", "\"message\":" + json("await: no leadership after 5000 ms"));
        continue;
      }
      long t = System.nanoTime();
      begin(client);
      String node = latch.getOurPath();
      hold(t, tokenOf(client, node), node, resource, workMs, true);
      latch.close();
      latch = null;
    }
    if (latch != null) latch.close();
  }

  /** LeaderSelector with autoRequeue: a term is one takeLeadership(). */
  private static void selector(CuratorFramework client, String path, long end, String resource, long workMs) throws Exception {
    LeaderSelector selector = new LeaderSelector(client, path, new LeaderSelectorListenerAdapter() {
      @Override
      public void takeLeadership(CuratorFramework c) {
        long t = System.nanoTime();
        begin(c);
        String node = leaderNode(c, path);
        hold(t, tokenOf(c, node), node, resource, workMs, true);
      }
    });
    selector.setId(who);
    selector.autoRequeue();
    selector.start();
    long left;
    while ((left = end - System.nanoTime()) > 0) Thread.sleep(Math.min(TimeUnit.NANOSECONDS.toMillis(left) + 1, 1000));
    selector.close();
  }

  /** The first lock node under `path` in Curator's order (by the sequence after "lock-"), if its data is our id. */
  private static String leaderNode(CuratorFramework client, String path) {
    try {
      List<String> children = client.getChildren().forPath(path);
      String first = children.stream().filter(n -> n.contains("lock-")).min(Comparator.comparing(n -> n.substring(n.lastIndexOf("lock-") + 5))).orElse(null);
      if (first == null) return null;
      String node = path + "/" + first;
      return Arrays.equals(client.getData().forPath(node), who.getBytes(StandardCharsets.UTF_8)) ? node : null;
    } catch (Exception e) {
      log("error", "\"message\":" + json("leader node: " + e));
      return null;
    }
  }

  /** Logs lost, once per hold, if a hold is on. */
  private static void lost(String reason) {
    synchronized (OUT) {
      if (!holding || lostLogged) return;
      lostLogged = true;
      log("lost", "\"reason\":" + json(reason));
    }
  }

  private static void exit(CuratorFramework client, int code) {
    try {
      client.close();
    } finally {
      System.exit(code);
    }
  }

  /** One write to the guarded resource; failures are ignored, as participant.mjs does. */
  private static void post(String url) {
    try {
      HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
      c.setRequestMethod("POST");
      c.setConnectTimeout(5000);
      c.setReadTimeout(5000);
      c.getResponseCode();
      c.disconnect();
    } catch (Exception e) {
      // a refused write is the resource's answer, not the participant's error
    }
  }

  private static void log(String kind, String extra) {
    log(System.nanoTime(), kind, extra);
  }

  private static void log(long t, String kind, String extra) {
    String line = "{\"who\":" + json(who) + ",\"t\":\"" + t + "\",\"kind\":\"" + kind + "\"" + (extra == null ? "" : "," + extra) + "}";
    synchronized (OUT) {
      OUT.println(line);
    }
  }

  private static String json(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char ch : s.toCharArray()) {
      if (ch == '"' || ch == '\\') b.append('\\').append(ch);
      else if (ch < 0x20) b.append(String.format("\\u%04x", (int) ch));
      else b.append(ch);
    }
    return b.append('"').toString();
  }
}
