// The Curator side of the lock scale curves (issue 16), driven by bench/workloads/scale.ts; the
// Node side is bench/workloads/scale-child.ts. One repetition per process, so the heap and the
// resident memory a point adds are its own (a JVM keeps the pages it has once touched).
//
//   java -cp <curator jars>:<classes> ScaleLockDriver <connect> waiters <path> <count> <sessions>
//   java -cp <curator jars>:<classes> ScaleLockDriver <connect> locks <path> <count> <inFlight>
//
// waiters: <sessions> Curator clients; one InterProcessMutex on <path> held by the first, then
//   <count> threads, thread i blocking in acquire() of its own InterProcessMutex on client
//   i % sessions, started 100 at a time (the next 100 once the queue holds the previous ones).
//   Once <path> has <count> + 1 children the holder releases, and each waiter
//   releases as soon as it holds: the figure is the hand-offs, from the holder's release until
//   the last waiter has released.
// locks: one Curator client; <count> InterProcessMutexes on <path>/0 .. <path>/<count - 1>,
//   acquired by <inFlight> threads (each takes the next index until none is left) and all held at
//   once; then each thread releases its own (Curator binds a lock to the thread that took it).
//
// Prints one line: RESULT {"ops":..,"seconds":..,"cpuUs":..,"heapBytes":..,"rssBytes":..,"threads":..}
// or ERROR <message>. heapBytes is the used heap after collections with everything queued (held),
// less the same before the first lock object was made; rssBytes the same for the process's
// resident set (VmRSS: thread stacks count there, not in the heap); threads the JVM's live
// threads at that moment. cpuUs is the JVM's CPU over the timed part.
//
// Only the protocol line goes to stdout; Curator logs nowhere (slf4j-nop on the classpath).

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class ScaleLockDriver {
  /** How long a connect may take. */
  private static final long CONNECT_WAIT_S = 60;
  /** A point's time limit: a base plus this much per lock or waiter (10,000 waiters list a long queue on every hand-off). */
  private static final long WAIT_BASE_MS = 120_000;
  private static final long WAIT_PER_ITEM_MS = 30;
  /** Waiters are queued this many at a time, as ours are (bench/workloads/scale-child.ts says why). */
  private static final int QUEUE_BATCH = 100;

  public static void main(String[] args) {
    if (args.length != 5) {
      System.err.println("usage: ScaleLockDriver <connect> waiters|locks <path> <count> <sessions|inFlight>");
      System.exit(2);
    }
    List<CuratorFramework> clients = new ArrayList<>();
    int status = 0;
    try {
      int count = Integer.parseInt(args[3]);
      int k = Integer.parseInt(args[4]);
      String result = switch (args[1]) {
        case "waiters" -> waiters(args[0], clients, args[2], count, k);
        case "locks" -> locks(args[0], clients, args[2], count, k);
        default -> throw new IllegalArgumentException("unknown command " + args[1]);
      };
      System.out.println("RESULT " + result);
    } catch (Throwable t) {
      StringBuilder b = new StringBuilder(String.valueOf(t));
      for (Throwable c = t.getCause(); c != null && c != c.getCause(); c = c.getCause()) b.append("; caused by ").append(c);
      System.out.println("ERROR " + b.toString().replace('\n', ' '));
      status = 1;
    }
    System.out.flush();
    // Closing the sessions ends their ephemeral nodes (and wakes any waiter left blocked).
    for (CuratorFramework c : clients) {
      try {
        c.close();
      } catch (Exception e) {
        // exiting anyway
      }
    }
    Runtime.getRuntime().halt(status);
  }

  private static CuratorFramework client(String connect, List<CuratorFramework> clients) throws Exception {
    CuratorFramework c = CuratorFrameworkFactory.builder().connectString(connect).sessionTimeoutMs(10_000).retryPolicy(new ExponentialBackoffRetry(100, 3)).build();
    clients.add(c);
    c.start();
    if (!c.blockUntilConnected((int) CONNECT_WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("not connected within " + CONNECT_WAIT_S + " s");
    return c;
  }

  private static long deadlineMs(int count) {
    return WAIT_BASE_MS + WAIT_PER_ITEM_MS * count;
  }

  private static String waiters(String connect, List<CuratorFramework> clients, String path, int count, int sessions) throws Exception {
    for (int i = 0; i < sessions; i++) client(connect, clients);
    InterProcessMutex holder = new InterProcessMutex(clients.get(0), path);
    holder.acquire();
    long[] mem0 = memory();
    CountDownLatch done = new CountDownLatch(count);
    long deadline = System.currentTimeMillis() + deadlineMs(count);
    AtomicReference<Throwable> failed = new AtomicReference<>();
    List<Thread> threads = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      InterProcessMutex mutex = new InterProcessMutex(clients.get(i % sessions), path);
      Thread t = new Thread(() -> {
        try {
          mutex.acquire();
          mutex.release();
        } catch (Throwable e) {
          failed.compareAndSet(null, e);
        }
        done.countDown();
      }, "waiter-" + i);
      t.setDaemon(true);
      try {
        t.start();
      } catch (OutOfMemoryError e) {
        // The OS refused another thread: this is where one blocked thread per waiter stops.
        for (Thread s : threads) s.interrupt();
        throw new IllegalStateException("thread " + (i + 1) + " of " + count + " could not start: " + e.getMessage(), e);
      }
      threads.add(t);
      if (threads.size() % QUEUE_BATCH == 0 || threads.size() == count) queued(clients.get(0), path, threads.size() + 1, deadline, failed);
    }
    long[] mem = memory();
    int liveThreads = Thread.activeCount();
    long cpu0 = JvmMeter.cpuUs();
    long t0 = System.nanoTime();
    holder.release();
    if (!done.await(Math.max(1, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS)) throw new IllegalStateException((count - done.getCount()) + " of " + count + " hand-offs in time");
    double seconds = (System.nanoTime() - t0) / 1e9;
    long cpu = JvmMeter.cpuUs() - cpu0;
    if (failed.get() != null) throw new IllegalStateException("a waiter failed", failed.get());
    return json(count, seconds, cpu, mem[0] - mem0[0], mem[1] - mem0[1], liveThreads);
  }

  /** Waits until `path` has `n` children (polled: a listing of 10,000 names per check would load the server). */
  private static void queued(CuratorFramework client, String path, int n, long deadline, AtomicReference<Throwable> failed) throws Exception {
    while (client.checkExists().forPath(path).getNumChildren() < n) {
      if (failed.get() != null) throw new IllegalStateException("a waiter failed while queueing", failed.get());
      if (System.currentTimeMillis() > deadline) throw new IllegalStateException("the queue did not reach " + n + " nodes in time");
      Thread.sleep(10);
    }
  }

  private static String locks(String connect, List<CuratorFramework> clients, String path, int count, int inFlight) throws Exception {
    CuratorFramework client = client(connect, clients);
    long[] mem0 = memory();
    AtomicInteger next = new AtomicInteger();
    AtomicReference<Throwable> failed = new AtomicReference<>();
    CountDownLatch acquired = new CountDownLatch(inFlight);
    CountDownLatch release = new CountDownLatch(1);
    CountDownLatch released = new CountDownLatch(inFlight);
    long cpu0 = JvmMeter.cpuUs();
    long t0 = System.nanoTime();
    for (int w = 0; w < inFlight; w++) {
      Thread t = new Thread(() -> {
        List<InterProcessMutex> mine = new ArrayList<>();
        try {
          for (int i = next.getAndIncrement(); i < count && failed.get() == null; i = next.getAndIncrement()) {
            InterProcessMutex m = new InterProcessMutex(client, path + "/" + i);
            m.acquire();
            mine.add(m);
          }
        } catch (Throwable e) {
          failed.compareAndSet(null, e);
        }
        acquired.countDown();
        try {
          release.await();
          for (InterProcessMutex m : mine) m.release();
        } catch (Throwable e) {
          failed.compareAndSet(null, e);
        }
        released.countDown();
      }, "acquirer-" + w);
      t.setDaemon(true);
      t.start();
    }
    long deadline = System.currentTimeMillis() + deadlineMs(count);
    if (!acquired.await(Math.max(1, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS)) throw new IllegalStateException("not all " + count + " locks acquired in time");
    double seconds = (System.nanoTime() - t0) / 1e9;
    long cpu = JvmMeter.cpuUs() - cpu0;
    if (failed.get() != null) throw new IllegalStateException("an acquire failed", failed.get());
    long[] mem = memory();
    int liveThreads = Thread.activeCount();
    release.countDown();
    if (!released.await(deadlineMs(count), TimeUnit.MILLISECONDS)) throw new IllegalStateException("not all " + count + " locks released in time");
    if (failed.get() != null) throw new IllegalStateException("a release failed", failed.get());
    return json(count, seconds, cpu, mem[0] - mem0[0], mem[1] - mem0[1], liveThreads);
  }

  private static String json(int ops, double seconds, long cpuUs, long heapBytes, long rssBytes, int threads) {
    return "{\"ops\":" + ops + ",\"seconds\":" + seconds + ",\"cpuUs\":" + cpuUs + ",\"heapBytes\":" + heapBytes + ",\"rssBytes\":" + rssBytes + ",\"threads\":" + threads + "}";
  }

  /** [used heap, resident set] in bytes after collections (several passes: one System.gc() may leave garbage behind). */
  private static long[] memory() throws Exception {
    return new long[] { JvmMeter.usedHeap(), JvmMeter.rss() };
  }
}
