import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.atomic.AtomicValue;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicInteger;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicLong;
import org.apache.curator.framework.recipes.atomic.DistributedAtomicValue;
import org.apache.curator.framework.recipes.atomic.PromotedToLock;
import org.apache.curator.retry.RetryNTimes;

/**
 * The Curator side of the counter interop test (atomic-long.test.ts): `iterations` increments of
 * a DistributedAtomicLong (kind `long`, the default) or DistributedAtomicInteger (`int`) of
 * Curator 5, optimistic with RetryNTimes(10, 10 ms) and promoted to an InterProcessMutex on
 * `lockPath` after that; or (`value`) `iterations` appends of `<id>:<i>;` to a
 * DistributedAtomicValue's bytes, each a compareAndSet of what was read, read again until one
 * succeeds.
 *
 *   java CuratorCounterParticipant connect path lockPath iterations id [long|int|value]
 *
 * Prints READY once connected, starts on the first stdin line, and ends with
 * `{"id","succeeded","failed"}`: how many increments reported success and how many did not
 * (an increment Curator gave up on is tried again, up to 20 times, as its users would).
 */
public final class CuratorCounterParticipant {
  private CuratorCounterParticipant() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 5) Interop.expectArgs(args, "CuratorCounterParticipant connect path lockPath iterations id [long|int|value]", 5);
    String kind = args.length > 5 ? args[5] : "long";
    CuratorFramework client = Interop.connect(args[0], 10_000);
    try {
      PromotedToLock promoted = PromotedToLock.builder().lockPath(args[2]).timeout(30, TimeUnit.SECONDS).retryPolicy(new RetryNTimes(10, 10)).build();
      DistributedAtomicLong longs = new DistributedAtomicLong(client, args[1], new RetryNTimes(10, 10), promoted);
      DistributedAtomicInteger ints = new DistributedAtomicInteger(client, args[1], new RetryNTimes(10, 10), promoted);
      DistributedAtomicValue bytes = new DistributedAtomicValue(client, args[1], new RetryNTimes(10, 10), promoted);
      int iterations = Integer.parseInt(args[3]);
      Interop.awaitStart(Interop.stdin());
      int succeeded = 0;
      int failed = 0;
      for (int i = 0; i < iterations; i++) {
        boolean ok;
        // Curator reports an increment it gave up on (its retries ran out under contention) as
        // not succeeded: nothing was applied, and its users try again. So do we, a few times.
        if (kind.equals("int")) {
          ok = false;
          for (int tries = 0; tries < 20 && !ok; tries++) ok = ints.increment().succeeded();
        } else if (kind.equals("value")) {
          byte[] entry = (args[4] + ":" + i + ";").getBytes(java.nio.charset.StandardCharsets.UTF_8);
          ok = false;
          for (int tries = 0; tries < 1000 && !ok; tries++) {
            byte[] now = bytes.get().postValue();
            byte[] next = new byte[(now == null ? 0 : now.length) + entry.length];
            if (now != null) System.arraycopy(now, 0, next, 0, now.length);
            System.arraycopy(entry, 0, next, next.length - entry.length, entry.length);
            ok = bytes.compareAndSet(now, next).succeeded();
          }
        } else {
          ok = false;
          for (int tries = 0; tries < 20 && !ok; tries++) ok = longs.increment().succeeded();
        }
        if (ok) succeeded++;
        else failed++;
      }
      Interop.say("{\"id\":\"" + args[4] + "\",\"succeeded\":" + succeeded + ",\"failed\":" + failed + "}");
    } finally {
      client.close();
    }
  }
}
