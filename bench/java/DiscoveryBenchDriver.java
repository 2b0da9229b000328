// RecipeBenchDriver's commands plus curator-x-discovery's ServiceDiscovery (issue 23), for
// bench/workloads/recipes.ts; compiled and run instead of RecipeBenchDriver when the discovery jar
// (libcurator-discovery-java, with Jackson) is installed.
//
//   java -cp <curator jars>:<discovery and jackson jars>:<classes> DiscoveryBenchDriver <connect>
//
// The added command, answered with a RESULT line as RecipeBenchDriver's commands are:
//   query <basePath> <name> <count> <expected>
//       a ServiceDiscovery (payload class Map, the default JSON serializer) on <basePath>, started
//       before the measurement; <count> queryForInstances(<name>), one after another, each timed,
//       each checked to return <expected> instances.

import java.util.Collection;
import java.util.Map;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;

public final class DiscoveryBenchDriver {
  private DiscoveryBenchDriver() {}

  public static void main(String[] args) throws Exception {
    RecipeBenchDriver.serve(args, DiscoveryBenchDriver::handle);
  }

  private static boolean handle(CuratorFramework client, String[] w) throws Exception {
    if (w.length != 5 || !w[0].equals("query")) return false;
    query(client, w[1], w[2], Integer.parseInt(w[3]), Integer.parseInt(w[4]));
    return true;
  }

  @SuppressWarnings({"rawtypes", "unchecked"})
  private static void query(CuratorFramework client, String basePath, String name, int count, int expected) throws Exception {
    ServiceDiscovery<Map> discovery = ServiceDiscoveryBuilder.builder(Map.class).client(client).basePath(basePath).build();
    discovery.start();
    try {
      RecipeBenchDriver.timeEach(count, (i) -> {
        Collection<ServiceInstance<Map>> found = discovery.queryForInstances(name);
        if (found.size() != expected) throw new IllegalStateException("query " + i + " found " + found.size() + " instances of " + name + ", expected " + expected);
      });
    } finally {
      discovery.close();
    }
  }
}
