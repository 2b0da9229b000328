import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.data.Stat;

/**
 * The Curator 5 participant of the fault suite: the Java twin of ../participant.mjs, so Curator
 * processes take the same lock in the same histories as ours (network.test.ts).
 *
 * Arguments: connect lockPath who durationMs sessionTimeoutMs resourceUrl workMs
 *
 * Loops until durationMs has passed: InterProcessMutex.acquire(5 s) on lockPath, then logs
 * {"who","t","kind":"acquired","token","mode":"write"}, three POSTs to resourceUrl?who=..&token=..
 * each followed by workMs of sleep, {"kind":"released"}, release(). Every line is one JSON object
 * on stdout; `t` is System.nanoTime() as a decimal string, which on Linux is CLOCK_MONOTONIC, the
 * clock of Node's process.hrtime.bigint() (network.test.ts checks that before relying on it).
 *
 * - The fencing token is the czxid of the lock node this hold created, as @zk/locks's
 *   fencingToken: Curator gives none, so it is read with exists() on the node's path
 *   (InterProcessMutex.getLockPath(), protected, reached through a subclass). Without it (the
 *   node is already gone) nothing is written: an error is logged and the lock released.
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
    if (args.length != 7) {
      System.err.println("usage: CuratorFaultParticipant connect lockPath who durationMs sessionTimeoutMs resourceUrl workMs");
      System.exit(2);
    }
    String connect = args[0];
    String lockPath = args[1];
    who = args[2];
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Long.parseLong(args[3]));
    int sessionTimeout = Integer.parseInt(args[4]);
    String resource = args[5] + "?who=" + URLEncoder.encode(who, StandardCharsets.UTF_8) + "&token=";
    long workMs = Long.parseLong(args[6]);
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
          post(resource + token);
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
