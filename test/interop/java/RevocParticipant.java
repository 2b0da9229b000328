import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.retry.RetryOneTime;

/**
 * Curator's revocation, for the interop test (multi-lock.test.ts).
 *
 * Arguments: connectString mode path
 *   holder: takes an InterProcessMutex on path after makeRevocable(listener), prints ACQUIRED;
 *           when the listener is called prints REVOCATION_REQUESTED, releases (from the thread
 *           that acquired: Curator's release is per thread), prints RELEASED and exits.
 *   revoke: Revoker.attemptRevoke(client, path) on the lock node path, prints REVOKED and exits.
 */
public class RevocParticipant {
  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: RevocParticipant connect holder|revoke path");
      System.exit(2);
    }
    CuratorFramework client = CuratorFrameworkFactory.newClient(args[0], 10_000, 10_000, new RetryOneTime(100));
    client.start();
    try {
      if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) throw new IllegalStateException("not connected to " + args[0]);
      if (args[1].equals("revoke")) {
        Revoker.attemptRevoke(client, args[2]);
        say("REVOKED");
        return;
      }
      InterProcessMutex mutex = new InterProcessMutex(client, args[2]);
      CountDownLatch requested = new CountDownLatch(1);
      mutex.makeRevocable(lock -> requested.countDown());
      mutex.acquire();
      say("ACQUIRED");
      requested.await();
      say("REVOCATION_REQUESTED");
      mutex.release();
      say("RELEASED");
    } finally {
      client.close();
    }
  }

  private static void say(String line) {
    System.out.println(line);
    System.out.flush();
  }
}
