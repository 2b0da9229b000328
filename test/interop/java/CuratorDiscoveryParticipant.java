import java.io.BufferedReader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.ServiceProvider;
import org.apache.curator.x.discovery.ServiceType;
import org.apache.curator.x.discovery.UriSpec;
import org.apache.curator.x.discovery.details.JsonInstanceSerializer;

/**
 * The Curator side of the discovery interop test (discovery.test.ts): a ServiceDiscovery of
 * curator-x-discovery built the usual way, `ServiceDiscoveryBuilder.builder(payloadClass)` with
 * its default serializer, on `basePath`. The payload class is `Map` (mode `map`) or the POJO
 * {@link Pojo} (mode `pojo`).
 *
 *   java CuratorDiscoveryParticipant connect basePath map|pojo sessionTimeoutMs
 *
 * Prints READY, then answers one line per stdin command:
 *   register name id port   REGISTERED <json>          (a DYNAMIC instance; the json as below)
 *   query name              INSTANCES <json array>     (queryForInstances), or ERROR <class>: <message>
 *   pick name count size    PICKED id,id,...           (a started ServiceProvider, round robin by default,
 *                                                        once it holds `size` instances), or ERROR ...
 *   exit                    closes and exits
 * Each instance is printed as `new JsonInstanceSerializer(payloadClass, false)` writes it (with
 * `enabled`): what Java made of the node, field by field.
 */
public final class CuratorDiscoveryParticipant {
  private CuratorDiscoveryParticipant() {}

  /** The POJO payload of mode `pojo` (Jackson: public fields, no-argument constructor). */
  public static final class Pojo {
    public String lang;
    public String id;
    public int weight;
    public List<String> tags;

    public Pojo() {}
  }

  public static void main(String[] args) throws Exception {
    Interop.expectArgs(args, "CuratorDiscoveryParticipant connect basePath map|pojo sessionTimeoutMs", 4);
    boolean pojo = args[2].equals("pojo");
    CuratorFramework client = Interop.connect(args[0], Integer.parseInt(args[3]));
    if (pojo) run(client, args[1], Pojo.class, CuratorDiscoveryParticipant::pojoPayload);
    else run(client, args[1], Map.class, CuratorDiscoveryParticipant::mapPayload);
  }

  interface Payloads<T> {
    T make(String id, int port);
  }

  @SuppressWarnings({"rawtypes", "unchecked"})
  static Map mapPayload(String id, int port) {
    Map<String, Object> nested = new LinkedHashMap<>();
    nested.put("ok", true);
    nested.put("ratio", 0.5);
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("lang", "java");
    m.put("id", id);
    m.put("port", port);
    m.put("tags", Arrays.asList("a", "b"));
    m.put("nested", nested);
    m.put("none", null);
    return m;
  }

  static Pojo pojoPayload(String id, int port) {
    Pojo p = new Pojo();
    p.lang = "java";
    p.id = id;
    p.weight = port % 7;
    p.tags = new ArrayList<>(Arrays.asList("x", "y"));
    return p;
  }

  static <T> void run(CuratorFramework client, String basePath, Class<T> payloadClass, Payloads<T> payloads) throws Exception {
    ServiceDiscovery<T> discovery = ServiceDiscoveryBuilder.builder(payloadClass).client(client).basePath(basePath).build();
    JsonInstanceSerializer<T> printer = new JsonInstanceSerializer<>(payloadClass, false);
    Map<String, ServiceProvider<T>> providers = new HashMap<>();
    discovery.start();
    BufferedReader stdin = Interop.stdin();
    Interop.say("READY");
    try {
      for (String line; (line = stdin.readLine()) != null && !line.equals("exit"); ) {
        String[] w = line.split(" ");
        try {
          switch (w[0]) {
            case "register": {
              int port = Integer.parseInt(w[3]);
              ServiceInstance<T> instance = ServiceInstance.<T>builder()
                  .name(w[1])
                  .id(w[2])
                  .address("java-" + w[2] + ".example")
                  .port(port)
                  .sslPort(port + 1)
                  .payload(payloads.make(w[2], port))
                  .serviceType(ServiceType.DYNAMIC)
                  .uriSpec(new UriSpec("{scheme}://{address}:{port}/v1"))
                  .build();
              discovery.registerService(instance);
              Interop.say("REGISTERED " + new String(printer.serialize(instance), "UTF-8"));
              break;
            }
            case "query": {
              Collection<ServiceInstance<T>> found = discovery.queryForInstances(w[1]);
              List<String> json = new ArrayList<>();
              for (ServiceInstance<T> i : found) json.add(new String(printer.serialize(i), "UTF-8"));
              Interop.say("INSTANCES [" + String.join(",", json) + "]");
              break;
            }
            case "pick": {
              ServiceProvider<T> provider = providers.get(w[1]);
              if (provider == null) {
                provider = discovery.serviceProviderBuilder().serviceName(w[1]).build();
                provider.start();
                providers.put(w[1], provider);
              }
              int size = Integer.parseInt(w[3]);
              long deadline = System.currentTimeMillis() + 20_000;
              while (provider.getAllInstances().size() != size && System.currentTimeMillis() < deadline) Thread.sleep(10);
              List<String> ids = new ArrayList<>();
              for (int n = Integer.parseInt(w[2]); n > 0; n--) {
                ServiceInstance<T> picked = provider.getInstance();
                ids.add(picked == null ? "-" : picked.getId());
              }
              Interop.say("PICKED " + String.join(",", ids));
              break;
            }
            default:
              Interop.say("ERROR unknown command " + w[0]);
          }
        } catch (Exception e) {
          Interop.say("ERROR " + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).split("\n")[0]);
        }
      }
    } finally {
      for (ServiceProvider<T> p : providers.values()) p.close();
      discovery.close();
      client.close();
    }
  }
}
