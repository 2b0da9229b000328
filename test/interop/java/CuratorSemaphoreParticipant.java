import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.shared.SharedCount;
import org.apache.curator.retry.RetryOneTime;

/**
 * The Curator 5 side of the semaphore interop tests (semaphore.test.ts); semaphore-participant.mjs
 * speaks the same protocol on @zk/locks.
 *
 * Arguments: connectString path kind limit countPath iterations markerDir id [sessionTimeout]
 *   kind: fixed (InterProcessSemaphoreV2 with maxLeases = limit), count (InterProcessSemaphoreV2
 *         on a SharedCount at countPath, seeded with limit if the node is missing), mutex
 *         (InterProcessSemaphoreMutex; limit 1), none (no semaphore at all: the negative control
 *         that shows the marker check does catch too many holders).
 *   limit: the number of permits the marker check allows at once.
 *   countPath: the SharedCount node for kind count, "-" otherwise.
 *   iterations: a count, or "hold" (acquire one permit, print ACQUIRED, release when a line
 *         arrives on stdin, print RELEASED).
 *
 * Counted runs print READY once connected and start on the first stdin line. Inside every hold
 * the check needs no clock: the holder creates its own marker file permit-<id>-<n> and then
 * counts the permit-* files; more than limit means more holders than permits. Each hold also
 * appends "<id> 1" to markerDir/log (one permit per hold on this side), so the test counts holds
 * and language hand-overs from the log. Ends with one JSON line
 * {"id":..., "acquisitions":N, "violations":V} and exit status 0.
 */
public class CuratorSemaphoreParticipant {
  private final Path dir;
  private final String id;
  private final int limit;
  private int violations;

  private CuratorSemaphoreParticipant(Path dir, String id, int limit) {
    this.dir = dir;
    this.id = id;
    this.limit = limit;
  }

  /** One kind of permit: acquire returns a handle that release gives back. */
  private interface Permits {
    Object acquire() throws Exception;

    void release(Object handle) throws Exception;
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 8 && args.length != 9) {
      System.err.println("usage: CuratorSemaphoreParticipant connect path kind limit countPath iterations markerDir id [sessionTimeout]");
      System.exit(2);
    }
    String connect = args[0];
    String path = args[1];
    String kind = args[2];
    int limit = Integer.parseInt(args[3]);
    int sessionTimeout = args.length == 9 ? Integer.parseInt(args[8]) : 10_000;
    CuratorFramework client = CuratorFrameworkFactory.newClient(connect, sessionTimeout, 10_000, new RetryOneTime(100));
    client.start();
    SharedCount count = null;
    try {
      if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) throw new IllegalStateException("not connected to " + connect);
      BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      Permits permits;
      if (kind.equals("mutex")) {
        InterProcessSemaphoreMutex mutex = new InterProcessSemaphoreMutex(client, path);
        permits = new Permits() {
          public Object acquire() throws Exception {
            mutex.acquire();
            return mutex;
          }

          public void release(Object handle) throws Exception {
            mutex.release();
          }
        };
      } else {
        InterProcessSemaphoreV2 semaphore;
        if (kind.equals("count")) {
          count = new SharedCount(client, args[4], limit);
          count.start();
          semaphore = new InterProcessSemaphoreV2(client, path, count);
        } else {
          semaphore = new InterProcessSemaphoreV2(client, path, limit);
        }
        permits = new Permits() {
          public Object acquire() throws Exception {
            return semaphore.acquire();
          }

          public void release(Object handle) throws Exception {
            semaphore.returnLease((Lease) handle);
          }
        };
      }
      if (args[5].equals("hold")) {
        Object handle = permits.acquire();
        say("ACQUIRED");
        stdin.readLine();
        permits.release(handle);
        say("RELEASED");
        return;
      }
      int iterations = Integer.parseInt(args[5]);
      CuratorSemaphoreParticipant p = new CuratorSemaphoreParticipant(Paths.get(args[6]), args[7], limit);
      say("READY");
      stdin.readLine();
      int acquisitions = 0;
      for (int n = 0; n < iterations; n++) {
        if (kind.equals("none")) {
          acquisitions++; // a "hold" without a semaphore
          p.hold(n, true);
          continue;
        }
        Object handle = permits.acquire();
        try {
          acquisitions++;
          p.hold(n, false);
        } finally {
          permits.release(handle);
        }
      }
      say("{\"id\":\"" + p.id + "\",\"acquisitions\":" + acquisitions + ",\"violations\":" + p.violations + "}");
    } finally {
      if (count != null) count.close();
      client.close();
    }
  }

  private static void say(String line) {
    System.out.println(line);
    System.out.flush();
  }

  /** One hold of one permit; `slow` widens the window (only the control without a semaphore uses it). */
  private void hold(int n, boolean slow) throws Exception {
    Path marker = dir.resolve("permit-" + id + "-" + n);
    Files.createFile(marker);
    long inside;
    try (Stream<Path> files = Files.list(dir)) {
      inside = files.filter(f -> f.getFileName().toString().startsWith("permit-")).count();
    }
    if (inside > limit) violations++;
    log();
    if (slow) Thread.sleep(1);
    else Thread.yield();
    Files.delete(marker);
  }

  private void log() throws Exception {
    // One short O_APPEND write per hold: appends from several processes do not interleave.
    Files.write(dir.resolve("log"), (id + " 1\n").getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }
}
