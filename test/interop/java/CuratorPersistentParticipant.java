import java.io.BufferedReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.nodes.PersistentNode;
import org.apache.curator.framework.recipes.nodes.PersistentTtlNode;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * The Curator side of the PersistentNode / PersistentTtlNode interop test (persistent-node.test.ts):
 * any number of Curator 5 PersistentNode and PersistentTtlNode objects on one client, named by the
 * test, plus reads of nodes as Curator sees them.
 *
 *   java CuratorPersistentParticipant connect sessionTimeoutMs lifetimeMs
 *
 * `lifetimeMs`: the process halts (status 3) after this long whatever it is doing, so a test that
 * lost track of it cannot leave it running. Prints READY once connected, and `STATE <state>` for
 * every connection state change (LOST, RECONNECTED, ...). Commands, one per line; each answers with
 * one line starting with the word given here (asynchronous lines start with STATE or EVENT):
 * - `node <name> <basePath> <CreateMode> <protected true|false> <data>`: a started PersistentNode
 *   (data as UTF-8; `-` for none), waited for up to 10 s -> `CREATED <name> <actual path>` or
 *   `TIMEOUT <name>`; every later nodeCreated of its listener prints `EVENT <name> created <path>`;
 * - `ttl <name> <path> <ttlMs> <data>`: a started PersistentTtlNode -> `CREATED <name> <path>`;
 * - `path <name>` -> `PATH <name> <actual path or null>`;
 * - `setdata <name> <data>`: setData on the node -> `SET <name>`;
 * - `close <name>` -> `CLOSED <name>`;
 * - `read <path>` -> `NODE <path> <data hex|-> <ephemeralOwner hex> <czxid> <mtime> <numChildren> <acl>`
 *   (acl as `scheme:id:perms` joined by `,`), or `NONODE <path>`;
 * - `children <path>` -> `CHILDREN <path> <names sorted, joined by ,>` (or `NONODE <path>`);
 * - `until <path> <czxid>`: waits (up to 20 s) until the node exists with another czxid (a
 *   re-creation; `-1` for any), then answers as `read`, or `TIMEOUT <path>`;
 * - `alive <path> <ms>`: reads the node every 20 ms for `ms` -> `ALIVE <path> <reads> <missing
 *   reads> <distinct czxids> <distinct mtimes>`: a node kept alive is never missing, keeps its czxid,
 *   and its mtime moves on with each touch;
 * - `delete <path>` -> `DELETED <path>` (or `NONODE <path>`);
 * - `session` -> `SESSION <id hex> <password hex>` of the current ZooKeeper handle;
 * - `quit`: closes everything, exits.
 */
public final class CuratorPersistentParticipant {
  private CuratorPersistentParticipant() {}

