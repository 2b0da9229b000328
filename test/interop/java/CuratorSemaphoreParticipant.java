import java.io.BufferedReader;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.recipes.shared.SharedCount;

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
  private final Interop.Markers markers;
  private final int limit;

  private CuratorSemaphoreParticipant(Interop.Markers markers, int limit) {
    this.markers = markers;
    this.limit = limit;
  }

  public static void main(String[] args) throws Exception {
    Interop.expectArgs(args, "CuratorSemaphoreParticipant connect path kind limit countPath iterations markerDir id [sessionTimeout]", 8, 9);
    String path = args[1];
    String kind = args[2];
    int limit = Integer.parseInt(args[3]);
    int sessionTimeout = args.length == 9 ? Integer.parseInt(args[8]) : 10_000;
    try (CuratorFramework client = Interop.connect(args[0], sessionTimeout)) {
      SharedCount count = kind.equals("count") ? new SharedCount(client, args[4], limit) : null;
      try {
        Interop.Holdable<?> permits;
        if (kind.equals("mutex")) {
          permits = Interop.holdable(new InterProcessSemaphoreMutex(client, path));
        } else {
          InterProcessSemaphoreV2 semaphore;
          if (count != null) {
            count.start();
            semaphore = new InterProcessSemaphoreV2(client, path, count);
          } else {
            semaphore = new InterProcessSemaphoreV2(client, path, limit);
          }
          permits = new Interop.Holdable<Lease>() {
            public Lease acquire() throws Exception {
              return semaphore.acquire();
            }

            public void release(Lease lease) throws Exception {
              semaphore.returnLease(lease);
            }
          };
        }
        BufferedReader stdin = Interop.stdin();
        if (args[5].equals("hold")) {
          Interop.holdUntilLine(permits, stdin);
          return;
        }
        int iterations = Integer.parseInt(args[5]);
        CuratorSemaphoreParticipant p = new CuratorSemaphoreParticipant(new Interop.Markers(Paths.get(args[6]), args[7]), limit);
        Interop.awaitStart(stdin);
        Interop.result(args[7], Interop.countHolds(permits, kind.equals("none"), iterations, p::hold), p.markers.violations());
      } finally {
        if (count != null) count.close();
      }
    }
  }

  /** One hold of one permit; `slow` widens the window (only the control without a semaphore uses it). */
  private void hold(int n, boolean slow) throws Exception {
    Path marker = markers.claim("permit-" + markers.id() + "-" + n);
    if (markers.count("permit-") > limit) markers.violation();
    // One permit per hold on this side.
    markers.log("1");
    Interop.Markers.pause(slow);
    markers.drop(marker);
  }
}
