import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.retry.RetryOneTime;

/**
 * A Curator 5 participant for the interop tests, the same protocol as node-lock-participant.mjs.
 *
 *   <connect> <lockPath> mutex|rw <iterations> <markerDir> <id>
 *     Takes the lock `iterations` times (rw: a random mix of read and write holds) and checks
 *     exclusion without clocks: an exclusive hold creates <markerDir>/writer with exclusive create
 *     and requires no reader-* file; a read hold creates reader-<id>-<n> and requires no writer.
 *     Prints {"id","acquisitions","violations"} and exits 0.
 *   <connect> <lockPath> hold
 *     Takes the InterProcessMutex once, prints ACQUIRED, releases when a line arrives on stdin,
 *     prints RELEASED.
 */
public class CuratorLockParticipant {
  public static void main(String[] args) throws Exception {
    String connect = args[0];
    String lockPath = args[1];
    String mode = args[2];
    CuratorFramework client = CuratorFrameworkFactory.newClient(connect, 10_000, 5_000, new RetryOneTime(100));
    client.start();
    if (!client.blockUntilConnected(20, TimeUnit.SECONDS)) throw new IllegalStateException("not connected");
    try {
      if (mode.equals("hold")) {
        InterProcessMutex mutex = new InterProcessMutex(client, lockPath);
        mutex.acquire();
        System.out.println("ACQUIRED");
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in)).readLine();
        mutex.release();
        System.out.println("RELEASED");
        System.out.flush();
        return;
      }
      int iterations = Integer.parseInt(args[3]);
      Path dir = Paths.get(args[4]);
      String id = args[5];
      InterProcessMutex mutex = new InterProcessMutex(client, lockPath);
      InterProcessReadWriteLock rw = new InterProcessReadWriteLock(client, lockPath);
      Random random = new Random(id.hashCode());
      int violations = 0;
      for (int n = 0; n < iterations; n++) {
        boolean read = mode.equals("rw") && random.nextBoolean();
        InterProcessMutex lock = mode.equals("mutex") ? mutex : read ? rw.readLock() : rw.writeLock();
        lock.acquire();
        try {
          violations += read ? readHold(dir, id, n) : exclusiveHold(dir);
        } finally {
          lock.release();
        }
      }
      System.out.println("{\"id\":\"" + id + "\",\"acquisitions\":" + iterations + ",\"violations\":" + violations + "}");
    } finally {
      client.close();
    }
  }

  static int exclusiveHold(Path dir) throws Exception {
    int v = 0;
    Path writer = dir.resolve("writer");
    try {
      Files.createFile(writer);
    } catch (FileAlreadyExistsException e) {
      return 1; // another exclusive holder is inside
    }
    try (Stream<Path> files = Files.list(dir)) {
      if (files.anyMatch(p -> p.getFileName().toString().startsWith("reader-"))) v++;
    }
    Thread.yield();
    Files.delete(writer);
    return v;
  }

  static int readHold(Path dir, String id, int n) throws Exception {
    Path mine = dir.resolve("reader-" + id + "-" + n);
    Files.createFile(mine);
    int v = Files.exists(dir.resolve("writer")) ? 1 : 0;
    Thread.yield();
    Files.delete(mine);
    return v;
  }
}
