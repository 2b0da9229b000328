// The Curator side of the lease fleet row (issue 35), driven by bench/workloads/fleet.ts; the Node
// side is bench/workloads/fleet-child.ts and speaks the same lines.
//
//   java -cp <curator jars>:<classes> FleetBenchDriver <connect> <path> <first> <count> <sessionTimeoutMs>
//
// <count> CuratorFramework clients (one session each), each holding one InterProcessMutex on
// <path>/<first + i>, idle: Curator writes nothing while a lock is held. Prints
// "HOLDING <count> <negotiated session timeout ms>" once every lock is held. On stdin:
//   stats    prints STATS {"cpuUs":..,"proofs":0,"lost":..,"suspended":..}: this JVM's CPU so far
//            (all threads), and the connection state changes to LOST and SUSPENDED seen so far
//   release  releases every lock (on this thread, which acquired them), then prints RELEASED
// When stdin ends every client is closed and the JVM exits. A failure prints ERROR <message>.
//
// Only the protocol lines go to stdout; Curator logs nowhere (slf4j-nop on the classpath).

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;

public final class FleetBenchDriver {
  /** How long a client may take to connect, and a lock to be acquired, before the driver fails. */
  private static final long WAIT_S = 60;

  public static void main(String[] args) throws Exception {
    if (args.length != 5) {
      System.err.println("usage: FleetBenchDriver <connect> <path> <first> <count> <sessionTimeoutMs>");
      System.exit(2);
    }
    String connect = args[0];
    String path = args[1];
    int first = Integer.parseInt(args[2]);
    int count = Integer.parseInt(args[3]);
    int sessionTimeoutMs = Integer.parseInt(args[4]);
    AtomicInteger lost = new AtomicInteger();
    AtomicInteger suspended = new AtomicInteger();
    List<CuratorFramework> clients = new ArrayList<>();
    List<InterProcessMutex> held = new ArrayList<>();
    try {
      for (int i = 0; i < count; i++) {
        CuratorFramework c = CuratorFrameworkFactory.builder()
            .connectString(connect)
            .sessionTimeoutMs(sessionTimeoutMs)
            .connectionTimeoutMs(15_000)
            .retryPolicy(new ExponentialBackoffRetry(100, 3))
            .build();
        c.getConnectionStateListenable().addListener((client, state) -> {
          if (state == ConnectionState.LOST) lost.incrementAndGet();
          else if (state == ConnectionState.SUSPENDED) suspended.incrementAndGet();
        });
        c.start();
        clients.add(c);
      }
      for (CuratorFramework c : clients) {
        if (!c.blockUntilConnected((int) WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("not connected to " + connect);
      }
      for (int i = 0; i < count; i++) {
        InterProcessMutex mutex = new InterProcessMutex(clients.get(i), path + "/" + (first + i));
        if (!mutex.acquire(WAIT_S, TimeUnit.SECONDS)) throw new IllegalStateException("lock " + (first + i) + " not acquired within " + WAIT_S + " s");
        held.add(mutex);
      }
      say("HOLDING " + count + " " + clients.get(0).getZookeeperClient().getZooKeeper().getSessionTimeout());
      BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line; (line = stdin.readLine()) != null; ) {
        if (line.equals("stats")) {
          say("STATS {\"cpuUs\":" + JvmMeter.cpuUs() + ",\"proofs\":0,\"lost\":" + lost.get() + ",\"suspended\":" + suspended.get() + "}");
        } else if (line.equals("release")) {
          try {
            for (InterProcessMutex m : held) m.release();
            held.clear();
            say("RELEASED");
          } catch (Exception e) {
            say("ERROR release: " + String.valueOf(e).replace('\n', ' '));
          }
        }
      }
    } catch (Exception e) {
      say("ERROR " + String.valueOf(e).replace('\n', ' '));
    } finally {
      for (CuratorFramework c : clients) c.close();
    }
    System.exit(0);
  }

  private static void say(String line) {
    synchronized (System.out) {
      System.out.println(line);
      System.out.flush();
    }
  }
}
