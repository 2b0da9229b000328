import java.io.BufferedReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.nodes.GroupMember;

/**
 * The Curator side of the group interop test (group-member.test.ts): one GroupMember of Curator 5
 * driven by stdin commands.
 *
 *   java CuratorGroupParticipant connect sessionTimeoutMs membershipPath id payload
 *
 * Prints READY once started. Commands, one per line:
 * - `until id1,id2,...`: waits (up to 30 s) until getCurrentMembers() has exactly these ids, then
 *   prints `MEMBERS {"id":"<payload hex>",...}` (ids sorted), or `TIMEOUT MEMBERS {...}`;
 * - `until-size n`: waits until getCurrentMembers() has n entries, then prints MEMBERS;
 * - `until-payload id hex`: waits until member `id` has that payload, then prints MEMBERS;
 * - `set text`: setThisData(text as UTF-8), prints SET;
 * - `quit`: closes the member and the client, exits.
 */
public final class CuratorGroupParticipant {
  private CuratorGroupParticipant() {}

  public static void main(String[] args) throws Exception {
    Interop.expectArgs(args, "CuratorGroupParticipant connect sessionTimeoutMs membershipPath id payload", 5);
    CuratorFramework client = Interop.connect(args[0], Integer.parseInt(args[1]));
    GroupMember member = new GroupMember(client, args[2], args[3], args[4].getBytes(StandardCharsets.UTF_8));
    try {
      member.start();
      Interop.say("READY");
      BufferedReader stdin = Interop.stdin();
      for (String line; (line = stdin.readLine()) != null && !line.equals("quit");) {
        if (line.startsWith("until ")) {
          TreeSet<String> want = new TreeSet<>(Arrays.asList(line.substring(6).split(",")));
          report(member, () -> new TreeSet<>(member.getCurrentMembers().keySet()).equals(want));
        } else if (line.startsWith("until-size ")) {
          int n = Integer.parseInt(line.substring(11));
          report(member, () -> member.getCurrentMembers().size() == n);
        } else if (line.startsWith("until-payload ")) {
          String[] parts = line.split(" ");
          report(member, () -> parts[2].equals(hex(member.getCurrentMembers().get(parts[1]))));
        } else if (line.startsWith("set ")) {
          member.setThisData(line.substring(4).getBytes(StandardCharsets.UTF_8));
          Interop.say("SET");
        }
      }
    } finally {
      member.close();
      client.close();
    }
  }

  interface Condition {
    boolean holds();
  }

  /** Polls `condition` every 10 ms for up to 30 s, then prints the member map (TIMEOUT first when it never held). */
  private static void report(GroupMember member, Condition condition) throws InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    boolean held;
    while (!(held = condition.holds()) && System.nanoTime() < deadline) Thread.sleep(10);
    Interop.say((held ? "" : "TIMEOUT ") + "MEMBERS " + json(member.getCurrentMembers()));
  }

  private static String json(Map<String, byte[]> members) {
    StringBuilder out = new StringBuilder("{");
    for (Map.Entry<String, byte[]> e : new TreeMap<>(members).entrySet()) {
      if (out.length() > 1) out.append(',');
      out.append('"').append(e.getKey().replace("\\", "\\\\").replace("\"", "\\\"")).append("\":\"").append(hex(e.getValue())).append('"');
    }
    return out.append('}').toString();
  }

  private static String hex(byte[] bytes) {
    if (bytes == null) return "";
    StringBuilder out = new StringBuilder();
    for (byte b : bytes) out.append(String.format("%02x", b));
    return out.toString();
  }
}
