// The Curator side of the tree-cache workloads (issue 14), driven by bench/workloads/cache.ts;
// the Node side is TreeCache, measured in the bench process itself.
//
//   java -cp <curator jars>:<classes> CacheBenchDriver <connect> [<session timeout ms>]
//
// Opens two Curator clients (two sessions: the cache's and a writer's), prints "READY" once both
// are connected, then runs one command per stdin line and answers each with one line:
//   load <path>              a CuratorCache on <path>: start() until the initialized callback;
//                            prints LOADED {"loadUs":..,"cpuUs":..,"size":..,"heapBytes":..}: the time, the
//                            nodes cached, the JVM's CPU time over the load, and the heap the cache holds (used heap after
//                            System.gc() with the cache open, less the same before it was built);
//                            the cache is then closed.
//   latency <path> <count>   a CuratorCache on <path> (loaded first, not timed); <count> times,
//                            one after another: the writer's setData of <path> with a new value,
//                            timed from the call until the cache's change listener sees that
//                            value; prints LATENCY {"latenciesUs":[..],"seconds":..,"cpuUs":..}.
//   hold <path> <seconds> <nodes> [tree]  like load (with `tree`, Curator's older TreeCache
//                            recipe instead of CuratorCache), but the cache stays open for
//                            heldlatency (a big tree is loaded once for both); waits up to <seconds> for the
//                            initialized callback and then for the cache to hold <nodes> nodes
//                            (the callback may come early: a request that failed, e.g. on a
//                            connection loss, counts as done; one that gains no node for 30 s
//                            is not waited for further). Prints HELD {"loadUs":..,"initUs":..,
//                            "cpuUs":..,"size":..,"heapBytes":..,"initialized":..,"complete":..,
//                            "suspended":..,"lost":..}: loadUs until complete (or the bound),
//                            initUs until the callback, size what it holds then, and the
//                            connection states the cache's client went through meanwhile. A
//                            cache not complete is closed.
//   heldlatency <kind> <node> <count>  as latency, on the held cache of <kind> (cache or tree),
//                            writing <node> (a node of its tree).
//   release                  closes the held caches; prints RELEASED.
// A failed command prints ERROR <message>. When stdin ends both clients are closed.
//
// Only the protocol lines go to stdout; Curator logs nowhere (slf4j-nop on the classpath).

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.TreeCache;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class CacheBenchDriver {
  /** How long a connect, a load or one change may take before the command fails. */
  private static final long WAIT_S = 60;
  /** How long hold waits, after the initialized callback, for a cache that gains no node. */
  private static final long STALL_S = 30;
  /** The value (and the node) a latency run waits for, and the latch its cache's listener counts down. */
  private static final AtomicReference<String> awaited = new AtomicReference<>();
  private static final AtomicReference<String> awaitedPath = new AtomicReference<>();
  private static final AtomicReference<CountDownLatch> seen = new AtomicReference<>();
  /** Connection states of the cache's client (SUSPENDED, LOST) since it started. */
  private static final java.util.concurrent.atomic.AtomicInteger suspended = new java.util.concurrent.atomic.AtomicInteger();
  private static final java.util.concurrent.atomic.AtomicInteger lost = new java.util.concurrent.atomic.AtomicInteger();
  /** The caches `hold` keeps open, by kind ("cache": CuratorCache, "tree": TreeCache). */
  private static final java.util.Map<String, java.io.Closeable> held = new java.util.HashMap<>();

  public static void main(String[] args) throws Exception {
    if (args.length != 1 && args.length != 2) {
      System.err.println("usage: CacheBenchDriver <connect> [<session timeout ms>]");
      System.exit(2);
    }
    int sessionMs = args.length == 2 ? Integer.parseInt(args[1]) : 10_000;
    CuratorFramework cacheClient = client(args[0], sessionMs);
    CuratorFramework writer = client(args[0], sessionMs);
    cacheClient.getConnectionStateListenable().addListener((c, state) -> {
      if (state == org.apache.curator.framework.state.ConnectionState.SUSPENDED) suspended.incrementAndGet();
      if (state == org.apache.curator.framework.state.ConnectionState.LOST) lost.incrementAndGet();
    });
    System.out.println("READY");
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      String[] words = line.trim().split(" ");
      try {
        if (words.length == 2 && words[0].equals("load")) {
          load(cacheClient, words[1]);
        } else if (words.length == 3 && words[0].equals("latency")) {
          latency(cacheClient, writer, words[1], Integer.parseInt(words[2]));
        } else if ((words.length == 4 || words.length == 5) && words[0].equals("hold")) {
          hold(cacheClient, words[1], Long.parseLong(words[2]), Integer.parseInt(words[3]), words.length == 5 && words[4].equals("tree"));
        } else if (words.length == 4 && words[0].equals("heldlatency")) {
          if (!held.containsKey(words[1])) throw new IllegalStateException("no " + words[1] + " held");
          measure(writer, words[2], Integer.parseInt(words[3]));
        } else if (words.length == 1 && words[0].equals("release")) {
          releaseAll();
          System.out.println("RELEASED");
        } else {
          throw new IllegalArgumentException("unknown command: " + line);
        }
      } catch (Exception | OutOfMemoryError e) {
        System.out.println("ERROR " + String.valueOf(e).replace('\n', ' '));
      }
      System.out.flush();
    }
    releaseAll();
    cacheClient.close();
    writer.close();
    System.exit(0);
  }

  private static CuratorFramework client(String connect, int sessionMs) throws Exception {
    CuratorFramework c = CuratorFrameworkFactory.builder().connectString(connect).sessionTimeoutMs(sessionMs).retryPolicy(new ExponentialBackoffRetry(100, 3)).build();
    c.start();
    if (!c.blockUntilConnected((int) WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("not connected within " + WAIT_S + " s");
    return c;
  }

  private static void load(CuratorFramework client, String path) throws Exception {
    long heap0 = JvmMeter.usedHeap();
    CountDownLatch initialized = new CountDownLatch(1);
    CuratorCache cache = CuratorCache.build(client, path);
    cache.listenable().addListener(CuratorCacheListener.builder().forInitialized(initialized::countDown).build());
    long cpu0 = JvmMeter.cpuUs();
    long t0 = System.nanoTime();
    cache.start();
    if (!initialized.await(WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("not initialized within " + WAIT_S + " s");
    long loadUs = (System.nanoTime() - t0) / 1000;
    long cpu = JvmMeter.cpuUs() - cpu0;
    int size = cache.size();
    long heap = JvmMeter.usedHeap() - heap0;
    System.out.println("LOADED {\"loadUs\":" + loadUs + ",\"cpuUs\":" + cpu + ",\"size\":" + size + ",\"heapBytes\":" + heap + "}");
    cache.close();
  }

  /** A cache on `path` with the latency runs' listener and one that counts the initialized callback down. */
  private static CuratorCache build(CuratorFramework client, String path, CountDownLatch initialized) {
    CuratorCache cache = CuratorCache.build(client, path);
    cache.listenable().addListener(CuratorCacheListener.builder()
        .forInitialized(initialized::countDown)
        .forChanges((before, after) -> changed(after))
        .build());
    return cache;
  }

  private static void changed(ChildData after) {
    String want = awaited.get();
    if (want != null && after.getPath().equals(awaitedPath.get()) && want.equals(new String(after.getData(), StandardCharsets.UTF_8))) seen.get().countDown();
  }

  private static void releaseAll() throws java.io.IOException {
    for (java.io.Closeable c : held.values()) c.close();
    held.clear();
  }

  private static void hold(CuratorFramework client, String path, long seconds, int nodes, boolean tree) throws Exception {
    String kind = tree ? "tree" : "cache";
    java.io.Closeable previous = held.remove(kind);
    if (previous != null) previous.close();
    long heap0 = JvmMeter.usedHeap();
    int suspended0 = suspended.get();
    int lost0 = lost.get();
    CountDownLatch initialized = new CountDownLatch(1);
    java.io.Closeable cache;
    java.util.function.IntSupplier size;
    Runnable start;
    if (tree) {
      // TreeCache has no size(): its NODE_ADDED and NODE_REMOVED events (the load's too) count.
      java.util.concurrent.atomic.AtomicInteger count = new java.util.concurrent.atomic.AtomicInteger();
      TreeCache t = TreeCache.newBuilder(client, path).build();
      t.getListenable().addListener((c, event) -> {
        switch (event.getType()) {
          case NODE_ADDED: count.incrementAndGet(); break;
          case NODE_REMOVED: count.decrementAndGet(); break;
          case NODE_UPDATED: changed(event.getData()); break;
          case INITIALIZED: initialized.countDown(); break;
          default: break;
        }
      });
      cache = t;
      size = count::get;
      start = () -> {
        try {
          t.start();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      };
    } else {
      CuratorCache c = build(client, path, initialized);
      cache = c;
      size = c::size;
      start = c::start;
    }
    long cpu0 = JvmMeter.cpuUs();
    long t0 = System.nanoTime();
    long deadline = t0 + seconds * 1_000_000_000L;
    boolean done = false;
    boolean complete = false;
    long initUs = -1;
    try {
      start.run();
      // Until the callback, the bound, or the session LOST (a server that died: no use waiting).
      while (!(done = initialized.await(1, TimeUnit.SECONDS)) && System.nanoTime() < deadline && lost.get() == lost0) {
        // waiting
      }
      initUs = (System.nanoTime() - t0) / 1000;
      // After the callback, wait for the rest; a cache that gains nothing for STALL_S is not waited for.
      int last = size.getAsInt();
      long lastChange = System.nanoTime();
      while (done && last < nodes && System.nanoTime() < deadline && System.nanoTime() - lastChange < STALL_S * 1_000_000_000L) {
        Thread.sleep(50);
        int now = size.getAsInt();
        if (now != last) {
          last = now;
          lastChange = System.nanoTime();
        }
      }
      complete = size.getAsInt() >= nodes;
    } catch (OutOfMemoryError e) {
      done = false;
    }
    long loadUs = (System.nanoTime() - t0) / 1000;
    long cpu = JvmMeter.cpuUs() - cpu0;
    int reached = size.getAsInt();
    long heap = JvmMeter.usedHeap() - heap0;
    if (complete) held.put(kind, cache);
    else cache.close();
    System.out.println("HELD {\"loadUs\":" + loadUs + ",\"initUs\":" + initUs + ",\"cpuUs\":" + cpu + ",\"size\":" + reached + ",\"heapBytes\":" + heap
        + ",\"initialized\":" + done + ",\"complete\":" + complete + ",\"suspended\":" + (suspended.get() - suspended0) + ",\"lost\":" + (lost.get() - lost0) + "}");
  }

  private static void latency(CuratorFramework client, CuratorFramework writer, String path, int count) throws Exception {
    CountDownLatch initialized = new CountDownLatch(1);
    CuratorCache cache = build(client, path, initialized);
    cache.start();
    try {
      if (!initialized.await(WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("not initialized within " + WAIT_S + " s");
      measure(writer, path, count);
    } finally {
      cache.close();
    }
  }

  /**
   * `count` changes one after another: the writer's setData of `path`, timed until the listener
   * of the open cache sees that value; prints LATENCY.
   */
  private static void measure(CuratorFramework writer, String path, int count) throws Exception {
    long[] latencies = new long[count];
    long cpu0 = JvmMeter.cpuUs();
    long start = System.nanoTime();
    awaitedPath.set(path);
    try {
      for (int i = 0; i < count; i++) {
        String value = "v" + i + "-" + start;
        CountDownLatch latch = new CountDownLatch(1);
        seen.set(latch);
        awaited.set(value);
        long t0 = System.nanoTime();
        writer.setData().forPath(path, value.getBytes(StandardCharsets.UTF_8));
        if (!latch.await(WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("change " + i + " not seen within " + WAIT_S + " s");
        latencies[i] = (System.nanoTime() - t0) / 1000;
      }
    } finally {
      awaited.set(null);
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    long cpu = JvmMeter.cpuUs() - cpu0;
    StringBuilder out = new StringBuilder("LATENCY {\"latenciesUs\":[");
    for (int i = 0; i < count; i++) out.append(i == 0 ? "" : ",").append(latencies[i]);
    out.append("],\"seconds\":").append(seconds).append(",\"cpuUs\":").append(cpu).append("}");
    System.out.println(out);
  }
}
