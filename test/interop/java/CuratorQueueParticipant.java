import java.nio.charset.StandardCharsets;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.queue.DistributedPriorityQueue;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.state.ConnectionState;

/**
 * The Curator side of the queue interop test (queue.test.ts): a DistributedQueue or a
 * DistributedPriorityQueue of Curator 5, items as UTF-8 strings, in safe mode when a lock path is
 * given.
 *
 *   java CuratorQueueParticipant connect produce plain|priority path lockPath|- count prefix
 *   java CuratorQueueParticipant connect consume plain|priority path lockPath|- delayMs id
 *
 * produce: prints READY, waits for a stdin line, puts `count` items `<prefix><i>` (priority queue:
 * `<prefix><i>:<priority>` with the priority of item i given by {@link #priorityOf}), each put in
 * the foreground, then prints DONE and exits.
 * consume: starts the consumer, prints READY, then `ITEM <value>` for each item it consumed
 * (sleeping `delayMs` in each), until a stdin line stops it.
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

  public static void main(String[] args) throws Exception {
    Interop.expectArgs(args, "CuratorQueueParticipant connect produce|consume plain|priority path lockPath|- count|delayMs prefix|id", 7);
    boolean produce = args[1].equals("produce");
    boolean priority = args[2].equals("priority");
    String lockPath = args[4].equals("-") ? null : args[4];
    CuratorFramework client = Interop.connect(args[0], 10_000);
    try {
      QueueConsumer<String> consumer = new QueueConsumer<String>() {
        public void consumeMessage(String message) throws Exception {
          Interop.say("ITEM " + message);
          long delay = Long.parseLong(args[5]);
          if (delay > 0) Thread.sleep(delay);
        }

        public void stateChanged(CuratorFramework c, ConnectionState state) {}
      };
      QueueBuilder<String> builder = QueueBuilder.builder(client, produce ? null : consumer, UTF8, args[3]).putInBackground(false);
      if (lockPath != null) builder = builder.lockPath(lockPath);
      if (produce) {
        int count = Integer.parseInt(args[5]);
        if (priority) {
          DistributedPriorityQueue<String> queue = builder.buildPriorityQueue(0);
          queue.start();
          Interop.awaitStart(Interop.stdin());
          for (int i = 0; i < count; i++) queue.put(args[6] + i + ":" + priorityOf(i), priorityOf(i));
          queue.close();
        } else {
          DistributedQueue<String> queue = builder.buildQueue();
          queue.start();
          Interop.awaitStart(Interop.stdin());
          for (int i = 0; i < count; i++) queue.put(args[6] + i);
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
