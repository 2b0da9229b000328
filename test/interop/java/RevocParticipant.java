import java.util.concurrent.CountDownLatch;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.Revoker;

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
    Interop.expectArgs(args, "RevocParticipant connect holder|revoke path", 3);
    try (CuratorFramework client = Interop.connect(args[0], 10_000)) {
      if (args[1].equals("revoke")) {
        Revoker.attemptRevoke(client, args[2]);
        Interop.say("REVOKED");
        return;
      }
      InterProcessMutex mutex = new InterProcessMutex(client, args[2]);
      CountDownLatch requested = new CountDownLatch(1);
      mutex.makeRevocable(lock -> requested.countDown());
      mutex.acquire();
      Interop.say("ACQUIRED");
      requested.await();
      Interop.say("REVOCATION_REQUESTED");
      mutex.release();
      Interop.say("RELEASED");
    }
  }
}
