import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.jute.BinaryInputArchive;
import org.apache.jute.BinaryOutputArchive;
import org.apache.jute.Record;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.MultiOperationRecord;
import org.apache.zookeeper.MultiResponse;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;

/**
 * Java's own Jute classes (the Debian zookeeper 3.8 jars) as the reference for our codec.
 *
 *   emit <Class>...   for each record class, several instances with edge values (chosen per field
 *                     type by reflection), serialized with BinaryOutputArchive: one JSON line each,
 *                     {"type","value","hex"}; then fixed multi request and response bodies.
 *   decode            reads "<Class> <hex>" lines, deserializes with BinaryInputArchive, prints the
 *                     value as JSON (or {"error":...}) per line.
 */
public class Conformance {
  static final int VARIANTS = 4;
  static final int[] INTS = {0, -1, Integer.MAX_VALUE, Integer.MIN_VALUE, 42};
  static final long[] LONGS = {0L, -1L, Long.MAX_VALUE, Long.MIN_VALUE, 0x0123456789abcdefL};
  static final String[] STRINGS = {"/über/日本/ключ", "", null, "/zookeeper/quota", "a,b:c\"d\\e"};
  static final byte[][] BUFFERS = {{0, 1, 2, (byte) 0xff, (byte) 0x80}, {}, null, "hello".getBytes(StandardCharsets.UTF_8)};

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("emit")) {
      for (int i = 1; i < args.length; i++) emit(args[i]);
      emitMulti();
    } else {
      decode();
    }
    System.out.flush();
  }

  static Class<?> recordClass(String simple) throws ClassNotFoundException {
    for (String pkg : new String[] {"org.apache.zookeeper.data.", "org.apache.zookeeper.proto."}) {
      try {
        return Class.forName(pkg + simple);
      } catch (ClassNotFoundException e) {
        // next package
      }
    }
    throw new ClassNotFoundException(simple);
  }

  static List<Field> fields(Class<?> c) {
    List<Field> out = new ArrayList<>();
    for (Field f : c.getDeclaredFields()) {
      if (Modifier.isStatic(f.getModifiers())) continue;
      f.setAccessible(true);
      out.add(f);
    }
    return out;
  }

  static void emit(String simple) throws Exception {
    Class<?> c = recordClass(simple);
    for (int v = 0; v < VARIANTS; v++) {
      Record r = (Record) build(c, v);
      System.out.println("{\"type\":" + q(simple) + ",\"value\":" + json(r) + ",\"hex\":" + q(hex(serialize(r))) + "}");
    }
  }

  /** An instance whose fields take edge values; variant v shifts which value each field gets. */
  static Object build(Class<?> c, int v) throws Exception {
    Object o = c.getDeclaredConstructor().newInstance();
    int k = v;
    for (Field f : fields(c)) {
      f.set(o, value(f.getType(), f.getGenericType(), k++));
    }
    return o;
  }

  static Object value(Class<?> t, Type generic, int k) throws Exception {
    if (t == int.class) return INTS[k % INTS.length];
    if (t == long.class) return LONGS[k % LONGS.length];
    if (t == boolean.class) return k % 2 == 0;
    if (t == byte[].class) return BUFFERS[k % BUFFERS.length];
    if (t == String.class) return STRINGS[k % STRINGS.length];
    if (List.class.isAssignableFrom(t)) {
      Type elem = ((ParameterizedType) generic).getActualTypeArguments()[0];
      switch (k % 3) {
        case 0: return null;
        case 1: return new ArrayList<>();
        default: {
          List<Object> list = new ArrayList<>();
          for (int i = 0; i < 3; i++) {
            list.add(elem == String.class ? STRINGS[(k + i) % 2 == 0 ? 0 : 3] : build((Class<?>) elem, k + i));
          }
          return list;
        }
      }
    }
    if (Record.class.isAssignableFrom(t)) return build(t, k);
    throw new IllegalArgumentException("unsupported field type " + t);
  }

  static byte[] serialize(Record r) throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    r.serialize(BinaryOutputArchive.getArchive(bytes), "r");
    return bytes.toByteArray();
  }

  static void decode() throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      if (line.isEmpty()) continue;
      String[] parts = line.split(" ", 2);
      try {
        byte[] b = unhex(parts.length > 1 ? parts[1] : "");
        BinaryInputArchive ia = BinaryInputArchive.getArchive(new ByteArrayInputStream(b));
        Record r;
        if (parts[0].equals("MultiOperationRecord")) r = new MultiOperationRecord();
        else if (parts[0].equals("MultiResponse")) r = new MultiResponse();
        else r = (Record) recordClass(parts[0]).getDeclaredConstructor().newInstance();
        r.deserialize(ia, "r");
        String value = r instanceof MultiOperationRecord ? multiRequestJson((MultiOperationRecord) r) : r instanceof MultiResponse ? multiResponseJson((MultiResponse) r) : json(r);
        System.out.println("{\"type\":" + q(parts[0]) + ",\"value\":" + value + "}");
      } catch (Exception e) {
        System.out.println("{\"type\":" + q(parts[0]) + ",\"error\":" + q(e.toString()) + "}");
      }
    }
  }

  // --- multi: fixed bodies the TypeScript side builds too ---

  static void emitMulti() throws Exception {
    List<ACL> open = ZooDefs.Ids.OPEN_ACL_UNSAFE;
    List<Op> ops = Arrays.asList(
        Op.create("/m/a", "x".getBytes(StandardCharsets.UTF_8), open, CreateMode.PERSISTENT),
        Op.create("/m/seq-", null, open, CreateMode.EPHEMERAL_SEQUENTIAL),
        Op.create("/m/c", new byte[0], open, CreateMode.CONTAINER),
        Op.create("/m/t", new byte[] {1}, open, CreateMode.PERSISTENT_WITH_TTL, 5000L),
        Op.delete("/m/old", 3),
        Op.setData("/m/a", "y".getBytes(StandardCharsets.UTF_8), -1),
        Op.check("/m", 7));
    MultiOperationRecord write = new MultiOperationRecord(ops);
    System.out.println("{\"type\":\"MultiOperationRecord\",\"value\":" + multiRequestJson(write) + ",\"hex\":" + q(hex(serialize(write))) + "}");
    MultiOperationRecord read = new MultiOperationRecord(Arrays.asList(Op.getChildren("/m"), Op.getData("/m/a")));
    System.out.println("{\"type\":\"MultiOperationRecord\",\"value\":" + multiRequestJson(read) + ",\"hex\":" + q(hex(serialize(read))) + "}");

    Stat stat = (Stat) build(Stat.class, 1);
    MultiResponse results = new MultiResponse();
    results.add(new OpResult.CreateResult("/m/a"));
    results.add(new OpResult.CreateResult("/m/c", stat));
    results.add(new OpResult.DeleteResult());
    results.add(new OpResult.SetDataResult(stat));
    results.add(new OpResult.CheckResult());
    results.add(new OpResult.ErrorResult(-101));
    results.add(new OpResult.GetDataResult("d".getBytes(StandardCharsets.UTF_8), stat));
    results.add(new OpResult.GetChildrenResult(Arrays.asList("a", "日本")));
    System.out.println("{\"type\":\"MultiResponse\",\"value\":" + multiResponseJson(results) + ",\"hex\":" + q(hex(serialize(results))) + "}");
  }

  static String multiRequestJson(MultiOperationRecord m) throws Exception {
    StringBuilder sb = new StringBuilder("[");
    boolean first = true;
    for (Op op : m) {
      if (!first) sb.append(',');
      first = false;
      sb.append("{\"type\":").append(op.getType()).append(",\"record\":").append(json(op.toRequestRecord())).append('}');
    }
    return sb.append(']').toString();
  }

  static String multiResponseJson(MultiResponse m) throws Exception {
    StringBuilder sb = new StringBuilder("[");
    boolean first = true;
    for (OpResult r : m.getResultList()) {
      if (!first) sb.append(',');
      first = false;
      sb.append("{\"type\":").append(r.getType());
      if (r instanceof OpResult.CreateResult) {
        OpResult.CreateResult c = (OpResult.CreateResult) r;
        sb.append(",\"path\":").append(q(c.getPath()));
        if (c.getStat() != null) sb.append(",\"stat\":").append(json(c.getStat()));
      } else if (r instanceof OpResult.SetDataResult) {
        sb.append(",\"stat\":").append(json(((OpResult.SetDataResult) r).getStat()));
      } else if (r instanceof OpResult.ErrorResult) {
        sb.append(",\"err\":").append(((OpResult.ErrorResult) r).getErr());
      } else if (r instanceof OpResult.GetDataResult) {
        OpResult.GetDataResult g = (OpResult.GetDataResult) r;
        sb.append(",\"data\":").append(g.getData() == null ? "null" : q(hex(g.getData()))).append(",\"stat\":").append(json(g.getStat()));
      } else if (r instanceof OpResult.GetChildrenResult) {
        sb.append(",\"children\":").append(jsonValue(((OpResult.GetChildrenResult) r).getChildren()));
      }
      sb.append('}');
    }
    return sb.append(']').toString();
  }

  // --- JSON by reflection: int/boolean as JSON, long as a decimal string, byte[] as hex ---

  static String json(Object record) throws Exception {
    StringBuilder sb = new StringBuilder("{");
    boolean first = true;
    for (Field f : fields(record.getClass())) {
      if (!first) sb.append(',');
      first = false;
      sb.append(q(f.getName())).append(':').append(jsonValue(f.get(record)));
    }
    return sb.append('}').toString();
  }

  static String jsonValue(Object v) throws Exception {
    if (v == null) return "null";
    if (v instanceof Integer || v instanceof Boolean) return v.toString();
    if (v instanceof Long) return q(v.toString());
    if (v instanceof byte[]) return q(hex((byte[]) v));
    if (v instanceof String) return q((String) v);
    if (v instanceof List) {
      StringBuilder sb = new StringBuilder("[");
      boolean first = true;
      for (Object e : (List<?>) v) {
        if (!first) sb.append(',');
        first = false;
        sb.append(jsonValue(e));
      }
      return sb.append(']').toString();
    }
    if (v instanceof Record) return json(v);
    throw new IllegalArgumentException("unsupported value " + v.getClass());
  }

  static String q(String s) {
    if (s == null) return "null";
    StringBuilder sb = new StringBuilder("\"");
    for (char ch : s.toCharArray()) {
      if (ch == '"' || ch == '\\') sb.append('\\').append(ch);
      else if (ch < 0x20 || ch > 0x7e) sb.append(String.format("\\u%04x", (int) ch));
      else sb.append(ch);
    }
    return sb.append('"').toString();
  }

  static String hex(byte[] b) {
    StringBuilder sb = new StringBuilder();
    for (byte x : b) sb.append(String.format("%02x", x & 0xff));
    return sb.toString();
  }

  static byte[] unhex(String s) {
    byte[] out = new byte[s.length() / 2];
    for (int i = 0; i < out.length; i++) out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    return out;
  }
}
