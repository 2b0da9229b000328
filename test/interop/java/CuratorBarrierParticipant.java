import java.io.BufferedReader;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.barriers.DistributedBarrier;
import org.apache.curator.framework.recipes.barriers.DistributedDoubleBarrier;
import org.apache.zookeeper.KeeperException;

/**
 * The Curator side of the barrier interop tests (barrier.test.ts): a DistributedBarrier and a
 * DistributedDoubleBarrier of Curator 5 on one path, driven by one command per stdin line.
 *
 *   java CuratorBarrierParticipant connect path memberCount
 *
 * Prints READY once connected, then answers each command with one line:
 * - `enter <ms>`: DistributedDoubleBarrier.enter(ms) -> `ENTERED <members>` or `ENTER_TIMEOUT`;
 * - `leave <ms>`: DistributedDoubleBarrier.leave(ms) -> `LEFT <members>` or `LEAVE_TIMEOUT`;
 * - `set` / `remove`: DistributedBarrier.setBarrier / removeBarrier -> `SET` / `REMOVED`;
 * - `wait <ms>`: DistributedBarrier.waitOnBarrier(ms) -> `OPEN <barrier node exists: 0|1>` or `TIMEOUT`.
 * `<members>` is the number of children of the path other than `ready`, listed right after the
 * call returned: the test's clock-free check that nobody entered before every member had, and
 * nobody left before every member had. Ends on `exit` or at the end of stdin.
 */
public final class CuratorBarrierParticipant {
  private CuratorBarrierParticipant() {}

  public static void main(String[] args) throws Exception {
    Interop.expectArgs(args, "CuratorBarrierParticipant connect path memberCount", 3);
    String path = args[1];
    CuratorFramework client = Interop.connect(args[0], 10_000);
    try {
      DistributedDoubleBarrier doubleBarrier = new DistributedDoubleBarrier(client, path, Integer.parseInt(args[2]));
      DistributedBarrier barrier = new DistributedBarrier(client, path);
      BufferedReader stdin = Interop.stdin();
      Interop.say("READY");
      for (String line; (line = stdin.readLine()) != null && !line.equals("exit");) {
        String[] cmd = line.split(" ");
        long ms = cmd.length > 1 ? Long.parseLong(cmd[1]) : 0;
        switch (cmd[0]) {
          case "enter":
            Interop.say(doubleBarrier.enter(ms, TimeUnit.MILLISECONDS) ? "ENTERED " + members(client, path) : "ENTER_TIMEOUT");
            break;
          case "leave":
            Interop.say(doubleBarrier.leave(ms, TimeUnit.MILLISECONDS) ? "LEFT " + members(client, path) : "LEAVE_TIMEOUT");
            break;
          case "set":
            barrier.setBarrier();
            Interop.say("SET");
            break;
          case "remove":
            barrier.removeBarrier();
            Interop.say("REMOVED");
            break;
          case "wait":
            Interop.say(barrier.waitOnBarrier(ms, TimeUnit.MILLISECONDS) ? "OPEN " + (client.checkExists().forPath(path) == null ? 0 : 1) : "TIMEOUT");
            break;
          default:
            throw new IllegalArgumentException("unknown command " + line);
        }
      }
    } finally {
      client.close();
    }
  }

  /** The member nodes of the double barrier at `path` (its children but `ready`); 0 without the node. */
  private static int members(CuratorFramework client, String path) throws Exception {
    try {
      List<String> children = client.getChildren().forPath(path);
      return (int) children.stream().filter((c) -> !c.equals("ready")).count();
    } catch (KeeperException.NoNodeException e) {
      return 0;
    }
  }
}
