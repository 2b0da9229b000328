import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.retry.RetryOneTime;

/**
 * The Curator 5 side of the interop tests (curator.test.ts); node-participant.mjs speaks the same
 * protocol on @zk/locks.
 *
 * Arguments: connectString lockPath mode iterations markerDir id
 *   mode: mutex (InterProcessMutex), read / write (one side of InterProcessReadWriteLock),
 *         rw-mixed (a seeded random mix of read and write holds), none (no lock at all: the
 *         negative control that shows the marker check does catch overlapping holders).
 *   iterations: a count, or "hold" (acquire once, print ACQUIRED, release when a line arrives
 *         on stdin, print RELEASED).
 *
 * Counted runs print READY once connected and start on the first stdin line, so every process
 * contends from the same moment. Inside every critical section the exclusion check needs no
 * clock: an exclusive hold creates markerDir/writer with exclusive create (an existing file means
 * another exclusive holder is inside) and requires that no reader-* file exists; a read hold
 * creates its own reader-<id>-<n> and requires that writer does not exist. Each hold also
 * appends "<id> <r|w>" to markerDir/log, so the test can count holds and language hand-overs
 * without trusting this process's own tally. Ends with one JSON line:
 * {"id":..., "acquisitions":N, "violations":V} and exit status 0.
 */
public class CuratorParticipant {
  private final Path dir;
  private final String id;
  private int violations;

  private CuratorParticipant(Path dir, String id) {
    this.dir = dir;
    this.id = id;
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 6) {
      System.err.println("usage: CuratorParticipant connect lockPath mode iterations markerDir id");
      System.exit(2);
    }
    String connect = args[0];
    String lockPath = args[1];
    String mode = args[2];
    CuratorFramework client = CuratorFrameworkFactory.newClient(connect, 10_000, 10_000, new RetryOneTime(100));
    client.start();
    try {
      if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) throw new IllegalStateException("not connected to " + connect);
      BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      InterProcessMutex mutex = new InterProcessMutex(client, lockPath);
      InterProcessReadWriteLock rw = new InterProcessReadWriteLock(client, lockPath);
      if (args[3].equals("hold")) {
        InterProcessMutex lock = mode.equals("mutex") ? mutex : mode.equals("read") ? rw.readLock() : rw.writeLock();
        lock.acquire();
        say("ACQUIRED");
        stdin.readLine();
        lock.release();
        say("RELEASED");
        return;
      }
      int iterations = Integer.parseInt(args[3]);
      CuratorParticipant p = new CuratorParticipant(Paths.get(args[4]), args[5]);
      Random random = new Random(p.id.hashCode());
      say("READY");
      stdin.readLine();
      int acquisitions = 0;
      for (int n = 0; n < iterations; n++) {
        boolean read = mode.equals("read") || (mode.equals("rw-mixed") && random.nextBoolean());
        if (mode.equals("none")) {
          acquisitions++; // a "hold" without a lock
          p.exclusiveHold(true);
          continue;
        }
        InterProcessMutex lock = mode.equals("mutex") ? mutex : read ? rw.readLock() : rw.writeLock();
        lock.acquire();
        try {
          acquisitions++;
          if (read) p.readHold(n);
          else p.exclusiveHold(false);
        } finally {
          lock.release();
        }
      }
      say("{\"id\":\"" + p.id + "\",\"acquisitions\":" + acquisitions + ",\"violations\":" + p.violations + "}");
    } finally {
      client.close();
    }
  }

  private static void say(String line) {
    System.out.println(line);
    System.out.flush();
  }

  /** An exclusive hold; `slow` widens the window (only the unlocked control uses it). */
  private void exclusiveHold(boolean slow) throws Exception {
    Path writer = dir.resolve("writer");
    boolean mine = true;
    try {
      Files.createFile(writer);
    } catch (FileAlreadyExistsException e) {
      violations++; // another exclusive holder is inside; its file is not ours to delete
      mine = false;
    }
    try (Stream<Path> files = Files.list(dir)) {
      if (files.anyMatch(f -> f.getFileName().toString().startsWith("reader-"))) violations++;
    }
    log("w");
    if (slow) Thread.sleep(1);
    else Thread.yield();
    if (mine) Files.delete(writer);
  }

  private void readHold(int n) throws Exception {
    Path marker = dir.resolve("reader-" + id + "-" + n);
    Files.createFile(marker);
    if (Files.exists(dir.resolve("writer"))) violations++;
    log("r");
    Thread.yield();
    Files.delete(marker);
  }

  private void log(String kind) throws Exception {
    // One short O_APPEND write per hold: appends from several processes do not interleave.
    Files.write(dir.resolve("log"), (id + " " + kind + "\n").getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }
}
