import java.nio.charset.StandardCharsets;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.queue.DistributedDelayQueue;
import org.apache.curator.framework.recipes.queue.DistributedIdQueue;
import org.apache.curator.framework.recipes.queue.DistributedPriorityQueue;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.MultiItem;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.state.ConnectionState;

/**
 * The Curator side of the queue interop test (queue.test.ts): a DistributedQueue,
 * DistributedPriorityQueue, DistributedDelayQueue or DistributedIdQueue of Curator 5, items as
 * UTF-8 strings, in safe mode when a lock path is given.
 *
 *   java CuratorQueueParticipant connect produce plain|multi|priority|delay|id path lockPath|- count prefix [dueInMs]
 *   java CuratorQueueParticipant connect consume plain|priority|delay|id path lockPath|- delayMs id
 *
 * produce: prints READY, waits for a stdin line, puts `count` items `<prefix><i>` in the
 * foreground, then prints DONE and exits. priority: `<prefix><i>:<priority>` with the priority
 * {@link #priorityOf}(i); multi: `count` nodes by putMulti, each holding `<prefix><i>a` and
 * `<prefix><i>b`; delay: due `dueInMs` after the start line; id: under the id `id-<i % 5>`.
 * consume: starts the consumer, prints READY, then `ITEM <value>` for each item it consumed
 * (`ITEM <value>@<currentTimeMillis>` for a delay queue; sleeping `delayMs` in each), until a
 * stdin line stops it.
 */
public final class CuratorQueueParticipant {
  private CuratorQueueParticipant() {}

  /** A spread of priorities, negative ones included (the same formula as the test's). */
  static int priorityOf(int i) {
    return (i * 7919) % 1000 - 500;
  }

  static final QueueSerializer<String> UTF8 = new QueueSerializer<String>() {
    public byte[] serialize(String item) {
      return item.getBytes(StandardCharsets.UTF_8);
    }

    public String deserialize(byte[] bytes) {
      return new String(bytes, StandardCharsets.UTF_8);
    }
  };

  /** A MultiItem of `<base>a` and `<base>b`. */
  static MultiItem<String> pair(String base) {
    String[] items = {base + "a", base + "b"};
    int[] next = {0};
    return () -> next[0] < items.length ? items[next[0]++] : null;
  }

  public static void main(String[] args) throws Exception {
    Interop.expectArgs(args, "CuratorQueueParticipant connect produce|consume plain|multi|priority|delay|id path lockPath|- count|delayMs prefix|id [dueInMs]", 7, 8);
    boolean produce = args[1].equals("produce");
    String kind = args[2];
    boolean priority = kind.equals("priority");
    String lockPath = args[4].equals("-") ? null : args[4];
    CuratorFramework client = Interop.connect(args[0], 10_000);
    try {
      QueueConsumer<String> consumer = new QueueConsumer<String>() {
        public void consumeMessage(String message) throws Exception {
          Interop.say("ITEM " + message + (kind.equals("delay") ? "@" + System.currentTimeMillis() : ""));
          long delay = Long.parseLong(args[5]);
          if (delay > 0) Thread.sleep(delay);
        }

        public void stateChanged(CuratorFramework c, ConnectionState state) {}
      };
      QueueBuilder<String> builder = QueueBuilder.builder(client, produce ? null : consumer, UTF8, args[3]).putInBackground(false);
      if (lockPath != null) builder = builder.lockPath(lockPath);
      if (produce) {
        int count = Integer.parseInt(args[5]);
        String prefix = args[6];
        if (priority) {
          DistributedPriorityQueue<String> queue = builder.buildPriorityQueue(0);
          queue.start();
          Interop.awaitStart(Interop.stdin());
          for (int i = 0; i < count; i++) queue.put(prefix + i + ":" + priorityOf(i), priorityOf(i));
          queue.close();
        } else if (kind.equals("delay")) {
          DistributedDelayQueue<String> queue = builder.buildDelayQueue();
          queue.start();
          Interop.awaitStart(Interop.stdin());
          long due = System.currentTimeMillis() + Long.parseLong(args[7]);
          for (int i = 0; i < count; i++) queue.put(prefix + i, due);
          queue.close();
        } else if (kind.equals("id")) {
          DistributedIdQueue<String> queue = builder.buildIdQueue();
          queue.start();
          Interop.awaitStart(Interop.stdin());
          for (int i = 0; i < count; i++) queue.put(prefix + i, "id-" + (i % 5));
          queue.close();
        } else {
          DistributedQueue<String> queue = builder.buildQueue();
          queue.start();
          Interop.awaitStart(Interop.stdin());
          for (int i = 0; i < count; i++) {
            if (kind.equals("multi")) queue.putMulti(pair(prefix + i));
            else queue.put(prefix + i);
          }
          queue.close();
        }
        Interop.say("DONE");
        return;
      }
      java.io.Closeable queue;
      if (priority) {
        DistributedPriorityQueue<String> q = builder.buildPriorityQueue(0);
        q.start();
        queue = q;
      } else if (kind.equals("delay")) {
        DistributedDelayQueue<String> q = builder.buildDelayQueue();
        q.start();
        queue = q;
      } else if (kind.equals("id")) {
        DistributedIdQueue<String> q = builder.buildIdQueue();
        q.start();
        queue = q;
      } else {
        DistributedQueue<String> q = builder.buildQueue();
        q.start();
        queue = q;
      }
      Interop.say("READY");
      Interop.stdin().readLine();
      queue.close();
      Interop.say("STOPPED");
    } finally {
      client.close();
    }
  }
}
