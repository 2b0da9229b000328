import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.atomic.PromotedToLock;
import org.apache.curator.retry.RetryNTimes;

/**
 * The Curator side of the counter interop test (atomic-long.test.ts): `iterations` increments of
 * a DistributedAtomicLong of Curator 5, optimistic with RetryNTimes(10, 10 ms) and promoted to an
 * InterProcessMutex on `lockPath` after that.
 *
 *   java CuratorCounterParticipant connect path lockPath iterations id
 *
 * Prints READY once connected, starts on the first stdin line, and ends with
 * `{"id","succeeded","failed"}`: how many increments reported success and how many did not.
 */
public final class CuratorCounterParticipant {
  private CuratorCounterParticipant() {}

  public static void main(String[] args) throws Exception {
    Interop.expectArgs(args, "CuratorCounterParticipant connect path lockPath iterations id", 5);
    CuratorFramework client = Interop.connect(args[0], 10_000);
    try {
      PromotedToLock promoted = PromotedToLock.builder().lockPath(args[2]).timeout(30, TimeUnit.SECONDS).retryPolicy(new RetryNTimes(10, 10)).build();
      DistributedAtomicLong counter = new DistributedAtomicLong(client, args[1], new RetryNTimes(10, 10), promoted);
      int iterations = Integer.parseInt(args[3]);
      Interop.awaitStart(Interop.stdin());
      int succeeded = 0;
      int failed = 0;
      for (int i = 0; i < iterations; i++) {
        AtomicValue<Long> result = counter.increment();
        if (result.succeeded()) succeeded++;
        else failed++;
      }
      Interop.say("{\"id\":\"" + args[4] + "\",\"succeeded\":" + succeeded + ",\"failed\":" + failed + "}");
    } finally {
      client.close();
    }
  }
}
