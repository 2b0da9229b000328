import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessLock;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;

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
  private final Path dir;
  private final String id;
  private final List<String> paths;
  private int violations;

  private MultiLockParticipant(Path dir, String id, List<String> paths) {
    this.dir = dir;
    this.id = id;
    this.paths = paths;
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 6) {
      System.err.println("usage: MultiLockParticipant connect paths mode iterations markerDir id");
      System.exit(2);
    }
    List<String> paths = Arrays.asList(args[1].split(","));
    String mode = args[2];
    CuratorFramework client = CuratorFrameworkFactory.newClient(args[0], 10_000, 10_000, new RetryOneTime(100));
    client.start();
    try {
      if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) throw new IllegalStateException("not connected to " + args[0]);
      BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      InterProcessLock lock = mode.equals("multi") ? new InterProcessMultiLock(client, paths) : new InterProcessMutex(client, paths.get(0));
      List<String> held = mode.equals("mutex") ? paths.subList(0, 1) : paths;
      if (args[3].equals("hold")) {
        lock.acquire();
        say("ACQUIRED");
        stdin.readLine();
        lock.release();
        say("RELEASED");
        return;
      }
      int iterations = Integer.parseInt(args[3]);
      MultiLockParticipant p = new MultiLockParticipant(Paths.get(args[4]), args[5], held);
      say("READY");
      stdin.readLine();
      int acquisitions = 0;
      for (int n = 0; n < iterations; n++) {
        if (mode.equals("none")) {
          acquisitions++; // a "hold" without a lock
          p.hold(mode, true);
          continue;
        }
        lock.acquire();
        try {
          acquisitions++;
          p.hold(mode, false);
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

  /** One hold of every path; `slow` widens the window (only the unlocked control uses it). */
  private void hold(String mode, boolean slow) throws Exception {
    List<Path> mine = new ArrayList<>();
    for (String lockPath : paths) {
      Path marker = dir.resolve(lockPath.replace('/', '_'));
      try {
        Files.createFile(marker);
        mine.add(marker);
      } catch (FileAlreadyExistsException e) {
        violations++; // another holder of this path is inside
      }
    }
    Files.write(dir.resolve("log"), (id + " " + mode + "\n").getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    if (slow) Thread.sleep(1);
    else Thread.yield();
    for (Path marker : mine) Files.delete(marker);
  }
}
