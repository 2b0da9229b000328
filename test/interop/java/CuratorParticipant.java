import java.io.BufferedReader;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Random;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;

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
  private final Interop.Markers markers;

  private CuratorParticipant(Interop.Markers markers) {
    this.markers = markers;
  }

  public static void main(String[] args) throws Exception {
    Interop.expectArgs(args, "CuratorParticipant connect lockPath mode iterations markerDir id", 6);
    String lockPath = args[1];
    String mode = args[2];
    try (CuratorFramework client = Interop.connect(args[0], 10_000)) {
      BufferedReader stdin = Interop.stdin();
      InterProcessMutex mutex = new InterProcessMutex(client, lockPath);
      InterProcessReadWriteLock rw = new InterProcessReadWriteLock(client, lockPath);
      if (args[3].equals("hold")) {
        InterProcessMutex lock = mode.equals("mutex") ? mutex : mode.equals("read") ? rw.readLock() : rw.writeLock();
        Interop.holdUntilLine(lock, stdin);
        return;
      }
      int iterations = Integer.parseInt(args[3]);
      CuratorParticipant p = new CuratorParticipant(new Interop.Markers(Paths.get(args[4]), args[5]));
      Random random = new Random(args[5].hashCode());
      Interop.awaitStart(stdin);
      boolean[] read = {false}; // what the current hold took, decided at each acquire
      Interop.Holdable<InterProcessMutex> lock = new Interop.Holdable<InterProcessMutex>() {
        public InterProcessMutex acquire() throws Exception {
          read[0] = mode.equals("read") || (mode.equals("rw-mixed") && random.nextBoolean());
          InterProcessMutex l = mode.equals("mutex") ? mutex : read[0] ? rw.readLock() : rw.writeLock();
          l.acquire();
          return l;
        }

        public void release(InterProcessMutex l) throws Exception {
          l.release();
        }
      };
      int acquisitions = Interop.countHolds(lock, mode.equals("none"), iterations, (n, slow) -> {
        if (read[0]) p.readHold(n);
        else p.exclusiveHold(slow);
      });
      Interop.result(args[5], acquisitions, p.markers.violations());
    }
  }

  /** An exclusive hold; `slow` widens the window (only the unlocked control uses it). */
  private void exclusiveHold(boolean slow) throws Exception {
    Path writer = markers.claim("writer");
    if (markers.count("reader-") > 0) markers.violation();
    markers.log("w");
    Interop.Markers.pause(slow);
    markers.drop(writer);
  }

  private void readHold(int n) throws Exception {
    Path reader = markers.claim("reader-" + markers.id() + "-" + n);
    if (markers.exists("writer")) markers.violation();
    markers.log("r");
    Interop.Markers.pause(false);
    markers.drop(reader);
  }
}
