import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.apache.curator.retry.RetryOneTime;

/**
 * What every Curator participant of the interop suites shares (participants.ts compiles this file
 * with each suite's own): checking the argument count, connecting, the line protocol on
 * stdin/stdout (READY and the start line of a counted run, ACQUIRED / RELEASED of a hold run,
 * the JSON result line) and the marker files of the clock-free exclusion checks. interop.mjs is
 * the same for the Node participants.
 */
final class Interop {
  private Interop() {}

  /** Exits with status 2 and `usage` on stderr unless `args` has one of the `lengths`. */
  static void expectArgs(String[] args, String usage, int... lengths) {
    for (int n : lengths) if (args.length == n) return;
    System.err.println("usage: " + usage);
    System.exit(2);
  }

  /**
   * A started client of `connect`, connected (or an exception after 30 s). One retry after 100 ms,
   * as the suites want a failure to surface rather than be retried away.
   */
  static CuratorFramework connect(String connect, int sessionTimeoutMs) throws InterruptedException {
    CuratorFramework client = CuratorFrameworkFactory.newClient(connect, sessionTimeoutMs, 10_000, new RetryOneTime(100));
    // Curator hands the CONNECTED state to its listeners from a thread of its own, which can come
    // after blockUntilConnected would return: a recipe started next would then hear it, and
    // PathChildrenCache reports CONNECTED as CONNECTION_RECONNECTED (a CI run's interop cache
    // test saw one that ours, rightly, did not). So the client is returned once it has been told.
    CountDownLatch told = new CountDownLatch(1);
    ConnectionStateListener first = (c, state) -> {
      if (state.isConnected()) told.countDown();
    };
    client.getConnectionStateListenable().addListener(first);
    client.start();
    if (!told.await(30, TimeUnit.SECONDS)) {
      client.close();
      throw new IllegalStateException("not connected to " + connect);
    }
    client.getConnectionStateListenable().removeListener(first);
    return client;
  }

  /** Standard input as lines: each command of the test is one line. */
  static BufferedReader stdin() {
    return new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
  }

  /** Prints one line at once (listener threads print too, hence the lock). */
  static void say(String line) {
    synchronized (System.out) {
      System.out.println(line);
      System.out.flush();
    }
  }

  /** The start barrier of a counted run: READY once connected, then wait for the test's line. */
  static void awaitStart(BufferedReader stdin) throws IOException {
    say("READY");
    stdin.readLine();
  }

  /** The last line of a counted run. */
  static void result(String id, int acquisitions, int violations) {
    say("{\"id\":\"" + id + "\",\"acquisitions\":" + acquisitions + ",\"violations\":" + violations + "}");
  }

  /** Something held once by a hold run. */
  interface Holdable<H> {
    H acquire() throws Exception;

    void release(H handle) throws Exception;
  }

  /** A hold run: acquire, print ACQUIRED, release when a line arrives on stdin, print RELEASED. */
  static <H> void holdUntilLine(Holdable<H> lock, BufferedReader stdin) throws Exception {
    H handle = lock.acquire();
    say("ACQUIRED");
    stdin.readLine();
    lock.release(handle);
    say("RELEASED");
  }

  /** A Curator lock (a mutex, one side of a read-write lock, a multi-lock, a semaphore mutex) as a {@link Holdable}. */
  static Holdable<InterProcessLock> holdable(InterProcessLock lock) {
    return new Holdable<InterProcessLock>() {
      public InterProcessLock acquire() throws Exception {
        lock.acquire();
        return lock;
      }

      public void release(InterProcessLock handle) throws Exception {
        handle.release();
      }
    };
  }

  /** A hold run of a Curator lock. */
  static void holdUntilLine(InterProcessLock lock, BufferedReader stdin) throws Exception {
    holdUntilLine(holdable(lock), stdin);
  }

  /** The inside of one hold of a counted run: hold number `n`; `slow` in the unlocked control. */
  interface Hold {
    void run(int n, boolean slow) throws Exception;
  }

  /**
   * The holds of a counted run: `iterations` times acquire `lock`, `hold`, release. With
   * `unlocked` (the negative control) each "hold" takes no lock at all and is slow, so that the
   * marker check has overlaps to catch. Returns the number of holds.
   */
  static <H> int countHolds(Holdable<H> lock, boolean unlocked, int iterations, Hold hold) throws Exception {
    int acquisitions = 0;
    for (int n = 0; n < iterations; n++) {
      if (unlocked) {
        acquisitions++; // a "hold" without a lock
        hold.run(n, true);
        continue;
      }
      H handle = lock.acquire();
      try {
        acquisitions++;
        hold.run(n, false);
      } finally {
        lock.release(handle);
      }
    }
    return acquisitions;
  }

  /**
   * The marker directory of one participant in a counted run, shared with every other one: files
   * created with exclusive create inside a hold, and the append-only hold log.
   */
  static final class Markers {
    private final Path dir;
    private final String id;
    // Leader selectors hold on Curator's thread: the count is read from main at the end.
    private final AtomicInteger violations = new AtomicInteger();

    Markers(Path dir, String id) {
      this.dir = dir;
      this.id = id;
    }

    String id() {
      return id;
    }

    int violations() {
      return violations.get();
    }

    /** Counts one violation of the recipe's guarantee. */
    void violation() {
      violations.incrementAndGet();
    }

    /**
     * Creates marker `name` with exclusive create. An existing file means another holder is
     * inside: that is a violation, and the file is not ours to delete (returns null).
     */
    Path claim(String name) throws IOException {
      Path marker = dir.resolve(name);
      try {
        Files.createFile(marker);
        return marker;
      } catch (FileAlreadyExistsException e) {
        violation();
        return null;
      }
    }

    /** Deletes a marker `claim` returned (null: nothing to delete). */
    void drop(Path marker) throws IOException {
      if (marker != null) Files.delete(marker);
    }

    /** Whether marker `name` exists. */
    boolean exists(String name) {
      return Files.exists(dir.resolve(name));
    }

    /** How many markers start with `prefix`. */
    long count(String prefix) throws IOException {
      try (Stream<Path> files = Files.list(dir)) {
        return files.filter(f -> f.getFileName().toString().startsWith(prefix)).count();
      }
    }

    /** Appends "<id> <what>" to the hold log. */
    void log(String what) throws IOException {
      // One short O_APPEND write per hold: appends from several processes do not interleave.
      Files.write(dir.resolve("log"), (id + " " + what + "\n").getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    /** The inside of a hold; `slow` widens the window (only the unlocked negative controls use it). */
    static void pause(boolean slow) throws InterruptedException {
      if (slow) Thread.sleep(1);
      else Thread.yield();
    }
  }

  /**
   * Halts the JVM with status 3 after `ms`, from a daemon thread (no shutdown hooks, no waiting on
   * Curator): a participant given a lifetime cannot outlive a test that lost track of it.
   */
  static void haltAfter(long ms, String who) {
    Thread watchdog = new Thread(() -> {
      try {
        Thread.sleep(ms);
      } catch (InterruptedException e) {
        return;
      }
      System.err.println(who + ": lifetime of " + ms + " ms over, halting");
      Runtime.getRuntime().halt(3);
    }, "lifetime");
    watchdog.setDaemon(true);
    watchdog.start();
  }
}
