// The Java side of the client scale curves (issue 16), driven by bench/workloads/scale-client.ts:
// ZooKeeper's own Java client (3.8, the Debian jars). One JVM runs the whole curve of reconnects
// with watches; each repetition of the sessions curve gets a JVM of its own (see sessions()).
//
//   java -cp <jars>:<classes> ScaleBenchDriver
//
// Prints READY, then runs one command per stdin line and answers each with one line, its reply
// word and a JSON object; a command that fails answers {"error":"<message>"} under the same word.
// Times are System.nanoTime, which on Linux is CLOCK_MONOTONIC, the clock of Node's
// process.hrtime: the bench compares them with the proxy's. Nanosecond stamps go out as JSON
// strings (they may exceed 2^53).
//
//   open <connect> <prefix> <n>   one session to <connect> (the bench's proxy), then an exists
//                                 watch on each of <prefix>/0 .. <prefix>/<n-1> (nodes that exist),
//                                 1,024 requests in flight: OPENED {"sessionId":..,"setMs":..}
//   rearm                         prints ARMED, waits for the session's Disconnected event (the
//                                 bench cuts the connection then), and calls exists("/") at once:
//                                 it queues until the reconnect and returns after the SetWatches
//                                 (see rearm()). REARMED {"returnedNs":..,"cpuUs":..,
//                                 "sessionId":..}: when exists returned, the JVM's CPU from ARMED
//                                 until then.
//   fired <k> <timeoutMs>         waits until the session has seen NodeDataChanged on <k> distinct
//                                 watched paths (or the time is up): FIRED {"fired":..,"other":..}
//                                 (other: events of any other kind or path, expected 0).
//   close                         closes the session: CLOSED {}
//   sessions <connect> <w> <n>    first <w> sessions connected and closed (class loading, JIT), then
//                                 <n> sessions created together (each new ZooKeeper starts its own
//                                 two threads), until every one is SyncConnected: SESSIONS
//                                 {"connectUs":..,"latenciesUs":[..],"cpuUs":..,"heapBytes":..,
//                                 "rssBytes":..,"threads":..,"sessions":[[id,password],..]}: heap
//                                 and resident set after System.gc() with them open, less the
//                                 same before; ids and passwords in hex. The <n> stay open (see
//                                 closeAll for why): the bench kills the JVM and closes them.
//
// Only the protocol lines go to stdout (System.out points at stderr; logging goes nowhere through
// slf4j-nop). When stdin ends the driver exits.

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;

public final class ScaleBenchDriver {
  /** Longer than the Java client's reconnect delays (up to 2 s against one server) with room to spare. */
  private static final int SESSION_TIMEOUT_MS = 30_000;
  /** How long a connect, a disconnect or a reconnect may take before the command fails. */
  private static final long WAIT_S = 120;
  /** exists calls in flight while the watches are set (ours uses the same). */
  private static final int WINDOW = 1024;

  /** The reply word of each command. */
  private static final Map<String, String> REPLIES = Map.of("open", "OPENED", "rearm", "REARMED", "fired", "FIRED", "close", "CLOSED", "sessions", "SESSIONS");

  private static PrintStream out;

  /** The session of open/rearm/fired/close, its watcher's records. */
  private static ZooKeeper watched;
  private static String prefix = "";
  private static final Set<String> firedPaths = ConcurrentHashMap.newKeySet();
  private static final AtomicInteger otherEvents = new AtomicInteger();
  private static final AtomicReference<CountDownLatch> connected = new AtomicReference<>(new CountDownLatch(1));
  private static final AtomicReference<CountDownLatch> disconnected = new AtomicReference<>(new CountDownLatch(1));

