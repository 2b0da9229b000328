// The bench's Java peer (issue 7): ZooKeeper's own Java client for the raw workloads and Apache
// Curator for the lock workloads, in one long-running JVM driven by bench/peers/java.ts.
//
//   java -cp <jars>:<classes> BenchDriver <connect string>
//
// Protocol, JSON lines: once the driver's own session is connected it prints
// {"ready":true,"versions":{...}}; then each line on stdin is one command with an "id", and each
// reply is one line on stdout with that id: the sample {"id","ops","seconds","latenciesUs",
// "cpuUs","metrics"?} or {"id","error"}. Commands run one at a time, in order. Nothing else goes
// to stdout: System.out is pointed at stderr, and logging goes nowhere (slf4j-nop). When stdin
// ends the driver stops what it is running, closes its sessions and exits.
//
// Times are System.nanoTime; cpuUs is the whole JVM's process CPU (user + system) over the
// measurement, from com.sun.management.OperatingSystemMXBean.

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Version;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;

public final class BenchDriver {
  private static final int SESSION_TIMEOUT_MS = 10_000;
  /** How long a new session may take to connect before the command fails. */
  private static final long CONNECT_WAIT_S = 30;
  /** After the deadline, how long the lock threads get to finish their last acquire. */
  private static final long TAIL_WAIT_MS = 30_000;

