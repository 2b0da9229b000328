import java.io.BufferedReader;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;

/**
 * The Curator 5 side of the MultiLock interop test (multi-lock.test.ts); MultiLockParticipant.mjs
 * speaks the same protocol on @zk/locks.
 *
 * Arguments: connectString paths mode iterations markerDir id
 *   paths: comma-separated lock paths.
 *   mode: multi (an InterProcessMultiLock of InterProcessMutexes, in the order given), mutex (a
 *         plain InterProcessMutex on the first path), none (no lock: the negative control).
 *   iterations: a count, or "hold" (acquire once, print ACQUIRED, release when a line arrives on
 *         stdin, print RELEASED).
 *
 * Counted runs print READY once connected and start on the first stdin line. Inside every hold,
 * for each of its paths, the marker file markerDir/<path with / as _> is created with exclusive
 * create: an existing file means another process holds that path too (a violation; the file is
 * not ours to delete). Each hold appends "<id> <mode>" to markerDir/log. Ends with one JSON line
 * {"id":..., "acquisitions":N, "violations":V} and exit status 0.
 */
public class MultiLockParticipant {
  private final Interop.Markers markers;
  private final List<String> paths;

  private MultiLockParticipant(Interop.Markers markers, List<String> paths) {
    this.markers = markers;
    this.paths = paths;
  }

  public static void main(String[] args) throws Exception {
    Interop.expectArgs(args, "MultiLockParticipant connect paths mode iterations markerDir id", 6);
    List<String> paths = Arrays.asList(args[1].split(","));
    String mode = args[2];
    try (CuratorFramework client = Interop.connect(args[0], 10_000)) {
      BufferedReader stdin = Interop.stdin();
      InterProcessLock lock = mode.equals("multi") ? new InterProcessMultiLock(client, paths) : new InterProcessMutex(client, paths.get(0));
      List<String> held = mode.equals("mutex") ? paths.subList(0, 1) : paths;
      if (args[3].equals("hold")) {
        Interop.holdUntilLine(lock, stdin);
        return;
      }
      int iterations = Integer.parseInt(args[3]);
      MultiLockParticipant p = new MultiLockParticipant(new Interop.Markers(Paths.get(args[4]), args[5]), held);
      Interop.awaitStart(stdin);
      int acquisitions = Interop.countHolds(Interop.holdable(lock), mode.equals("none"), iterations, (n, slow) -> p.hold(mode, slow));
      Interop.result(args[5], acquisitions, p.markers.violations());
    }
  }

  /** One hold of every path; `slow` widens the window (only the unlocked control uses it). */
  private void hold(String mode, boolean slow) throws Exception {
    List<Path> mine = new ArrayList<>();
    // Another holder of a path inside too is a violation (counted by claim).
    for (String lockPath : paths) mine.add(markers.claim(lockPath.replace('/', '_')));
    markers.log(mode);
    Interop.Markers.pause(slow);
    for (Path marker : mine) markers.drop(marker);
  }
}
