// The bench's Java peer: ZooKeeper's own Java client for the raw workloads and Apache Curator
// for the lock workloads, driven by bench/peers/java.ts over stdin/stdout, one JSON command per
// line in and one JSON reply per line out. Times are System.nanoTime; CPU is the whole JVM's
// process CPU over the measurement. Logging goes nowhere (slf4j-nop on the classpath).
//
//   java -cp <jars>:<classes> BenchDriver <connect string>

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Version;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

public final class BenchDriver {
  private static final int SESSION_TIMEOUT = 10_000;
  private static String connect;
  private static ZooKeeper zk;

  public static void main(String[] args) throws Exception {
    connect = args[0];
    PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
    zk = open();
    Map<String, Object> versions = new LinkedHashMap<>();
    versions.put("zookeeper", Version.getFullVersion().replaceAll("[-\\s].*", ""));
    versions.put("curator", InterProcessMutex.class.getPackage().getImplementationVersion() == null ? "5" : InterProcessMutex.class.getPackage().getImplementationVersion());
    versions.put("java", System.getProperty("java.version"));
    Map<String, Object> ready = new LinkedHashMap<>();
    ready.put("ready", true);
    ready.put("versions", versions);
    out.println(json(ready));
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      if (line.isBlank()) continue;
      Map<String, Object> reply;
      long id = num(line, "id");
      try {
        reply = run(line);
      } catch (Throwable t) {
        reply = new LinkedHashMap<>();
        reply.put("error", t.toString());
      }
      Map<String, Object> withId = new LinkedHashMap<>();
      withId.put("id", id);
      withId.putAll(reply);
      out.println(json(withId));
    }
    zk.close();
    System.exit(0);
  }

  private static ZooKeeper open() throws Exception {
    CountDownLatch connected = new CountDownLatch(1);
    ZooKeeper z = new ZooKeeper(connect, SESSION_TIMEOUT, e -> {
      if (e.getState() == Watcher.Event.KeeperState.SyncConnected) connected.countDown();
    });
    if (!connected.await(30, TimeUnit.SECONDS)) throw new IllegalStateException("no connection to " + connect);
    return z;
  }

  private static Map<String, Object> run(String cmd) throws Exception {
    String workload = str(cmd, "workload");
    switch (workload) {
      case "getData": {
        String path = str(cmd, "path");
        return raw((int) num(cmd, "count"), (int) num(cmd, "outstanding"), done -> zk.getData(path, false, (rc, p, ctx, data, stat) -> done.accept(rc), null));
      }
      case "setData": {
        String path = str(cmd, "path");
        byte[] data = new byte[(int) num(cmd, "size")];
        Arrays.fill(data, (byte) 1);
        return raw((int) num(cmd, "count"), (int) num(cmd, "outstanding"), done -> zk.setData(path, data, -1, (rc, p, ctx, stat) -> done.accept(rc), null));
      }
      case "exists": {
        String path = str(cmd, "path");
        return raw((int) num(cmd, "count"), (int) num(cmd, "outstanding"), done -> zk.exists(path, false, (rc, p, ctx, stat) -> done.accept(rc == -101 ? 0 : rc), null));
      }
      case "createDelete":
        return createDelete(str(cmd, "path"), (int) num(cmd, "count"));
      case "connect":
        return connects((int) num(cmd, "count"));
      case "mutexUncontended":
        return uncontended(str(cmd, "path"), (int) num(cmd, "count"), false);
      case "writeLockUncontended":
        return uncontended(str(cmd, "path"), (int) num(cmd, "count"), true);
      case "mutexContended":
        return contended(str(cmd, "path"), (int) num(cmd, "sessions"), num(cmd, "seconds"));
      case "readWrite":
        return readWrite(str(cmd, "path"), (int) num(cmd, "readers"), (int) num(cmd, "writers"), num(cmd, "seconds"));
      default:
        throw new IllegalArgumentException("unknown workload " + workload);
    }
  }

  interface Op {
    void start(java.util.function.IntConsumer done);
  }

  /** count ops with `outstanding` in flight (async API); latencies only with one outstanding. */
  private static Map<String, Object> raw(int count, int outstanding, Op op) throws Exception {
    double[] lat = new double[outstanding == 1 ? count : 0];
    AtomicReference<Integer> failure = new AtomicReference<>();
    Semaphore slots = new Semaphore(outstanding);
    long cpu0 = cpu();
    long t0 = System.nanoTime();
    for (int i = 0; i < count; i++) {
      slots.acquire();
      long s = System.nanoTime();
      final int at = i;
      op.start(rc -> {
        if (rc != 0) failure.compareAndSet(null, rc);
        if (lat.length > 0) lat[at] = (System.nanoTime() - s) / 1000.0;
        slots.release();
      });
    }
    slots.acquire(outstanding);
    long t1 = System.nanoTime();
    long cpu1 = cpu();
    if (failure.get() != null) throw new IllegalStateException("ZooKeeper error code " + failure.get());
    return sample(count, t1 - t0, lat, cpu1 - cpu0, null);
  }

  private static Map<String, Object> createDelete(String path, int count) throws Exception {
    double[] lat = new double[count];
    double[] creates = new double[count];
    double[] deletes = new double[count];
    long cpu0 = cpu();
    long t0 = System.nanoTime();
    for (int i = 0; i < count; i++) {
      long a = System.nanoTime();
      zk.create(path, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL);
      long b = System.nanoTime();
      zk.delete(path, -1);
      long c = System.nanoTime();
      creates[i] = (b - a) / 1000.0;
      deletes[i] = (c - b) / 1000.0;
      lat[i] = (c - a) / 1000.0;
    }
    long t1 = System.nanoTime();
    Map<String, Object> metrics = new LinkedHashMap<>();
    metrics.put("createP50Us", median(creates));
    metrics.put("deleteP50Us", median(deletes));
    return sample(count, t1 - t0, lat, cpu() - cpu0, metrics);
  }

  private static Map<String, Object> connects(int count) throws Exception {
    double[] lat = new double[count];
    long cpu0 = cpu();
    long t0 = System.nanoTime();
    for (int i = 0; i < count; i++) {
      long a = System.nanoTime();
      ZooKeeper z = open();
      lat[i] = (System.nanoTime() - a) / 1000.0;
      z.close();
    }
    return sample(count, System.nanoTime() - t0, lat, cpu() - cpu0, null);
  }

  private static CuratorFramework curator() throws InterruptedException {
    CuratorFramework c = CuratorFrameworkFactory.builder().connectString(connect).sessionTimeoutMs(SESSION_TIMEOUT).retryPolicy(new ExponentialBackoffRetry(100, 3)).build();
    c.start();
    if (!c.blockUntilConnected(30, TimeUnit.SECONDS)) throw new IllegalStateException("Curator: no connection to " + connect);
    return c;
  }

  private static List<CuratorFramework> curators(int n) throws Exception {
    List<CuratorFramework> list = new ArrayList<>();
    for (int i = 0; i < n; i++) list.add(curator());
    return list;
  }

  private static void closeAll(List<CuratorFramework> list) {
    for (CuratorFramework c : list) c.close();
  }

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
        lat[i] = (System.nanoTime() - a) / 1000.0;
        lock.release();
      }
      return sample(count, System.nanoTime() - t0, lat, cpu() - cpu0, null);
    } finally {
      c.close();
    }
  }

  /** Sessions loop acquire/release (no hold) on one path: hand-offs and the gap from a release call to the next acquire returning. */
  private static Map<String, Object> contended(String path, int sessions, double seconds) throws Exception {
    List<CuratorFramework> clients = curators(sessions);
    try {
      Object shared = new Object();
      List<Double> gaps = new ArrayList<>();
      List<Double> releases = new ArrayList<>();
      long[] lastRelease = { -1 };
      CyclicBarrier barrier = new CyclicBarrier(sessions + 1);
      long[] window = new long[2];
      List<Thread> threads = new ArrayList<>();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      for (CuratorFramework c : clients) {
        InterProcessMutex lock = new InterProcessMutex(c, path);
        Thread t = new Thread(() -> {
          try {
            barrier.await();
            long deadline = window[1];
            while (System.nanoTime() < deadline) {
              lock.acquire();
              long acquired = System.nanoTime();
              long releaseCall;
              synchronized (shared) {
                if (acquired < deadline && lastRelease[0] >= 0) gaps.add((acquired - lastRelease[0]) / 1000.0);
                releaseCall = lastRelease[0] = System.nanoTime();
              }
              lock.release();
              if (acquired < deadline) synchronized (shared) {
                releases.add((System.nanoTime() - releaseCall) / 1000.0);
              }
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        });
        t.start();
        threads.add(t);
      }
      window[0] = System.nanoTime();
      window[1] = window[0] + (long) (seconds * 1e9);
      long cpu0 = cpu();
      barrier.await();
      for (Thread t : threads) t.join();
      long cpu1 = cpu();
      if (failure.get() != null) throw new IllegalStateException(failure.get());
      double[] lat = gaps.stream().mapToDouble(Double::doubleValue).toArray();
      Map<String, Object> metrics = new LinkedHashMap<>();
      metrics.put("releaseP50Us", median(releases.stream().mapToDouble(Double::doubleValue).toArray()));
      return sample(lat.length, (long) (seconds * 1e9), lat, cpu1 - cpu0, metrics);
    } finally {
      closeAll(clients);
    }
  }

  private static Map<String, Object> readWrite(String path, int readers, int writers, double seconds) throws Exception {
    List<CuratorFramework> clients = curators(readers + writers);
    try {
      long[] counts = new long[2];
      CyclicBarrier barrier = new CyclicBarrier(readers + writers + 1);
      long[] deadline = new long[1];
      List<Thread> threads = new ArrayList<>();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      for (int i = 0; i < clients.size(); i++) {
        boolean writer = i >= readers;
        InterProcessReadWriteLock rw = new InterProcessReadWriteLock(clients.get(i), path);
        InterProcessLock lock = writer ? rw.writeLock() : rw.readLock();
        Thread t = new Thread(() -> {
          try {
            barrier.await();
            while (System.nanoTime() < deadline[0]) {
              lock.acquire();
              if (System.nanoTime() < deadline[0]) synchronized (counts) {
                counts[writer ? 1 : 0]++;
              }
              lock.release();
            }
          } catch (Throwable e) {
            failure.compareAndSet(null, e);
          }
        });
        t.start();
        threads.add(t);
      }
      deadline[0] = System.nanoTime() + (long) (seconds * 1e9);
      long cpu0 = cpu();
      barrier.await();
      for (Thread t : threads) t.join();
      long cpu1 = cpu();
      if (failure.get() != null) throw new IllegalStateException(failure.get());
      Map<String, Object> metrics = new LinkedHashMap<>();
      metrics.put("readsPerSec", counts[0] / seconds);
      metrics.put("writesPerSec", counts[1] / seconds);
      return sample((int) (counts[0] + counts[1]), (long) (seconds * 1e9), new double[0], cpu1 - cpu0, metrics);
    } finally {
      closeAll(clients);
    }
  }

  private static long cpu() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private static double median(double[] v) {
    double[] s = v.clone();
    Arrays.sort(s);
    return s.length == 0 ? Double.NaN : s[Math.max(0, (int) Math.ceil(0.5 * s.length) - 1)];
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

  // A little JSON: the commands are flat objects of strings and numbers.
  private static String str(String json, String key) {
    Matcher m = Pattern.compile("\"" + key + "\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"").matcher(json);
    if (!m.find()) throw new IllegalArgumentException("missing " + key);
    return m.group(1).replace("\\\"", "\"").replace("\\\\", "\\");
  }

  private static long num(String json, String key) {
    return (long) dbl(json, key);
  }

  private static double dbl(String json, String key) {
    Matcher m = Pattern.compile("\"" + key + "\"\\s*:\\s*(-?[0-9.eE+-]+)").matcher(json);
    if (!m.find()) throw new IllegalArgumentException("missing " + key);
    return Double.parseDouble(m.group(1));
  }

  private static String json(Object v) {
    StringBuilder b = new StringBuilder();
    write(b, v);
    return b.toString();
  }

  @SuppressWarnings("unchecked")
  private static void write(StringBuilder b, Object v) {
    if (v == null) b.append("null");
    else if (v instanceof String s) b.append('"').append(s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")).append('"');
    else if (v instanceof Boolean || v instanceof Integer || v instanceof Long) b.append(v);
    else if (v instanceof Double d) b.append(d.isNaN() || d.isInfinite() ? "null" : String.format(java.util.Locale.ROOT, "%.3f", d));
    else if (v instanceof double[] a) {
      b.append('[');
      for (int i = 0; i < a.length; i++) {
        if (i > 0) b.append(',');
        b.append(String.format(java.util.Locale.ROOT, "%.1f", a[i]));
      }
      b.append(']');
    } else if (v instanceof Map<?, ?> m) {
      b.append('{');
      boolean first = true;
      for (Map.Entry<String, Object> e : ((Map<String, Object>) m).entrySet()) {
        if (!first) b.append(',');
        first = false;
        write(b, e.getKey());
        b.append(':');
        write(b, e.getValue());
      }
      b.append('}');
    } else b.append('"').append(v).append('"');
  }
}