  private static String connect;
  /** The driver's own session, for the raw workloads. */
  private static ZooKeeper zk;
  /** The protocol stream: the real stdout. */
  private static PrintStream out;
  /** Set once stdin has ended: every loop stops. */
  private static volatile boolean stopping;
  /** Sessions open right now (ZooKeeper or CuratorFramework), closed on the way out. */
  private static final Set<Object> open = ConcurrentHashMap.newKeySet();

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: BenchDriver <connect string>");
      System.exit(2);
    }
    connect = args[0];
    out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
    System.setOut(System.err);

    // stdin is read from the start: if the parent goes away while we connect, we go too.
    BlockingQueue<String> commands = new LinkedBlockingQueue<>();
    Thread main = Thread.currentThread();
    Thread reader = new Thread(() -> readCommands(commands, main), "bench-stdin");
    // Not a daemon: the JVM must not exit under shutdown() while it closes the sessions.
    reader.start();

    try {
      zk = session();
    } catch (Exception e) {
      if (stopping) return;
      System.err.println("BenchDriver: " + describe(e));
      System.exit(1);
    }
    Map<String, Object> ready = new LinkedHashMap<>();
    ready.put("ready", true);
    ready.put("versions", versions());
    send(ready);

    while (!stopping) {
      String line;
      try {
        line = commands.take();
      } catch (InterruptedException e) {
        break;
      }
      handle(line);
    }
  }

  private static void readCommands(BlockingQueue<String> commands, Thread main) {
    try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
      for (String line; (line = in.readLine()) != null; ) {
        if (!line.isBlank()) commands.add(line);
      }
    } catch (Exception e) {
      // A broken stdin ends the driver like a closed one.
    }
    shutdown(main);
  }

  /** stdin ended: stop the running command, close every session, exit. Never takes more than ~5 s. */
  private static void shutdown(Thread main) {
    stopping = true;
    Thread watchdog = new Thread(() -> {
      try {
        Thread.sleep(5_000);
      } catch (InterruptedException e) {
        // exit anyway
      }
      Runtime.getRuntime().halt(3);
    }, "bench-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
    main.interrupt();
    try {
      main.join(3_000);
    } catch (InterruptedException e) {
      // go on closing
    }
    for (Object session : open.toArray()) closeQuietly(session);
    out.flush();
    Runtime.getRuntime().halt(0);
  }

  private static Map<String, Object> versions() {
    Map<String, Object> v = new LinkedHashMap<>();
    String zkVersion = Version.getFullVersion();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("^[0-9]+(\\.[0-9]+)*").matcher(zkVersion);
    v.put("zookeeper", m.find() ? m.group() : zkVersion);
    String curator = null;
    try (InputStream in = InterProcessMutex.class.getResourceAsStream("/META-INF/maven/org.apache.curator/curator-recipes/pom.properties")) {
      if (in != null) {
        Properties p = new Properties();
        p.load(in);
        curator = p.getProperty("version");
      }
    } catch (Exception e) {
      // fall back on the manifest
    }
    if (curator == null) curator = InterProcessMutex.class.getPackage().getImplementationVersion();
    v.put("curator", curator == null ? "unknown" : curator);
    v.put("java", System.getProperty("java.version"));
    return v;
  }

  private static void handle(String line) {
    Object id = null;
    Map<String, Object> reply = new LinkedHashMap<>();
    try {
      Map<String, Object> cmd = Json.object(line);
      id = cmd.get("id");
      reply.put("id", id);
      reply.putAll(run(cmd));
    } catch (Throwable t) {
      if (stopping) return;
      reply.clear();
      reply.put("id", id);
      reply.put("error", describe(t));
    }
    if (!stopping) send(reply);
  }

  private static synchronized void send(Map<String, Object> message) {
    out.print(Json.write(message));
    out.print('\n');
    out.flush();
  }

  private static String describe(Throwable t) {
    StringBuilder b = new StringBuilder(t.toString());
    for (Throwable c = t.getCause(); c != null && c != c.getCause(); c = c.getCause()) b.append("; caused by ").append(c);
    return b.toString();
  }

  private static Map<String, Object> run(Map<String, Object> cmd) throws Exception {
    Object w = cmd.get("workload");
    if (!(w instanceof String workload)) throw new IllegalArgumentException("no workload");
    switch (workload) {
      case "getData": {
        String path = path(cmd);
        return raw(path, count(cmd, "count"), count(cmd, "outstanding"),
            () -> zk.getData(path, false, null),
            done -> zk.getData(path, false, (rc, p, ctx, data, stat) -> done.accept(rc), null));
      }
      case "setData": {
        String path = path(cmd);
        byte[] data = new byte[count(cmd, "size", 0)];
        Arrays.fill(data, (byte) 'x');
        return raw(path, count(cmd, "count"), count(cmd, "outstanding"),
            () -> zk.setData(path, data, -1),
            done -> zk.setData(path, data, -1, (rc, p, ctx, stat) -> done.accept(rc), null));
      }
      case "exists": {
        String path = path(cmd);
        int noNode = KeeperException.Code.NONODE.intValue();
        return raw(path, count(cmd, "count"), count(cmd, "outstanding"),
            () -> zk.exists(path, false),
            done -> zk.exists(path, false, (rc, p, ctx, stat) -> done.accept(rc == noNode ? 0 : rc), null));
      }
      case "createDelete":
        return createDelete(path(cmd), count(cmd, "count"));
      case "connect":
        return connects(count(cmd, "count"), cmd.get("sasl") instanceof Boolean b ? b : null);
      case "mutexUncontended":
        return uncontended(path(cmd), count(cmd, "count"), false);
      case "writeLockUncontended":
        return uncontended(path(cmd), count(cmd, "count"), true);
      case "mutexContended":
        return contended(path(cmd), count(cmd, "sessions"), cmd.containsKey("threads") ? count(cmd, "threads") : 1, seconds(cmd));
      case "semaphoreContended":
        return semaphoreContended(path(cmd), count(cmd, "sessions"), count(cmd, "permits"), seconds(cmd));
      case "readWrite":
        return readWrite(path(cmd), count(cmd, "readers"), count(cmd, "writers"), seconds(cmd));
      default:
        throw new IllegalArgumentException("unknown workload " + workload);
    }
  }

  // ---- raw workloads: ZooKeeper's Java client ----

  interface SyncOp {
    void run() throws Exception;
  }

  interface AsyncOp {
    /** Starts the request; `done` gets the result code (0 when fine). */
    void start(IntConsumer done);
  }

  /**
   * `count` requests. With one outstanding: one after another on the blocking API, each timed.
   * With more: the callback API, a semaphore keeping `outstanding` in flight, no latencies.
   */
  private static Map<String, Object> raw(String path, int count, int outstanding, SyncOp sync, AsyncOp async) throws Exception {
    if (outstanding == 1) {
      double[] lat = new double[count];
      long cpu0 = cpu();
      long t0 = System.nanoTime();
      for (int i = 0; i < count; i++) {
        long a = System.nanoTime();
        sync.run();
        lat[i] = us(System.nanoTime() - a);
      }
      long t1 = System.nanoTime();
      long cpu1 = cpu();
      return sample(count, t1 - t0, lat, cpu1 - cpu0, null);
    }
    Semaphore slots = new Semaphore(outstanding);
    AtomicInteger firstError = new AtomicInteger();
    IntConsumer done = rc -> {
      if (rc != 0) firstError.compareAndSet(0, rc);
      slots.release();
    };
    long cpu0 = cpu();
    long t0 = System.nanoTime();
    for (int i = 0; i < count; i++) {
      slots.acquire();
      async.start(done);
    }
    slots.acquire(outstanding);
    long t1 = System.nanoTime();
    long cpu1 = cpu();
    int rc = firstError.get();
    if (rc != 0) throw KeeperException.create(KeeperException.Code.get(rc), path);
    return sample(count, t1 - t0, new double[0], cpu1 - cpu0, null);
  }

  /** Create an ephemeral node and delete it, `count` times; the pair timed, and each half. */
  private static Map<String, Object> createDelete(String path, int count) throws Exception {
    double[] pairs = new double[count];
    double[] creates = new double[count];
    double[] deletes = new double[count];
    byte[] empty = new byte[0];
    long cpu0 = cpu();
    long t0 = System.nanoTime();
    for (int i = 0; i < count; i++) {
      long a = System.nanoTime();
      zk.create(path, empty, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
      long b = System.nanoTime();
      zk.delete(path, -1);
      long c = System.nanoTime();
      creates[i] = us(b - a);
      deletes[i] = us(c - b);
      pairs[i] = us(c - a);
    }
    long t1 = System.nanoTime();
    long cpu1 = cpu();
    Map<String, Object> metrics = new LinkedHashMap<>();
    metrics.put("createP50Us", p50(creates));
    metrics.put("deleteP50Us", p50(deletes));
    return sample(count, t1 - t0, pairs, cpu1 - cpu0, metrics);
  }

  /**
   * New sessions, one after another: each timed until SyncConnected, then closed. {@code sasl}
   * true: until SaslAuthenticated (the JVM's JAAS {@code Client} section logs in); false: SASL
   * off for these sessions; null: the JVM's settings, until SyncConnected.
   */
  private static Map<String, Object> connects(int count, Boolean sasl) throws Exception {
    double[] lat = new double[count];
    long cpu0 = cpu();
    long t0 = System.nanoTime();
    for (int i = 0; i < count; i++) {
      long a = System.nanoTime();
      ZooKeeper z = sasl == null ? session() : session(sasl);
      lat[i] = us(System.nanoTime() - a);
      close(z);
    }
    long t1 = System.nanoTime();
    long cpu1 = cpu();
    return sample(count, t1 - t0, lat, cpu1 - cpu0, null);
  }

  /** A new ZooKeeper session, once it is connected. */
  private static ZooKeeper session() throws Exception {
    CountDownLatch connected = new CountDownLatch(1);
    ZooKeeper z = new ZooKeeper(connect, SESSION_TIMEOUT_MS, e -> {
      if (e.getState() == Watcher.Event.KeeperState.SyncConnected) connected.countDown();
    });
    open.add(z);
    try {
      if (!connected.await(CONNECT_WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("no session with " + connect + " within " + CONNECT_WAIT_S + " s");
      return z;
    } catch (Exception e) {
      close(z);
      throw e;
    }
  }

  /**
   * A new ZooKeeper session with SASL on (once SaslAuthenticated; AuthFailed fails) or off (once
   * SyncConnected).
   */
  private static ZooKeeper session(boolean sasl) throws Exception {
    ZKClientConfig config = new ZKClientConfig();
    config.setProperty(ZKClientConfig.ENABLE_CLIENT_SASL_KEY, Boolean.toString(sasl));
    CountDownLatch done = new CountDownLatch(1);
    AtomicReference<String> failed = new AtomicReference<>();
    Watcher.Event.KeeperState wanted = sasl ? Watcher.Event.KeeperState.SaslAuthenticated : Watcher.Event.KeeperState.SyncConnected;
    ZooKeeper z = new ZooKeeper(connect, SESSION_TIMEOUT_MS, e -> {
      if (e.getState() == Watcher.Event.KeeperState.AuthFailed) failed.set("SASL authentication failed (AuthFailed)");
      if (e.getState() == wanted || e.getState() == Watcher.Event.KeeperState.AuthFailed) done.countDown();
    }, config);
    open.add(z);
    try {
      if (!done.await(CONNECT_WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("no " + wanted + " from " + connect + " within " + CONNECT_WAIT_S + " s");
      if (failed.get() != null) throw new IllegalStateException(failed.get());
      return z;
    } catch (Exception e) {
      close(z);
      throw e;
    }
  }

  // ---- lock workloads: Curator ----

  /** A started Curator client, once connected. */
  private static CuratorFramework curator() throws Exception {
    CuratorFramework c = CuratorFrameworkFactory.builder()
        .connectString(connect)
        .sessionTimeoutMs(SESSION_TIMEOUT_MS)
        .retryPolicy(new ExponentialBackoffRetry(100, 3))
        .build();
    open.add(c);
    try {
      c.start();
      if (!c.blockUntilConnected((int) CONNECT_WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("Curator: no connection to " + connect + " within " + CONNECT_WAIT_S + " s");
      return c;
    } catch (Exception e) {
      close(c);
      throw e;
    }
  }

  /** One session, one lock; `count` cycles of acquire (timed) and release. */
  private static Map<String, Object> uncontended(String path, int count, boolean writeLock) throws Exception {
    CuratorFramework c = curator();
    try {
      InterProcessLock lock = writeLock ? new InterProcessReadWriteLock(c, path).writeLock() : new InterProcessMutex(c, path);
      double[] lat = new double[count];
      long cpu0 = cpu();
      long t0 = System.nanoTime();
      for (int i = 0; i < count; i++) {
        long a = System.nanoTime();
        lock.acquire();
        lat[i] = us(System.nanoTime() - a);
        lock.release();
      }
      long t1 = System.nanoTime();
      long cpu1 = cpu();
      return sample(count, t1 - t0, lat, cpu1 - cpu0, null);
    } finally {
      close(c);
    }
  }

  /** The measurement window of a timed workload, opened by the barrier's last arrival. */
  private static final class Window {
    private final long nanos;
    volatile long start;
    volatile long deadline;
    volatile long cpu0;

    Window(double seconds) {
      nanos = (long) (seconds * 1e9);
    }

    void open() {
      cpu0 = cpu();
      start = System.nanoTime();
      deadline = start + nanos;
    }
  }

  interface LockLoop {
    void run(Window w) throws Exception;
  }

  /**
   * One thread per loop, all behind a barrier (sessions are connected before); the window opens
   * when the barrier trips, CPU is read at the deadline, then the threads finish their last cycle.
   * Returns the CPU (ns) over the window.
   */
  private static long timedThreads(List<LockLoop> loops, Window w) throws Exception {
    CyclicBarrier barrier = new CyclicBarrier(loops.size() + 1, w::open);
    AtomicReference<Throwable> failure = new AtomicReference<>();
    List<Thread> threads = new ArrayList<>();
    try {
      for (LockLoop loop : loops) {
        Thread t = new Thread(() -> {
          try {
            barrier.await();
            loop.run(w);
          } catch (Throwable e) {
            if (!stopping) failure.compareAndSet(null, e);
          }
        }, "bench-lock-" + threads.size());
        t.setDaemon(true);
        t.start();
        threads.add(t);
      }
      barrier.await(CONNECT_WAIT_S, TimeUnit.SECONDS);
      for (long left; (left = w.deadline - System.nanoTime()) > 0; ) TimeUnit.NANOSECONDS.sleep(left);
      long cpu1 = cpu();
      long until = System.currentTimeMillis() + TAIL_WAIT_MS;
      for (Thread t : threads) {
        t.join(Math.max(1, until - System.currentTimeMillis()));
        if (t.isAlive()) throw new IllegalStateException("a lock thread still runs " + TAIL_WAIT_MS + " ms after the deadline");
      }
      if (failure.get() != null) throw new IllegalStateException("a lock thread failed", failure.get());
      return cpu1 - w.cpu0;
    } finally {
      for (Thread t : threads) t.interrupt();
      for (Thread t : threads) t.join(1_000);
    }
  }

  /**
   * `sessions` sessions looping acquire/release on one mutex, no hold time. A hand-off is an
   * acquire returning after another's release call; its gap runs from that release call.
   */
  private static Map<String, Object> contended(String path, int sessions, int threads, double seconds) throws Exception {
    List<CuratorFramework> clients = new ArrayList<>();
    try {
      for (int i = 0; i < sessions; i++) clients.add(curator());
      Object shared = new Object();
      Doubles gaps = new Doubles();
      Doubles releases = new Doubles();
      long[] lastReleaseCall = { 0 };
      long[] longestWait = { 0 };
      boolean[] released = { false };
      List<LockLoop> loops = new ArrayList<>();
      // `threads` threads per session share its InterProcessMutex (each thread still queues its own node).
      for (CuratorFramework c : clients) {
        InterProcessMutex mutex = new InterProcessMutex(c, path);
        for (int t = 0; t < threads; t++) loops.add(w -> {
          while (!stopping && System.nanoTime() < w.deadline) {
            long asked = System.nanoTime();
            mutex.acquire();
            long acquired = System.nanoTime();
            if (acquired < w.deadline) synchronized (shared) {
              longestWait[0] = Math.max(longestWait[0], acquired - asked);
            }
            boolean inWindow = acquired < w.deadline;
            long releaseCall;
            synchronized (shared) {
              if (inWindow && released[0]) gaps.add(us(acquired - lastReleaseCall[0]));
              released[0] = true;
              releaseCall = lastReleaseCall[0] = System.nanoTime();
            }
            mutex.release();
            long releaseDone = System.nanoTime();
            if (inWindow) synchronized (shared) {
              releases.add(us(releaseDone - releaseCall));
            }
          }
        });
      }
      Window w = new Window(seconds);
      long cpu = timedThreads(loops, w);
      Map<String, Object> metrics = new LinkedHashMap<>();
      // How long a release (its delete) took under the same load: what a hand-off waits for.
      metrics.put("releaseP50Us", p50(releases.toArray()));
      metrics.put("longestWaitMs", longestWait[0] / 1e6);
      double[] lat = gaps.toArray();
      return sample(lat.length, w.deadline - w.start, lat, cpu, metrics);
    } finally {
      for (CuratorFramework c : clients) close(c);
    }
  }

  /**
   * `sessions` sessions looping acquire/returnLease of one permit of an InterProcessSemaphoreV2
   * with `permits` leases, no hold time. Latency: the acquire; metric releaseP50Us.
   */
  private static Map<String, Object> semaphoreContended(String path, int sessions, int permits, double seconds) throws Exception {
    List<CuratorFramework> clients = new ArrayList<>();
    try {
      for (int i = 0; i < sessions; i++) clients.add(curator());
      Doubles acquires = new Doubles();
      Doubles releases = new Doubles();
      List<LockLoop> loops = new ArrayList<>();
      for (CuratorFramework c : clients) {
        InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(c, path, permits);
        loops.add(w -> {
          while (!stopping && System.nanoTime() < w.deadline) {
            long a = System.nanoTime();
            Lease lease = semaphore.acquire();
            long acquired = System.nanoTime();
            semaphore.returnLease(lease);
            long released = System.nanoTime();
            if (acquired < w.deadline) synchronized (acquires) {
              acquires.add(us(acquired - a));
              releases.add(us(released - acquired));
            }
          }
        });
      }
      Window w = new Window(seconds);
      long cpu = timedThreads(loops, w);
      Map<String, Object> metrics = new LinkedHashMap<>();
      metrics.put("releaseP50Us", p50(releases.toArray()));
      double[] lat = acquires.toArray();
      return sample(lat.length, w.deadline - w.start, lat, cpu, metrics);
    } finally {
      for (CuratorFramework c : clients) close(c);
    }
  }

  /** Readers and writers, each its own session and read-write lock on `path`, looping for `seconds`. */
  private static Map<String, Object> readWrite(String path, int readers, int writers, double seconds) throws Exception {
    List<CuratorFramework> clients = new ArrayList<>();
    try {
      for (int i = 0; i < readers + writers; i++) clients.add(curator());
      AtomicInteger reads = new AtomicInteger();
      AtomicInteger writes = new AtomicInteger();
      List<LockLoop> loops = new ArrayList<>();
      for (int i = 0; i < clients.size(); i++) {
        boolean writer = i >= readers;
        InterProcessReadWriteLock rw = new InterProcessReadWriteLock(clients.get(i), path);
        InterProcessLock lock = writer ? rw.writeLock() : rw.readLock();
        AtomicInteger counter = writer ? writes : reads;
        loops.add(w -> {
          while (!stopping && System.nanoTime() < w.deadline) {
            lock.acquire();
            if (System.nanoTime() < w.deadline) counter.incrementAndGet();
            lock.release();
          }
        });
      }
      Window w = new Window(seconds);
      long cpu = timedThreads(loops, w);
      double secs = (w.deadline - w.start) / 1e9;
      Map<String, Object> metrics = new LinkedHashMap<>();
      metrics.put("readsPerSec", reads.get() / secs);
      metrics.put("writesPerSec", writes.get() / secs);
      return sample(reads.get() + writes.get(), w.deadline - w.start, new double[0], cpu, metrics);
    } finally {
      for (CuratorFramework c : clients) close(c);
    }
  }

  // ---- helpers ----

  private static void close(Object session) {
    // An interrupt (stdin ended mid-command) must not keep the session from closing.
    boolean interrupted = Thread.interrupted();
    closeQuietly(session);
    if (interrupted) Thread.currentThread().interrupt();
  }

  private static void closeQuietly(Object session) {
    if (!open.remove(session)) return;
    try {
      if (session instanceof ZooKeeper z) z.close();
      else if (session instanceof CuratorFramework c) c.close();
    } catch (Throwable e) {
      // closing is best effort
    }
  }

  private static long cpu() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private static double us(long nanos) {
    return nanos / 1000.0;
  }

  /** The median by the bench's percentile rule (bench/lib/stats.ts): the ceil(n/2)-th smallest. */
  private static double p50(double[] values) {
    if (values.length == 0) return Double.NaN;
    double[] s = values.clone();
    Arrays.sort(s);
    return s[Math.max(0, (int) Math.ceil(0.5 * s.length) - 1)];
  }

  private static Map<String, Object> sample(int ops, long nanos, double[] latenciesUs, long cpuNanos, Map<String, Object> metrics) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("ops", ops);
    m.put("seconds", nanos / 1e9);
    m.put("latenciesUs", latenciesUs);
    m.put("cpuUs", cpuNanos / 1000.0);
    if (metrics != null) m.put("metrics", metrics);
    return m;
  }

  private static String path(Map<String, Object> cmd) {
    Object p = cmd.get("path");
    if (!(p instanceof String s) || !s.startsWith("/")) throw new IllegalArgumentException("path must be an absolute ZooKeeper path, got " + p);
    return s;
  }

  private static int count(Map<String, Object> cmd, String key) {
    return count(cmd, key, 1);
  }

  private static int count(Map<String, Object> cmd, String key, int min) {
    Object v = cmd.get(key);
    if (!(v instanceof Double d) || d != Math.rint(d) || d < min || d > Integer.MAX_VALUE) throw new IllegalArgumentException(key + " must be an integer >= " + min + ", got " + v);
    return d.intValue();
  }

  private static double seconds(Map<String, Object> cmd) {
    Object v = cmd.get("seconds");
    if (!(v instanceof Double d) || !(d > 0) || d > 3600) throw new IllegalArgumentException("seconds must be in (0, 3600], got " + v);
    return d;
  }

  /** A growable array of doubles. */
  private static final class Doubles {
    private double[] a = new double[1024];
    private int n;

    void add(double v) {
      if (n == a.length) a = Arrays.copyOf(a, n * 2);
      a[n++] = v;
    }

    double[] toArray() {
      return Arrays.copyOf(a, n);
    }
  }

  /** Just enough JSON: commands in, replies out. Numbers are read as Double. */
  static final class Json {
    private final String s;
    private int i;

    private Json(String s) {
      this.s = s;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> object(String text) {
      Json p = new Json(text);
      Object v = p.value();
      p.space();
      if (p.i != text.length()) throw p.fail("trailing characters");
      if (!(v instanceof Map)) throw p.fail("a command must be an object");
      return (Map<String, Object>) v;
    }

    private IllegalArgumentException fail(String what) {
      return new IllegalArgumentException("bad JSON command (" + what + " at " + i + "): " + (s.length() > 200 ? s.substring(0, 200) + "..." : s));
    }

    private void space() {
      while (i < s.length() && " \t\r\n".indexOf(s.charAt(i)) >= 0) i++;
    }

    private char peek() {
      if (i >= s.length()) throw fail("unexpected end");
      return s.charAt(i);
    }

    private void expect(char c) {
      space();
      if (peek() != c) throw fail("expected '" + c + "'");
      i++;
    }

    private Object value() {
      space();
      char c = peek();
      if (c == '{') {
        i++;
        Map<String, Object> m = new LinkedHashMap<>();
        space();
        if (peek() == '}') {
          i++;
          return m;
        }
        while (true) {
          space();
          String key = string();
          expect(':');
          m.put(key, value());
          space();
          char d = peek();
          i++;
          if (d == '}') return m;
          if (d != ',') throw fail("expected ',' or '}'");
        }
      }
      if (c == '[') {
        i++;
        List<Object> l = new ArrayList<>();
        space();
        if (peek() == ']') {
          i++;
          return l;
        }
        while (true) {
          l.add(value());
          space();
          char d = peek();
          i++;
          if (d == ']') return l;
          if (d != ',') throw fail("expected ',' or ']'");
        }
      }
      if (c == '"') return string();
      for (String word : new String[] { "true", "false", "null" }) {
        if (s.startsWith(word, i)) {
          i += word.length();
          return word.equals("null") ? null : Boolean.valueOf(word.equals("true"));
        }
      }
      int start = i;
      while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
      if (start == i) throw fail("unexpected '" + c + "'");
      try {
        return Double.valueOf(s.substring(start, i));
      } catch (NumberFormatException e) {
        throw fail("bad number");
      }
    }

    private String string() {
      if (peek() != '"') throw fail("expected a string");
      i++;
      StringBuilder b = new StringBuilder();
      while (true) {
        char c = peek();
        i++;
        if (c == '"') return b.toString();
        if (c != '\\') {
          b.append(c);
          continue;
        }
        char e = peek();
        i++;
        switch (e) {
          case '"', '\\', '/' -> b.append(e);
          case 'b' -> b.append('\b');
          case 'f' -> b.append('\f');
          case 'n' -> b.append('\n');
          case 'r' -> b.append('\r');
          case 't' -> b.append('\t');
          case 'u' -> {
            if (i + 4 > s.length()) throw fail("bad \\u escape");
            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
            i += 4;
          }
          default -> throw fail("bad escape");
        }
      }
    }

    static String write(Object v) {
      StringBuilder b = new StringBuilder();
      write(b, v);
      return b.toString();
    }

    private static void write(StringBuilder b, Object v) {
      if (v == null) b.append("null");
      else if (v instanceof String str) quote(b, str);
      else if (v instanceof Boolean || v instanceof Integer || v instanceof Long) b.append(v);
      else if (v instanceof Double d) number(b, d);
      else if (v instanceof double[] a) {
        // Latencies in µs to 0.1 µs: compact, and finer than the timer matters here.
        b.append('[');
        for (int k = 0; k < a.length; k++) {
          if (k > 0) b.append(',');
          long tenths = Math.round(a[k] * 10);
          b.append(tenths / 10).append('.').append(Math.abs(tenths % 10));
        }
        b.append(']');
      } else if (v instanceof Map<?, ?> m) {
        b.append('{');
        boolean first = true;
        for (Map.Entry<?, ?> e : m.entrySet()) {
          if (!first) b.append(',');
          first = false;
          quote(b, String.valueOf(e.getKey()));
          b.append(':');
          write(b, e.getValue());
        }
        b.append('}');
      } else if (v instanceof List<?> l) {
        b.append('[');
        for (int k = 0; k < l.size(); k++) {
          if (k > 0) b.append(',');
          write(b, l.get(k));
        }
        b.append(']');
      } else quote(b, v.toString());
    }

    private static void number(StringBuilder b, double d) {
      if (Double.isNaN(d) || Double.isInfinite(d)) b.append("null");
      else if (d == Math.rint(d) && Math.abs(d) < 1e15) b.append((long) d);
      else b.append(d);
    }

    private static void quote(StringBuilder b, String str) {
      b.append('"');
      for (int k = 0; k < str.length(); k++) {
        char c = str.charAt(k);
        switch (c) {
          case '"' -> b.append("\\\"");
          case '\\' -> b.append("\\\\");
          case '\n' -> b.append("\\n");
          case '\r' -> b.append("\\r");
          case '\t' -> b.append("\\t");
          default -> {
            if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
          }
        }
      }
      b.append('"');
    }
  }
}
