// The Curator side of the tree-cache workloads (issue 14), driven by bench/workloads/cache.ts;
// the Node side is TreeCache, measured in the bench process itself.
//
//   java -cp <curator jars>:<classes> CacheBenchDriver <connect>
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

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class CacheBenchDriver {
  /** How long a connect, a load or one change may take before the command fails. */
  private static final long WAIT_S = 60;

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: CacheBenchDriver <connect>");
      System.exit(2);
    }
    CuratorFramework cacheClient = client(args[0]);
    CuratorFramework writer = client(args[0]);
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
        } else {
          throw new IllegalArgumentException("unknown command: " + line);
        }
      } catch (Exception e) {
        System.out.println("ERROR " + String.valueOf(e).replace('\n', ' '));
      }
      System.out.flush();
    }
    cacheClient.close();
    writer.close();
    System.exit(0);
  }

  private static CuratorFramework client(String connect) throws Exception {
    CuratorFramework c = CuratorFrameworkFactory.builder().connectString(connect).sessionTimeoutMs(10_000).retryPolicy(new ExponentialBackoffRetry(100, 3)).build();
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

  private static void latency(CuratorFramework client, CuratorFramework writer, String path, int count) throws Exception {
    CountDownLatch initialized = new CountDownLatch(1);
    AtomicReference<String> awaited = new AtomicReference<>();
    AtomicReference<CountDownLatch> seen = new AtomicReference<>();
    CuratorCache cache = CuratorCache.build(client, path);
    cache.listenable().addListener(CuratorCacheListener.builder()
        .forInitialized(initialized::countDown)
        .forChanges((before, after) -> {
          String want = awaited.get();
          if (want != null && after.getPath().equals(path) && want.equals(new String(after.getData(), StandardCharsets.UTF_8))) seen.get().countDown();
        })
        .build());
    cache.start();
    try {
      if (!initialized.await(WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("not initialized within " + WAIT_S + " s");
      long[] latencies = new long[count];
      long cpu0 = JvmMeter.cpuUs();
      long start = System.nanoTime();
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
      double seconds = (System.nanoTime() - start) / 1e9;
      long cpu = JvmMeter.cpuUs() - cpu0;
      StringBuilder out = new StringBuilder("LATENCY {\"latenciesUs\":[");
      for (int i = 0; i < count; i++) out.append(i == 0 ? "" : ",").append(latencies[i]);
      out.append("],\"seconds\":").append(seconds).append(",\"cpuUs\":").append(cpu).append("}");
      System.out.println(out);
    } finally {
      cache.close();
    }
  }
}
