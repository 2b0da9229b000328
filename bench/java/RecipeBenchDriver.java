// The Curator side of the recipe workloads (issue 23), driven by bench/workloads/recipes.ts: Curator's
// DistributedQueue and DistributedAtomicLong; DiscoveryBenchDriver adds curator-x-discovery's
// ServiceDiscovery on top of these commands when that jar is installed.
//
//   java -cp <curator jars>:<classes> RecipeBenchDriver <connect>
//
// Opens one Curator client, prints "READY" once it is connected, then runs one command per stdin line
// and answers each with one line, RESULT {"ops":..,"seconds":..,"cpuUs":..,"latenciesUs":[..],"metrics":{..}}
// (cpuUs: the whole JVM's CPU over the measurement), or RESULT ERROR <message> when it failed:
//   put <path> <count>                  a producer-only DistributedQueue (putInBackground(false): each
//                                       put returns once its node exists); <count> puts of "item-<i>",
//                                       one after another, each timed.
//   take <path> <lockPath|-> <count>    a consuming DistributedQueue (in safe mode with a lock path)
//                                       started on a queue already holding <count> items; timed from
//                                       start() until the consumer has been handed the last one. Latencies:
//                                       the gaps between items handed over (the first from start()).
//   increment <path> <lockPath> <sessions> <seconds>
//                                       <sessions> Curator clients, a thread and a DistributedAtomicLong
//                                       each (RetryNTimes(10, 10 ms), PromotedToLock on <lockPath> with a
//                                       30 s timeout and the same retries), looping increment() for
//                                       <seconds> after a common start. ops: increments succeeded inside the
//                                       window; metrics optimisticTriesPerIncrement, promotedShare (the share
//                                       that took the mutex), failed (not succeeded), lost (the counter's
//                                       growth less every success: 0 unless an increment was lost).
// When stdin ends the client is closed. Only the protocol lines go to stdout (slf4j-nop).

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.atomic.PromotedToLock;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.retry.RetryNTimes;

public final class RecipeBenchDriver {
  /** How long a connect or a whole take may take before the command fails. */
  static final long WAIT_S = 60;

  private RecipeBenchDriver() {}

  /** Commands a driver adds to these (DiscoveryBenchDriver): true when it handled the line. */
  interface Extra {
    boolean handle(CuratorFramework client, String[] words) throws Exception;
  }

  static final QueueSerializer<String> UTF8 = new QueueSerializer<String>() {
    public byte[] serialize(String item) {
      return item.getBytes(StandardCharsets.UTF_8);
    }

    public String deserialize(byte[] bytes) {
      return new String(bytes, StandardCharsets.UTF_8);
    }
  };

  public static void main(String[] args) throws Exception {
    serve(args, null);
  }

