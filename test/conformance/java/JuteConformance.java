import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

import org.apache.jute.BinaryInputArchive;
import org.apache.jute.BinaryOutputArchive;
import org.apache.jute.OutputArchive;
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
import org.apache.zookeeper.proto.CreateRequest;
import org.apache.zookeeper.proto.MultiHeader;

/**
 * Java's own Jute classes (the Debian zookeeper 3.8 jars) as the reference for our codec.
 *
 *   emit <Class>...   for each record class: a schema line {"schema","fields":[{name,kind}]}, then
 *                     several instances with edge values (chosen per field type by reflection),
 *                     serialized with BinaryOutputArchive: {"type","value","hex","hexUtf8"}; then
 *                     multi request and response bodies; last {"unregistered":[...]}, the record
 *                     classes of the jute jar that were not asked for.
 *   decode            reads "<Class> <hex>" lines, deserializes with BinaryInputArchive, prints
 *                     {"type","value"} (or {"type","error"}) per line.
 *
 * "hexUtf8" is the same record serialized by an archive whose only difference is that strings
 * are standard UTF-8. Java's writeString encodes each UTF-16 unit on its own, so a character
 * outside the BMP takes 6 bytes instead of 4; hexUtf8 differs from hex exactly in those cases.
 */
public class JuteConformance {
  static final String JUTE_JAR = "/usr/share/java/zookeeper-jute.jar";
  /** Ordinary variants per record; one more, with every string outside the BMP, follows when the record has strings. */
  static final int VARIANTS = 4;
  static final int[] INTS = {0, -1, Integer.MAX_VALUE, Integer.MIN_VALUE, 42};
  static final long[] LONGS = {0L, -1L, Long.MAX_VALUE, Long.MIN_VALUE, 0x0123456789abcdefL, 1L << 53 | 1};
  /** A Stat's ctime and mtime: ms, which our client reads as numbers, so within +-(2^53 - 1) (a double's exact integers). */
  static final long[] TIMES = {0L, -1L, (1L << 53) - 1, -((1L << 53) - 1), 1795932004690L};
  static final String[] STRINGS = {"/über/日本語/ключ", "", null, "/zookeeper/quota", "a,b:c\"d\\e\u0000\n\ufffd"};
  static final String NON_BMP = "/emoji-\uD83D\uDE00-\uD800\uDF48";
  static final byte[][] BUFFERS = {{0, 1, 2, (byte) 0xff, (byte) 0x80}, {}, null, "hello".getBytes(StandardCharsets.UTF_8)};

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("emit")) {
      Set<String> asked = new HashSet<>();
      for (int i = 1; i < args.length; i++) {
        asked.add(args[i]);
        emit(args[i]);
      }
      emitMulti();
      List<String> unregistered = new ArrayList<>();
      for (String name : juteRecordClasses()) if (!asked.contains(name)) unregistered.add(name);
      System.out.println("{\"unregistered\":" + jsonValue(unregistered) + "}");
    } else if (args.length > 0 && args[0].equals("decode")) {
      decode();
    } else {
      System.err.println("usage: JuteConformance emit <Class>... | decode");
      System.exit(2);
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

  /** Simple names of the record classes in the data and proto packages of the jute jar. */
  static List<String> juteRecordClasses() throws Exception {
    List<String> out = new ArrayList<>();
    try (JarFile jar = new JarFile(JUTE_JAR)) {
      for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
        String n = e.nextElement().getName();
        if (!n.matches("org/apache/zookeeper/(data|proto)/[A-Za-z0-9]+\\.class")) continue;
        Class<?> c = Class.forName(n.substring(0, n.length() - 6).replace('/', '.'));
        if (Record.class.isAssignableFrom(c)) out.add(c.getSimpleName());
      }
    }
    Collections.sort(out);
    return out;
  }

  /** The record's fields in declaration order, which is the order serialize() writes them. */
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
    StringBuilder schema = new StringBuilder("{\"schema\":" + q(simple) + ",\"fields\":[");
    boolean first = true;
    for (Field f : fields(c)) {
      if (!first) schema.append(',');
      first = false;
      schema.append("{\"name\":").append(q(f.getName())).append(",\"kind\":").append(q(kind(f.getType(), f.getGenericType()))).append('}');
    }
    System.out.println(schema.append("]}"));
    for (int v = 0; v < VARIANTS; v++) printCase(simple, (Record) build(c, v, false));
    if (hasString(c)) printCase(simple, (Record) build(c, 0, true));
  }

  static void printCase(String type, Record r) throws Exception {
    System.out.println("{\"type\":" + q(type) + ",\"value\":" + json(r) + ",\"hex\":" + q(hex(serialize(r, false))) + ",\"hexUtf8\":" + q(hex(serialize(r, true))) + "}");
  }

  /** The Jute type of a field: int, long, boolean, buffer, ustring, record:Name or vector:kind. */
  static String kind(Class<?> t, Type generic) {
    if (t == int.class || t == Integer.class) return "int";
    if (t == long.class || t == Long.class) return "long";
    if (t == boolean.class) return "boolean";
    if (t == byte[].class) return "buffer";
    if (t == String.class) return "ustring";
    if (List.class.isAssignableFrom(t)) {
      Type elem = ((ParameterizedType) generic).getActualTypeArguments()[0];
      return "vector:" + kind((Class<?>) elem, elem);
    }
    if (Record.class.isAssignableFrom(t)) return "record:" + t.getSimpleName();
    throw new IllegalArgumentException("unsupported field type " + t);
  }

  static boolean hasString(Class<?> c) {
    for (Field f : fields(c)) if (kind(f.getType(), f.getGenericType()).matches("(vector:)?ustring")) return true;
    for (Field f : fields(c)) {
      String k = kind(f.getType(), f.getGenericType()).replace("vector:", "");
      if (k.startsWith("record:") && hasString(f.getType() == List.class ? elemClass(f) : f.getType())) return true;
    }
    return false;
  }

  static Class<?> elemClass(Field f) {
    return (Class<?>) ((ParameterizedType) f.getGenericType()).getActualTypeArguments()[0];
  }

  /**
   * An instance whose fields take edge values; variant v shifts which value each field gets, so
   * the fields of one record do not move in lockstep. With nonBmp, every string is NON_BMP.
   */
  static Object build(Class<?> c, int v, boolean nonBmp) throws Exception {
    Object o = c.getDeclaredConstructor().newInstance();
    int k = v;
    for (Field f : fields(c)) {
      boolean time = c == Stat.class && (f.getName().equals("ctime") || f.getName().equals("mtime"));
      f.set(o, time ? (Object) TIMES[k % TIMES.length] : value(f.getType(), f.getGenericType(), k, nonBmp));
      k++;
    }
    return o;
  }

  static Object value(Class<?> t, Type generic, int k, boolean nonBmp) throws Exception {
    if (t == int.class || t == Integer.class) return INTS[k % INTS.length];
    if (t == long.class || t == Long.class) return LONGS[k % LONGS.length];
    if (t == boolean.class) return k % 2 == 0;
    if (t == byte[].class) return BUFFERS[k % BUFFERS.length];
    if (t == String.class) return nonBmp ? NON_BMP : STRINGS[k % STRINGS.length];
    if (List.class.isAssignableFrom(t)) {
      Type elem = ((ParameterizedType) generic).getActualTypeArguments()[0];
      switch (nonBmp ? 2 : k % 3) {
        case 0: return null;
        case 1: return new ArrayList<>();
        default: {
          List<Object> list = new ArrayList<>();
          for (int i = 0; i < 3; i++) {
            // A List<String> may hold null; Java writes it as length -1.
            list.add(elem == String.class ? (nonBmp ? NON_BMP : new String[] {STRINGS[0], null, STRINGS[3]}[i]) : value((Class<?>) elem, elem, k + i, nonBmp));
          }
          return list;
        }
      }
    }
    if (Record.class.isAssignableFrom(t)) return build(t, k, nonBmp);
    throw new IllegalArgumentException("unsupported field type " + t);
  }

  /** The record's bytes from BinaryOutputArchive, or (utf8) from the same archive with standard UTF-8 strings. */
  static byte[] serialize(Record r, boolean utf8) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    OutputArchive a = utf8 ? new Utf8Archive(new DataOutputStream(bytes)) : BinaryOutputArchive.getArchive(bytes);
    r.serialize(a, "r");
    return bytes.toByteArray();
  }

  /** BinaryOutputArchive with String.getBytes(UTF_8) for strings (4 bytes outside the BMP); nothing else changes. */
  static final class Utf8Archive extends BinaryOutputArchive {
    private final DataOutputStream out;

    Utf8Archive(DataOutputStream out) {
      super(out);
      this.out = out;
    }

    @Override
    public void writeString(String s, String tag) throws IOException {
      if (s == null) {
        writeInt(-1, "len");
        return;
      }
      byte[] b = s.getBytes(StandardCharsets.UTF_8);
      writeInt(b.length, "len");
      out.write(b);
    }
  }

  static void decode() throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      if (line.isEmpty()) continue;
      String[] parts = line.split(" ", 2);
      try {
        ByteArrayInputStream bytes = new ByteArrayInputStream(unhex(parts.length > 1 ? parts[1] : ""));
        BinaryInputArchive ia = BinaryInputArchive.getArchive(bytes);
        Record r;
        if (parts[0].equals("MultiOperationRecord")) r = new MultiOperationRecord();
        else if (parts[0].equals("MultiResponse")) r = new MultiResponse();
        else r = (Record) recordClass(parts[0]).getDeclaredConstructor().newInstance();
        r.deserialize(ia, "r");
        if (bytes.available() > 0) throw new IOException(bytes.available() + " trailing bytes");
        String value = r instanceof MultiOperationRecord ? multiRequestJson((MultiOperationRecord) r) : r instanceof MultiResponse ? multiResponseJson((MultiResponse) r) : json(r);
        System.out.println("{\"type\":" + q(parts[0]) + ",\"value\":" + value + "}");
      } catch (Exception e) {
        System.out.println("{\"type\":" + q(parts[0]) + ",\"error\":" + q(e.toString()) + "}");
      }
    }
  }

  // --- multi: built with Op and OpResult as a Java client or server would ---

  static void emitMulti() throws Exception {
    List<ACL> open = ZooDefs.Ids.OPEN_ACL_UNSAFE;
    List<ACL> acls = Arrays.asList(new ACL(ZooDefs.Perms.ALL, new Id("digest", "ü:hash=")), new ACL(ZooDefs.Perms.READ, new Id("world", "anyone")));
    printMultiRequest(new MultiOperationRecord(Arrays.asList(
        Op.create("/m/a", "x".getBytes(StandardCharsets.UTF_8), open, CreateMode.PERSISTENT),
        Op.create("/m/日本-", null, acls, CreateMode.EPHEMERAL_SEQUENTIAL),
        Op.create("/m/c", new byte[0], Collections.emptyList(), CreateMode.CONTAINER),
        Op.create("/m/t", new byte[] {1, (byte) 0xff}, open, CreateMode.PERSISTENT_WITH_TTL, Long.MAX_VALUE),
        Op.delete("/m/old", Integer.MIN_VALUE),
        Op.setData("/m/a", "y".getBytes(StandardCharsets.UTF_8), -1),
        Op.setData("/m/a", null, Integer.MAX_VALUE),
        Op.check("/m", 7))));
    printMultiRequest(new MultiOperationRecord(Arrays.asList(Op.getChildren("/m"), Op.getData("/m/ключ"))));
    printMultiRequest(new MultiOperationRecord(Collections.emptyList()));
    emitCreate2Multi(acls);

    Stat stat = (Stat) build(Stat.class, 1, false);
    Stat other = (Stat) build(Stat.class, 3, false);
    MultiResponse results = new MultiResponse();
    results.add(new OpResult.CreateResult("/m/a"));
    results.add(new OpResult.CreateResult("/m/c", stat));
    results.add(new OpResult.DeleteResult());
    results.add(new OpResult.SetDataResult(other));
    results.add(new OpResult.CheckResult());
    results.add(new OpResult.ErrorResult(0));
    results.add(new OpResult.ErrorResult(-101));
    results.add(new OpResult.GetDataResult("d".getBytes(StandardCharsets.UTF_8), stat));
    results.add(new OpResult.GetDataResult(new byte[0], other));
    results.add(new OpResult.GetChildrenResult(Arrays.asList("a", "日本")));
    results.add(new OpResult.GetChildrenResult(Collections.emptyList()));
    printMultiResponse(results);
    printMultiResponse(new MultiResponse());
  }

  /**
   * A multi carrying create2 (15). Java's Op has no create2 (Op.Create takes its op code from the
   * CreateMode), but the server's MultiOperationRecord.deserialize reads type 15 as a
   * CreateRequest, so the body is assembled here from Java's MultiHeader and CreateRequest.
   */
  static void emitCreate2Multi(List<ACL> acls) throws Exception {
    CreateRequest create2 = new CreateRequest("/m/c2-\u00e9", new byte[] {7, 0, (byte) 0x80}, acls, 2);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    BinaryOutputArchive a = BinaryOutputArchive.getArchive(bytes);
    new MultiHeader(15, false, -1).serialize(a, "header");
    create2.serialize(a, "request");
    new MultiHeader(-1, true, -1).serialize(a, "header");
    String fields = json(create2);
    System.out.println("{\"type\":\"MultiOperationRecord\",\"value\":[{\"type\":15," + fields.substring(1) + "],\"hex\":" + q(hex(bytes.toByteArray())) + "}");
  }

  static void printMultiRequest(MultiOperationRecord m) throws Exception {
    System.out.println("{\"type\":\"MultiOperationRecord\",\"value\":" + multiRequestJson(m) + ",\"hex\":" + q(hex(serialize(m, false))) + "}");
  }

  static void printMultiResponse(MultiResponse m) throws Exception {
    System.out.println("{\"type\":\"MultiResponse\",\"value\":" + multiResponseJson(m) + ",\"hex\":" + q(hex(serialize(m, false))) + "}");
  }

  /** Ops as multi.ts's MultiOp: {type, ...fields of the request record}. */
  static String multiRequestJson(MultiOperationRecord m) throws Exception {
    StringBuilder sb = new StringBuilder("[");
    boolean first = true;
    for (Op op : m) {
      if (!first) sb.append(',');
      first = false;
      String fields = json(op.toRequestRecord());
      sb.append("{\"type\":").append(op.getType()).append(fields.length() > 2 ? "," : "").append(fields, 1, fields.length());
    }
    return sb.append(']').toString();
  }

  /** Results as multi.ts's MultiResult: {type, ...} with path/stat/data/children/err by kind. */
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
        sb.append(",\"data\":").append(jsonValue(g.getData())).append(",\"stat\":").append(json(g.getStat()));
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

  /** A JSON string; every non-ASCII UTF-16 unit as \\uXXXX, so surrogate pairs survive as pairs. */
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
