import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.CreateMode;

/**
 * The Java half of node-and-curator: Apache Curator's InterProcessMutex on the lock path that
 * examples/node-and-curator.ts takes with @zk/locks' Mutex. While holding the lock, each side
 * appends "enter" and "leave" lines to one shared file, so the file shows who held it when.
 * Both sides start their rounds together, then take turns: the lock is fair (first come, first
 * served), and each side queues again while the other holds it.
 *
 * Run it with Debian's Curator jars (apt-get install libcurator-recipes-java libslf4j-java),
 * no build step needed (Java 11+ runs a single source file):
 *   java -cp /usr/share/java/curator-recipes.jar:/usr/share/java/slf4j-nop.jar examples/CuratorTurns.java [rounds] [file]
 * The connect string comes from ZK_CONNECT (default 127.0.0.1:2181).
 */
public class CuratorTurns {
  static final String LOCK_PATH = "/examples/node-and-curator/lock";
  /** Each side announces itself here (an ephemeral node) and starts once both are there. */
  static final String READY_PATH = "/examples/node-and-curator/ready";

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    Path file = Path.of(args.length > 1 ? args[1] : "/tmp/zk-example-turns.log");
    String connect = System.getenv().getOrDefault("ZK_CONNECT", "127.0.0.1:2181");

    try (CuratorFramework client = CuratorFrameworkFactory.newClient(connect, 10_000, 10_000, new ExponentialBackoffRetry(100, 3))) {
      client.start();
      if (!client.blockUntilConnected(30, TimeUnit.SECONDS)) throw new IllegalStateException("not connected to " + connect);
      System.out.println("curator connected");
      client.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(READY_PATH + "/curator");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (client.getChildren().forPath(READY_PATH).size() < 2) { // polls: short and plain
        if (System.nanoTime() > deadline) throw new IllegalStateException("the Node side did not start within 30 s");
        Thread.sleep(50);
      }
      InterProcessMutex mutex = new InterProcessMutex(client, LOCK_PATH);
      for (int round = 1; round <= rounds; round++) {
        if (!mutex.acquire(30, TimeUnit.SECONDS)) throw new IllegalStateException("lock not acquired in 30 s");
        try {
          append(file, "enter curator " + round);
          System.out.println("curator holds the lock, round " + round);
          Thread.sleep(200); // the work done under the lock
          append(file, "leave curator " + round);
        } finally {
          mutex.release();
        }
      }
    }
    System.out.println("curator done");
  }

  static void append(Path file, String line) throws Exception {
    Files.writeString(file, line + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }
}