  public static void main(String[] args) throws Exception {
    Interop.expectArgs(args, "CuratorPersistentParticipant connect sessionTimeoutMs lifetimeMs", 3);
    Interop.haltAfter(Long.parseLong(args[2]), "CuratorPersistentParticipant");
    CuratorFramework client = Interop.connect(args[0], Integer.parseInt(args[1]));
    client.getConnectionStateListenable().addListener((c, state) -> Interop.say("STATE " + state));
    Map<String, PersistentNode> nodes = new HashMap<>();
    Map<String, PersistentTtlNode> ttlNodes = new HashMap<>();
    try {
      Interop.say("READY");
      BufferedReader stdin = Interop.stdin();
      for (String line; (line = stdin.readLine()) != null && !line.equals("quit");) {
        String[] cmd = line.split(" ");
        switch (cmd[0]) {
          case "node": {
            String name = cmd[1];
            PersistentNode node = new PersistentNode(client, CreateMode.valueOf(cmd[3]), Boolean.parseBoolean(cmd[4]), cmd[2], bytes(cmd[5]));
            node.getListenable().addListener(path -> Interop.say("EVENT " + name + " created " + path));
            nodes.put(name, node);
            node.start();
            boolean created = node.waitForInitialCreate(10, TimeUnit.SECONDS);
            Interop.say(created ? "CREATED " + name + " " + node.getActualPath() : "TIMEOUT " + name);
            break;
          }
          case "ttl": {
            PersistentTtlNode node = new PersistentTtlNode(client, cmd[2], Long.parseLong(cmd[3]), bytes(cmd[4]));
            ttlNodes.put(cmd[1], node);
            node.start();
            boolean created = node.waitForInitialCreate(10, TimeUnit.SECONDS);
            Interop.say(created ? "CREATED " + cmd[1] + " " + cmd[2] : "TIMEOUT " + cmd[1]);
            break;
          }
          case "path":
            Interop.say("PATH " + cmd[1] + " " + nodes.get(cmd[1]).getActualPath());
            break;
          case "setdata":
            if (nodes.containsKey(cmd[1])) nodes.get(cmd[1]).setData(bytes(cmd[2]));
            else ttlNodes.get(cmd[1]).setData(bytes(cmd[2]));
            Interop.say("SET " + cmd[1]);
            break;
          case "close":
            if (nodes.containsKey(cmd[1])) nodes.remove(cmd[1]).close();
            else ttlNodes.remove(cmd[1]).close();
            Interop.say("CLOSED " + cmd[1]);
            break;
          case "read":
            Interop.say(read(client, cmd[1]));
            break;
          case "children":
            try {
              Interop.say("CHILDREN " + cmd[1] + " " + String.join(",", new java.util.TreeSet<>(client.getChildren().forPath(cmd[1]))));
            } catch (KeeperException.NoNodeException e) {
              Interop.say("NONODE " + cmd[1]);
            }
            break;
          case "until":
            Interop.say(until(client, cmd[1], Long.parseLong(cmd[2])));
            break;
          case "alive":
            Interop.say(alive(client, cmd[1], Long.parseLong(cmd[2])));
            break;
          case "delete":
            try {
              client.delete().forPath(cmd[1]);
              Interop.say("DELETED " + cmd[1]);
            } catch (KeeperException.NoNodeException e) {
              Interop.say("NONODE " + cmd[1]);
            }
            break;
          case "session": {
            ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
            Interop.say("SESSION " + Long.toHexString(zk.getSessionId()) + " " + hex(zk.getSessionPasswd()));
            break;
          }
          default:
            throw new IllegalArgumentException("unknown command " + line);
        }
      }
    } finally {
      for (PersistentNode node : nodes.values()) node.close();
      for (PersistentTtlNode node : ttlNodes.values()) node.close();
      client.close();
    }
  }

  /** `-` is no data (an empty array: Curator refuses null), anything else its UTF-8 bytes. */
  private static byte[] bytes(String text) {
    return text.equals("-") ? new byte[0] : text.getBytes(StandardCharsets.UTF_8);
  }

  /** The node as Curator reads it (data, stat, ACL), as one line. */
  private static String read(CuratorFramework client, String path) throws Exception {
    Stat stat = new Stat();
    byte[] data;
    List<ACL> acl;
    try {
      data = client.getData().storingStatIn(stat).forPath(path);
      acl = client.getACL().forPath(path);
    } catch (KeeperException.NoNodeException e) {
      return "NONODE " + path;
    }
    StringBuilder acls = new StringBuilder();
    for (ACL a : acl) acls.append(acls.length() == 0 ? "" : ",").append(a.getId().getScheme()).append(':').append(a.getId().getId()).append(':').append(a.getPerms());
    return "NODE " + path + " " + (data == null || data.length == 0 ? "-" : hex(data)) + " " + Long.toHexString(stat.getEphemeralOwner()) + " " + stat.getCzxid() + " " + stat.getMtime() + " " + stat.getNumChildren() + " " + acls;
  }

  /** Polls every 10 ms until the node exists with a czxid other than `not`. */
  private static String until(CuratorFramework client, String path, long not) throws Exception {
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (System.nanoTime() < deadline) {
      Stat stat = client.checkExists().forPath(path);
      if (stat != null && stat.getCzxid() != not) return read(client, path);
      Thread.sleep(10);
    }
    return "TIMEOUT " + path;
  }

  /** Reads the node every 20 ms for `ms`: how often it was missing, its distinct czxids and mtimes. */
  private static String alive(CuratorFramework client, String path, long ms) throws Exception {
    Set<Long> czxids = new HashSet<>();
    Set<Long> mtimes = new HashSet<>();
    int reads = 0;
    int missing = 0;
    for (long end = System.nanoTime() + ms * 1_000_000L; System.nanoTime() < end; Thread.sleep(20)) {
      Stat stat = client.checkExists().forPath(path);
      reads++;
      if (stat == null) {
        missing++;
        continue;
      }
      czxids.add(stat.getCzxid());
      mtimes.add(stat.getMtime());
    }
    return "ALIVE " + path + " " + reads + " " + missing + " " + czxids.size() + " " + mtimes.size();
  }

  private static String hex(byte[] bytes) {
    StringBuilder out = new StringBuilder();
    for (byte b : bytes) out.append(String.format("%02x", b));
    return out.toString();
  }
}
