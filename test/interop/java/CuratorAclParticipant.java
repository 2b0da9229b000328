import java.io.BufferedReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.framework.imps.DefaultACLProvider;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * The Curator side of the ACL interop tests (acl.test.ts): an InterProcessMutex on a client built
 * with an ACLProvider and digest credentials, as an operator of a secured cluster would build it.
 *
 *   java CuratorAclParticipant connect lockPath creator|open user:password|- lifetimeMs
 *
 * - `creator`: an ACLProvider answering ZooDefs.Ids.CREATOR_ALL_ACL for every path, so the lock
 *   node and the container parents Curator creates belong to the digest identity of the session;
 *   `open`: Curator's DefaultACLProvider (OPEN_ACL_UNSAFE), the negative control.
 * - `user:password`: CuratorFrameworkFactory.Builder.authorization("digest", ...); `-`: none.
 * - `lifetimeMs`: the process halts with status 3 after this long whatever it is doing, so a test
 *   that lost track of it (or a Curator call that hangs) cannot leave it running.
 *
 * Prints READY once connected, then answers each stdin line with one line:
 * - `acquire <ms>`: InterProcessMutex.acquire(ms) -> `ACQUIRED <lock node> <its czxid>`,
 *   `TIMEOUT`, or `FAILED <exception class>` (NoAuthException for an intruder);
 * - `status`: `STATUS <isAcquiredInThisProcess> <present|gone|none>`, whether this process
 *   believes it holds the mutex, and whether its lock node still exists (none: no lock node);
 * - `release`: InterProcessMutex.release() -> `RELEASED`.
 * Ends on `exit` or at the end of stdin.
 */
public final class CuratorAclParticipant {
  private CuratorAclParticipant() {}

  /** Exposes the lock node of the hold of the calling thread (protected in InterProcessMutex). */
  private static final class Mutex extends InterProcessMutex {
    Mutex(CuratorFramework client, String path) {
      super(client, path);
    }

    String node() {
      return getLockPath();
    }
  }

  /** Curator's ACLProvider giving CREATOR_ALL_ACL everywhere: what a secured deployment configures. */
  private static final ACLProvider CREATOR_ALL = new ACLProvider() {
    public List<ACL> getDefaultAcl() {
      return ZooDefs.Ids.CREATOR_ALL_ACL;
    }

    public List<ACL> getAclForPath(String path) {
      return ZooDefs.Ids.CREATOR_ALL_ACL;
    }
  };

  public static void main(String[] args) throws Exception {
    Interop.expectArgs(args, "CuratorAclParticipant connect lockPath creator|open user:password|- lifetimeMs", 5);
    Interop.haltAfter(Long.parseLong(args[4]), "CuratorAclParticipant");
    CuratorFramework client = connect(args[0], args[2].equals("creator") ? CREATOR_ALL : new DefaultACLProvider(), args[3]);
    try {
      Mutex mutex = new Mutex(client, args[1]);
      BufferedReader stdin = Interop.stdin();
      Interop.say("READY");
      for (String line; (line = stdin.readLine()) != null && !line.equals("exit");) {
        String[] cmd = line.split(" ");
        switch (cmd[0]) {
          case "acquire":
            Interop.say(acquire(client, mutex, Long.parseLong(cmd[1])));
            break;
          case "status":
            String node = mutex.isAcquiredInThisProcess() ? mutex.node() : null;
            String exists = node == null ? "none" : client.checkExists().forPath(node) == null ? "gone" : "present";
            Interop.say("STATUS " + mutex.isAcquiredInThisProcess() + " " + exists);
            break;
          case "release":
            mutex.release();
            Interop.say("RELEASED");
            break;
          default:
            throw new IllegalArgumentException("unknown command " + line);
        }
      }
    } finally {
      client.close();
    }
  }

  /** One acquire, answered as a line; an exception (NoAuth) is an answer too, not the end of the process. */
  private static String acquire(CuratorFramework client, Mutex mutex, long ms) throws Exception {
    try {
      if (!mutex.acquire(ms, TimeUnit.MILLISECONDS)) return "TIMEOUT";
    } catch (Exception e) {
      return "FAILED " + e.getClass().getSimpleName();
    }
    Stat stat = client.checkExists().forPath(mutex.node());
    return "ACQUIRED " + mutex.node() + " " + stat.getCzxid();
  }

  /**
   * A started client with `aclProvider` and, unless `credentials` is `-`, digest credentials,
   * connected (or an exception after 30 s). As Interop.connect: one retry, so failures surface.
   */
  private static CuratorFramework connect(String connect, ACLProvider aclProvider, String credentials) throws InterruptedException {
    CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
        .connectString(connect)
        .sessionTimeoutMs(10_000)
        .connectionTimeoutMs(10_000)
        .retryPolicy(new RetryOneTime(100))
        .aclProvider(aclProvider);
    if (!credentials.equals("-")) builder.authorization("digest", credentials.getBytes(StandardCharsets.UTF_8));
    CuratorFramework client = builder.build();
    client.start();
    if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
      client.close();
      throw new IllegalStateException("not connected to " + connect);
    }
    return client;
  }
}
