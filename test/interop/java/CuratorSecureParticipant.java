import java.io.BufferedReader;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.framework.api.CuratorEventType;
import org.apache.curator.framework.imps.DefaultACLProvider;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * The Curator side of acl-identities.test.ts and kerberos.test.ts: an InterProcessMutex on a
 * client whose identity comes from the JVM's configuration alone, as a secured deployment
 * configures ZooKeeper's Java client (nothing identity-related in the code):
 * - SASL DIGEST-MD5: `-Djava.security.auth.login.config=<file>` whose `Client` section names
 *   org.apache.zookeeper.server.auth.DigestLoginModule with a username and password;
 * - Kerberos: the same with com.sun.security.auth.module.Krb5LoginModule (`useKeyTab`, a keytab,
 *   a principal), `-Djava.security.krb5.conf=<the test realm's>`, `-Dzookeeper.sasl.client=true`
 *   and `-Dzookeeper.server.principal=zookeeper/localhost@REALM`;
 * - x509: `-Dzookeeper.client.secure=true`,
 *   `-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty` and the
 *   `zookeeper.ssl.keyStore.*` / `zookeeper.ssl.trustStore.*` properties (a PKCS#12 client
 *   certificate, a truststore with the server's).
 *
 *   java ... CuratorSecureParticipant connect lockPath creator|open lifetimeMs [sasl]
 *
 * `sasl`: READY only once the SASL exchange succeeded. When the login or the exchange fails,
 * ZooKeeper's Java client raises AuthFailed and carries on unauthenticated, so a test would run
 * as nobody: AuthFailed (or no outcome within 30 s) ends the process with status 4 and the reason
 * on stderr.
 *
 * `creator`: an ACLProvider answering CREATOR_ALL_ACL for every path (lock nodes and container
 * parents belong to the session's authenticated identity); `open`: Curator's default provider
 * (OPEN_ACL_UNSAFE), the negative control. The process halts with status 3 after `lifetimeMs`.
 *
 * Prints READY once connected, then answers each stdin line with one line:
 * - `whoami`: `WHOAMI scheme:id,...` (ZooKeeper.whoAmI: the identities the server gave the session);
 * - `acquire <ms>`: `ACQUIRED <lock node> <czxid>`, `TIMEOUT`, or `FAILED <exception class>`;
 * - `acl <path>`: `ACL scheme:id:perms,...` or `FAILED <exception class>`;
 * - `delete <path>` / `set <path>`: `DONE` or `FAILED <exception class>` (an intruder's attempts);
 * - `status`: `STATUS <isAcquiredInThisProcess> <present|gone|none>`;
 * - `release`: `RELEASED`.
 * Ends on `exit` or at the end of stdin.
 */
public final class CuratorSecureParticipant {
  private CuratorSecureParticipant() {}

  /** Exposes the lock node of the calling thread's hold (protected in InterProcessMutex). */
  private static final class Mutex extends InterProcessMutex {
    Mutex(CuratorFramework client, String path) {
      super(client, path);
    }

    String node() {
      return getLockPath();
    }
  }

  /** CREATOR_ALL_ACL for every path Curator creates. */
  private static final class CreatorAll implements ACLProvider {
    public List<ACL> getDefaultAcl() {
      return ZooDefs.Ids.CREATOR_ALL_ACL;
    }

    public List<ACL> getAclForPath(String path) {
      return ZooDefs.Ids.CREATOR_ALL_ACL;
    }
  }

  /** A Curator call whose exception is an answer (NoAuth for an intruder), not the end of the process. */
  private interface Call {
    String run() throws Exception;
  }

  private static String answer(Call call) {
    try {
      return call.run();
    } catch (Exception e) {
      return "FAILED " + e.getClass().getSimpleName();
    }
  }

  public static void main(String[] args) throws Exception {
    Interop.expectArgs(args, "CuratorSecureParticipant connect lockPath creator|open lifetimeMs [sasl]", 4, 5);
    if (args.length == 5 && !args[4].equals("sasl")) throw new IllegalArgumentException("the fifth argument is sasl or nothing, not " + args[4]);
    Interop.haltAfter(Long.parseLong(args[3]), "CuratorSecureParticipant");

    CuratorFramework client = CuratorFrameworkFactory.builder()
        .connectString(args[0])
        .sessionTimeoutMs(10_000)
        .connectionTimeoutMs(10_000)
        .retryPolicy(new RetryOneTime(100))
        .aclProvider(args[2].equals("creator") ? new CreatorAll() : new DefaultACLProvider())
        .build();
    // Connection-level events of the ZooKeeper client reach Curator's listeners as WATCHED events.
    CompletableFuture<KeeperState> sasl = new CompletableFuture<>();
    client.getCuratorListenable().addListener((c, event) -> {
      if (event.getType() != CuratorEventType.WATCHED) return;
      KeeperState state = event.getWatchedEvent().getState();
      if (state == KeeperState.SaslAuthenticated || state == KeeperState.AuthFailed) sasl.complete(state);
    });
    client.start();
    if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) {
      client.close();
      throw new IllegalStateException("not connected to " + args[0]);
    }
    if (args.length == 5) {
      KeeperState outcome;
      try {
        outcome = sasl.get(30, TimeUnit.SECONDS);
      } catch (java.util.concurrent.TimeoutException e) {
        outcome = null;
      }
      if (outcome != KeeperState.SaslAuthenticated) {
        System.err.println("CuratorSecureParticipant: SASL " + (outcome == null ? "gave no outcome within 30 s" : outcome) + " (see the JAAS Client section and java.security.krb5.conf)");
        client.close();
        System.exit(4);
      }
    }
    try {
      Mutex mutex = new Mutex(client, args[1]);
      BufferedReader stdin = Interop.stdin();
      Interop.say("READY");
      for (String line; (line = stdin.readLine()) != null && !line.equals("exit");) {
        String[] cmd = line.split(" ");
        switch (cmd[0]) {
          case "whoami":
            Interop.say(answer(() -> "WHOAMI " + client.getZookeeperClient().getZooKeeper().whoAmI().stream()
                .map(i -> i.getAuthScheme() + ":" + i.getUser()).collect(Collectors.joining(","))));
            break;
          case "acquire":
            Interop.say(answer(() -> {
              if (!mutex.acquire(Long.parseLong(cmd[1]), TimeUnit.MILLISECONDS)) return "TIMEOUT";
              Stat stat = client.checkExists().forPath(mutex.node());
              return "ACQUIRED " + mutex.node() + " " + stat.getCzxid();
            }));
            break;
          case "acl":
            Interop.say(answer(() -> "ACL " + client.getACL().forPath(cmd[1]).stream()
                .map(a -> a.getId().getScheme() + ":" + a.getId().getId() + ":" + a.getPerms()).collect(Collectors.joining(","))));
            break;
          case "delete":
            Interop.say(answer(() -> {
              client.delete().forPath(cmd[1]);
              return "DONE";
            }));
            break;
          case "set":
            Interop.say(answer(() -> {
              client.setData().forPath(cmd[1], new byte[] {'x'});
              return "DONE";
            }));
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
}
