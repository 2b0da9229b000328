import java.io.BufferedReader;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.NodeCache;
import org.apache.curator.framework.recipes.cache.PathChildrenCache;
import org.apache.curator.framework.recipes.cache.PathChildrenCacheEvent;

/**
 * The Curator side of the node caches interop test (node-caches.test.ts): a Curator 5
 * PathChildrenCache (with data, in POST_INITIALIZED_EVENT mode) on `path` and a NodeCache
 * (start(true)) on `nodePath`, whose events are printed as they come, and a writer the test
 * drives over stdin.
 *
 *   java CuratorCacheParticipant connect path nodePath [sessionTimeoutMs]
 *
 * Prints `PCC <type> <child name|-> <data|->` for each PathChildrenCache event
 * (`PCC INITIALIZED <names,comma separated>` for the initial set), `NODE <data|->` each time the
 * NodeCache's listener is called (with its current data; `-` when the node is gone), and READY
 * once both are started. Commands, one per line, each answered with `OK <n>` (its line number)
 * once done: `create <path> <data>`, `set <path> <data>`, `delete <path>`, `snapshot` (prints
 * `SNAPSHOT name=data,...` of the PathChildrenCache, sorted) and `quit`.
 */
public final class CuratorCacheParticipant {
  private CuratorCacheParticipant() {}

  private static String name(String path) {
    return path.substring(path.lastIndexOf('/') + 1);
  }

  private static String text(byte[] data) {
    return data == null ? "-" : new String(data, StandardCharsets.UTF_8);
  }

  public static void main(String[] args) throws Exception {
    Interop.expectArgs(args, "CuratorCacheParticipant connect path nodePath [sessionTimeoutMs]", 3, 4);
    CuratorFramework client = Interop.connect(args[0], args.length == 4 ? Integer.parseInt(args[3]) : 10_000);
    try (PathChildrenCache children = new PathChildrenCache(client, args[1], true);
        NodeCache node = new NodeCache(client, args[2])) {
      children.getListenable().addListener((c, event) -> {
        if (event.getType() == PathChildrenCacheEvent.Type.INITIALIZED) {
          StringBuilder names = new StringBuilder();
          for (ChildData d : event.getInitialData()) names.append(names.length() == 0 ? "" : ",").append(name(d.getPath()));
          Interop.say("PCC INITIALIZED " + names);
          return;
        }
        ChildData d = event.getData();
        Interop.say("PCC " + event.getType() + " " + (d == null ? "-" : name(d.getPath())) + " " + (d == null ? "-" : text(d.getData())));
      });
      node.getListenable().addListener(() -> {
        ChildData d = node.getCurrentData();
        Interop.say("NODE " + (d == null ? "-" : text(d.getData())));
      });
      children.start(PathChildrenCache.StartMode.POST_INITIALIZED_EVENT);
      node.start(true);
      Interop.say("READY");
      BufferedReader stdin = Interop.stdin();
      int n = 0;
      for (String line = stdin.readLine(); line != null && !line.equals("quit"); line = stdin.readLine()) {
        n++;
        String[] w = line.split(" ");
        switch (w[0]) {
          case "create":
            client.create().forPath(w[1], w[2].getBytes(StandardCharsets.UTF_8));
            break;
          case "set":
            client.setData().forPath(w[1], w[2].getBytes(StandardCharsets.UTF_8));
            break;
          case "delete":
            client.delete().forPath(w[1]);
            break;
          case "snapshot": {
            List<ChildData> current = children.getCurrentData();
            StringBuilder out = new StringBuilder();
            for (ChildData d : current) out.append(out.length() == 0 ? "" : ",").append(name(d.getPath())).append('=').append(text(d.getData()));
            Interop.say("SNAPSHOT " + out);
            break;
          }
          default:
            Interop.say("UNKNOWN " + line);
        }
        Interop.say("OK " + n);
      }
    } finally {
      client.close();
    }
  }
}