  public static void main(String[] args) throws Exception {
    out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
    System.setOut(System.err);
    out.println("READY");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      String[] w = line.trim().split(" ");
      String word = REPLIES.getOrDefault(w[0], "ERROR");
      try {
        if (w.length == 4 && w[0].equals("open")) open(w[1], w[2], Integer.parseInt(w[3]));
        else if (w.length == 1 && w[0].equals("rearm")) rearm();
        else if (w.length == 3 && w[0].equals("fired")) fired(Integer.parseInt(w[1]), Long.parseLong(w[2]));
        else if (w.length == 1 && w[0].equals("close")) close();
        else if (w.length == 4 && w[0].equals("sessions")) sessions(w[1], Integer.parseInt(w[2]), Integer.parseInt(w[3]));
        else throw new IllegalArgumentException("unknown command: " + line);
      } catch (Throwable e) {
        out.println(word + " {\"error\":" + quote(String.valueOf(e)) + "}");
      }
    }
    if (watched != null) watched.close();
    System.exit(0);
  }

  /** The default watcher of the watched session: connection states and the node events. */
  private static void onEvent(WatchedEvent e) {
    if (e.getType() == Watcher.Event.EventType.None) {
      if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
        connected.get().countDown();
      } else if (e.getState() == Watcher.Event.KeeperState.Disconnected) {
        disconnected.get().countDown();
      }
      return;
    }
    String path = e.getPath();
    if (e.getType() == Watcher.Event.EventType.NodeDataChanged && path != null && path.startsWith(prefix)) firedPaths.add(path);
    else otherEvents.incrementAndGet();
  }

  private static void open(String connect, String pathPrefix, int n) throws Exception {
    if (watched != null) throw new IllegalStateException("a session is open");
    prefix = pathPrefix + "/";
    firedPaths.clear();
    otherEvents.set(0);
    connected.set(new CountDownLatch(1));
    watched = new ZooKeeper(connect, SESSION_TIMEOUT_MS, ScaleBenchDriver::onEvent);
    try {
      setWatches(n);
    } catch (Exception e) {
      watched.close();
      watched = null;
      throw e;
    }
  }

  private static void setWatches(int n) throws Exception {
    if (!connected.get().await(WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("not connected within " + WAIT_S + " s");
    long t0 = System.nanoTime();
    Semaphore window = new Semaphore(WINDOW);
    AtomicInteger missing = new AtomicInteger();
    AtomicReference<String> failure = new AtomicReference<>();
    for (int i = 0; i < n; i++) {
      window.acquire();
      // exists with the default watcher: on an existing node it leaves a data watch (as getData would).
      watched.exists(prefix + i, true, (rc, path, ctx, stat) -> {
        if (rc != 0) failure.compareAndSet(null, "exists " + path + ": rc " + rc);
        else if (stat == null) missing.incrementAndGet();
        window.release();
      }, null);
    }
    window.acquire(WINDOW);
    if (failure.get() != null) throw new IllegalStateException(failure.get());
    if (missing.get() > 0) throw new IllegalStateException(missing.get() + " watched nodes do not exist");
    out.println("OPENED {\"sessionId\":\"0x" + Long.toHexString(watched.getSessionId()) + "\",\"setMs\":" + (System.nanoTime() - t0) / 1e6 + "}");
  }

  /**
   * Why a request issued after the cut returns only once every watch is re-armed (read with javap
   * in ZooKeeper 3.8.0): ClientCnxn.queuePacket appends a request made while the client is
   * reconnecting (state CONNECTING is alive) to the tail of outgoingQueue, and
   * SendThread.primeConnection, on the new socket, puts the SetWatches batches (128 KiB of path
   * characters each, SET_WATCHES_MAX_LENGTH), then the auth packets, then the ConnectRequest at
   * the head of that queue with addFirst. The queue goes out in order and the server answers one
   * connection's requests in order. The Disconnected event comes after cleanup() has failed the
   * requests of the old connection, so this exists is one of the queued ones.
   */
  private static void rearm() throws Exception {
    CountDownLatch gone = new CountDownLatch(1);
    disconnected.set(gone);
    long cpu0 = JvmMeter.cpuUs();
    out.println("ARMED");
    ZooKeeper zk = requireWatched();
    long sessionId = zk.getSessionId();
    if (!gone.await(WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("no Disconnected event within " + WAIT_S + " s");
    zk.exists("/", false);
    long returned = System.nanoTime();
    long cpu = JvmMeter.cpuUs() - cpu0;
    if (zk.getSessionId() != sessionId) throw new IllegalStateException("the session changed");
    out.println("REARMED {\"returnedNs\":\"" + returned + "\",\"cpuUs\":" + cpu + ",\"sessionId\":\"0x" + Long.toHexString(sessionId) + "\"}");
  }

  private static void fired(int k, long timeoutMs) throws Exception {
    long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
    while (firedPaths.size() < k && System.nanoTime() < deadline) Thread.sleep(1);
    out.println("FIRED {\"fired\":" + firedPaths.size() + ",\"other\":" + otherEvents.get() + "}");
  }

  private static void close() throws Exception {
    ZooKeeper zk = requireWatched();
    watched = null;
    zk.close();
    out.println("CLOSED {}");
  }

  private static ZooKeeper requireWatched() {
    if (watched == null) throw new IllegalStateException("no session open");
    return watched;
  }

  /**
   * The warm-up sessions are closed (one at a time, see closeAll); the measured ones are left
   * open: the bench kills this JVM and closes them from Node with their ids and passwords.
   */
  private static void sessions(String connect, int warm, int n) throws Exception {
    List<ZooKeeper> warmup = new ArrayList<>();
    try {
      connectAll(connect, warm, new long[warm], warmup);
    } finally {
      closeAll(warmup);
    }
    long heap0 = JvmMeter.usedHeap();
    long rss0 = JvmMeter.rss();
    int threads0 = Thread.activeCount();
    long[] at = new long[n];
    List<ZooKeeper> clients = new ArrayList<>(n);
    long cpu0 = JvmMeter.cpuUs();
    long t0 = System.nanoTime();
    connectAll(connect, n, at, clients);
    long connectUs = (System.nanoTime() - t0) / 1000;
    long cpu = JvmMeter.cpuUs() - cpu0;
    long heap = JvmMeter.usedHeap() - heap0;
    long rssBytes = JvmMeter.rss() - rss0;
    int threads = Thread.activeCount() - threads0;
    StringBuilder s = new StringBuilder("SESSIONS {\"connectUs\":").append(connectUs).append(",\"latenciesUs\":[");
    for (int i = 0; i < n; i++) s.append(i == 0 ? "" : ",").append((at[i] - t0) / 1000);
    s.append("],\"cpuUs\":").append(cpu).append(",\"heapBytes\":").append(heap).append(",\"rssBytes\":").append(rssBytes).append(",\"threads\":").append(threads);
    s.append(",\"sessions\":[");
    for (int i = 0; i < n; i++) {
      ZooKeeper zk = clients.get(i);
      s.append(i == 0 ? "" : ",").append("[\"").append(Long.toHexString(zk.getSessionId())).append("\",\"").append(hex(zk.getSessionPasswd())).append("\"]");
    }
    out.println(s.append("]}"));
  }

  /** n new sessions, created one after another, until every one is SyncConnected; at[i]: when session i was. */
  private static void connectAll(String connect, int n, long[] at, List<ZooKeeper> clients) throws Exception {
    CountDownLatch all = new CountDownLatch(n);
    for (int i = 0; i < n; i++) {
      final int k = i;
      clients.add(new ZooKeeper(connect, 10_000, e -> {
        if (e.getType() == Watcher.Event.EventType.None && e.getState() == Watcher.Event.KeeperState.SyncConnected && at[k] == 0) {
          at[k] = System.nanoTime();
          all.countDown();
        }
      }));
    }
    if (!all.await(WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException((n - all.getCount()) + " of " + n + " sessions connected within " + WAIT_S + " s");
  }

  /**
   * Closes sessions. Several threads do not make it faster: in 3.8 the send thread of a closing
   * client runs ClientCnxnSocketNIO.cleanup(), which sleeps 100 ms, while holding the monitor of
   * its state, a ZooKeeper.States enum constant shared by every client in the JVM (seen with
   * jstack), so the closes of one JVM take 100 ms each, one after another.
   */
  private static void closeAll(List<ZooKeeper> clients) throws InterruptedException {
    for (ZooKeeper zk : clients) zk.close();
    clients.clear();
  }

  private static String hex(byte[] bytes) {
    StringBuilder h = new StringBuilder();
    for (byte b : bytes) h.append(String.format("%02x", b));
    return h.toString();
  }

  /** A JSON string. */
  private static String quote(String s) {
    StringBuilder q = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') q.append('\\').append(c);
      else if (c < 0x20) q.append(String.format("\\u%04x", (int) c));
      else q.append(c);
    }
    return q.append('"').toString();
  }

}