  /** Connects, prints READY, then answers stdin's commands (this driver's, then `extra`'s). */
  static void serve(String[] args, Extra extra) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: RecipeBenchDriver <connect>");
      System.exit(2);
    }
    String connect = args[0];
    CuratorFramework client = client(connect);
    System.out.println("READY");
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      String[] w = line.trim().split(" ");
      try {
        if (w.length == 3 && w[0].equals("put")) put(client, w[1], Integer.parseInt(w[2]));
        else if (w.length == 4 && w[0].equals("take")) take(client, w[1], w[2].equals("-") ? null : w[2], Integer.parseInt(w[3]));
        else if (w.length == 5 && w[0].equals("increment")) increment(connect, w[1], w[2], Integer.parseInt(w[3]), Double.parseDouble(w[4]));
        else if (extra == null || !extra.handle(client, w)) throw new IllegalArgumentException("unknown command: " + line);
      } catch (Exception e) {
        System.out.println("RESULT ERROR " + String.valueOf(e).replace('\n', ' '));
      }
      System.out.flush();
    }
    client.close();
    System.exit(0);
  }

  static CuratorFramework client(String connect) throws Exception {
    CuratorFramework c = CuratorFrameworkFactory.builder().connectString(connect).sessionTimeoutMs(10_000).retryPolicy(new ExponentialBackoffRetry(100, 3)).build();
    c.start();
    if (!c.blockUntilConnected((int) WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("not connected within " + WAIT_S + " s");
    return c;
  }

  /** Prints one RESULT line. `metrics` is a JSON object's members (`"a":1,"b":2`) or empty. */
  static void result(int ops, double seconds, long cpuUs, long[] latenciesUs, int latencies, String metrics) {
    StringBuilder out = new StringBuilder("RESULT {\"ops\":").append(ops).append(",\"seconds\":").append(seconds).append(",\"cpuUs\":").append(cpuUs).append(",\"latenciesUs\":[");
    for (int i = 0; i < latencies; i++) out.append(i == 0 ? "" : ",").append(latenciesUs[i]);
    out.append("],\"metrics\":{").append(metrics).append("}}");
    System.out.println(out);
  }

  /** One timed step of {@link #timeEach}. */
  interface Step {
    void run(int i) throws Exception;
  }

  /** Runs `step` `count` times, one after another, each timed; prints the RESULT. */
  static void timeEach(int count, Step step) throws Exception {
    long[] latencies = new long[count];
    long cpu0 = JvmMeter.cpuUs();
    long start = System.nanoTime();
    for (int i = 0; i < count; i++) {
      long t0 = System.nanoTime();
      step.run(i);
      latencies[i] = (System.nanoTime() - t0) / 1000;
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    result(count, seconds, JvmMeter.cpuUs() - cpu0, latencies, count, "");
  }

  private static void put(CuratorFramework client, String path, int count) throws Exception {
    DistributedQueue<String> queue = QueueBuilder.builder(client, null, UTF8, path).putInBackground(false).buildQueue();
    queue.start();
    try {
      timeEach(count, (i) -> queue.put("item-" + i));
    } finally {
      queue.close();
    }
  }

  private static void take(CuratorFramework client, String path, String lockPath, int count) throws Exception {
    long[] handed = new long[count];
    AtomicInteger taken = new AtomicInteger();
    CountDownLatch done = new CountDownLatch(count);
    QueueConsumer<String> consumer = new QueueConsumer<String>() {
      public void consumeMessage(String message) {
        int i = taken.getAndIncrement();
        if (i < count) handed[i] = System.nanoTime();
        done.countDown();
      }

      public void stateChanged(CuratorFramework c, ConnectionState state) {}
    };
    QueueBuilder<String> builder = QueueBuilder.builder(client, consumer, UTF8, path);
    if (lockPath != null) builder = builder.lockPath(lockPath);
    DistributedQueue<String> queue = builder.buildQueue();
    long cpu0 = JvmMeter.cpuUs();
    long start = System.nanoTime();
    queue.start();
    try {
      if (!done.await(WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException(taken.get() + " of " + count + " items taken within " + WAIT_S + " s");
      double seconds = (handed[count - 1] - start) / 1e9;
      long cpu = JvmMeter.cpuUs() - cpu0;
      long[] gaps = new long[count];
      for (int i = 0; i < count; i++) gaps[i] = (handed[i] - (i == 0 ? start : handed[i - 1])) / 1000;
      result(count, seconds, cpu, gaps, count, "");
    } finally {
      queue.close();
    }
  }

  private static void increment(String connect, String path, String lockPath, int sessions, double seconds) throws Exception {
    List<CuratorFramework> clients = new ArrayList<>();
    try {
      for (int i = 0; i < sessions; i++) clients.add(client(connect));
      List<DistributedAtomicLong> counters = new ArrayList<>();
      for (CuratorFramework c : clients) {
        PromotedToLock promoted = PromotedToLock.builder().lockPath(lockPath).timeout(30, TimeUnit.SECONDS).retryPolicy(new RetryNTimes(10, 10)).build();
        counters.add(new DistributedAtomicLong(c, path, new RetryNTimes(10, 10), promoted));
      }
      long before = counters.get(0).get().postValue();
      CountDownLatch go = new CountDownLatch(1);
      long[][] latencies = new long[sessions][];
      int[] ops = new int[sessions];
      int[] all = new int[sessions];
      long[] tries = new long[sessions];
      int[] promotedCount = new int[sessions];
      int[] failed = new int[sessions];
      Exception[] errors = new Exception[sessions];
      long windowNs = (long) (seconds * 1e9);
      long[] start = new long[1];
      List<Thread> threads = new ArrayList<>();
      for (int s = 0; s < sessions; s++) {
        final int me = s;
        Thread t = new Thread(() -> {
          long[] lat = new long[1024];
          try {
            go.await();
            long deadline = start[0] + windowNs;
            while (System.nanoTime() < deadline) {
              long t0 = System.nanoTime();
              AtomicValue<Long> r = counters.get(me).increment();
              long t1 = System.nanoTime();
              if (r.succeeded()) all[me]++;
              else failed[me]++;
              if (t1 >= deadline || !r.succeeded()) continue;
              if (ops[me] == lat.length) lat = java.util.Arrays.copyOf(lat, lat.length * 2);
              lat[ops[me]++] = (t1 - t0) / 1000;
              tries[me] += r.getStats().getOptimisticTries();
              if (r.getStats().getPromotedLockTries() > 0) promotedCount[me]++;
            }
          } catch (Exception e) {
            errors[me] = e;
          }
          latencies[me] = lat;
        });
        t.start();
        threads.add(t);
      }
      long cpu0 = JvmMeter.cpuUs();
      start[0] = System.nanoTime();
      go.countDown();
      for (Thread t : threads) t.join();
      long cpu = JvmMeter.cpuUs() - cpu0;
      for (Exception e : errors) if (e != null) throw e;
      long after = counters.get(0).get().postValue();
      int total = 0;
      int succeededAll = 0;
      int failedAll = 0;
      long triesAll = 0;
      int promotedAll = 0;
      for (int s = 0; s < sessions; s++) {
        total += ops[s];
        succeededAll += all[s];
        failedAll += failed[s];
        triesAll += tries[s];
        promotedAll += promotedCount[s];
      }
      long[] merged = new long[total];
      int k = 0;
      for (int s = 0; s < sessions; s++) for (int i = 0; i < ops[s]; i++) merged[k++] = latencies[s][i];
      String metrics = "\"optimisticTriesPerIncrement\":" + (total == 0 ? 0 : (double) triesAll / total) + ",\"promotedShare\":" + (total == 0 ? 0 : (double) promotedAll / total)
          + ",\"failed\":" + failedAll + ",\"lost\":" + ((after - before) - succeededAll);
      result(total, seconds, cpu, merged, total, metrics);
    } finally {
      for (CuratorFramework c : clients) c.close();
    }
  }
}
