/**
 * Conformance of our Jute codec with Java's own classes (Debian's zookeeper 3.8 jars): every
 * record of the registry plus the multi request and response bodies, in both directions.
 *
 * Java -> us: `JuteConformance emit` builds edge-value instances of each record class and
 * serializes them with BinaryOutputArchive; we must read the same values and write the same
 * bytes. Us -> Java: we build our own edge-value instances from the field list Java reports
 * (so the values are not Java's), encode them, and one `JuteConformance decode` process must
 * read back the same values.
 *
 * The single exception to byte identity: strings holding a surrogate pair (a character outside
 * the BMP). Java's writeString encodes each UTF-16 unit alone (6 bytes per such character, and
 * its own reader turns those into two U+FFFD); our writer sends standard 4-byte UTF-8 on purpose
 * (see packages/protocol/src/jute/writer.ts). For those cases only, our bytes must equal Java's
 * record serialized with standard UTF-8 strings (`hexUtf8`), and both forms must read back.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpCode } from '../../packages/protocol/src/constants.js';
import { JuteReader } from '../../packages/protocol/src/jute/reader.js';
import { JuteWriter } from '../../packages/protocol/src/jute/writer.js';
import { readMultiRequest, readMultiResponse, records, writeMultiRequest, writeMultiResponse } from '../../packages/protocol/src/jute/index.js';
import type { MultiOpInput, MultiResultInput, RecordCodec, Stat } from '../../packages/protocol/src/jute/index.js';

const JARS = ['/usr/share/java/zookeeper.jar', '/usr/share/java/zookeeper-jute.jar'];
const SOURCE = fileURLToPath(new URL('./java/JuteConformance.java', import.meta.url));
const MULTI = ['MultiOperationRecord', 'MultiResponse'] as const;
const REGISTRY = Object.keys(records);
const EXPECTED_TYPES = [...REGISTRY, ...MULTI].sort();

interface JavaCase {
  type: string;
  value: unknown;
  hex: string;
  /** Java's record serialized with standard UTF-8 strings; differs from hex only outside the BMP. */
  hexUtf8?: string;
}
interface Field {
  name: string;
  /** int | long | boolean | buffer | ustring | record:<Name> | vector:<kind> */
  kind: string;
}
interface Answer {
  type: string;
  value?: unknown;
  error?: string;
}
/** One value we encoded and sent to Java's decoder, with what Java must read back. */
interface Sent {
  type: string;
  bytes: Buffer;
  /** What Java's decoder must read. */
  expected: unknown;
  /** What our reader must read, when it differs from expected (Java's multi op model). */
  ours?: unknown;
  label: string;
}

let workDir = '';
let classpath = '';
const schemas = new Map<string, Field[]>();
const javaCases: JavaCase[] = [];
let unregistered: string[] = [];
let sent: Sent[] = [];
let answers: Answer[] = [];

// --- JSON form shared with the Java side: long as a decimal string, buffer as hex ---

function toJava(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return v.toString();
  if (Buffer.isBuffer(v)) return v.toString('hex');
  if (Array.isArray(v)) return v.map(toJava);
  // A Stat's ctime and mtime are Java longs held as numbers: decimal strings too.
  if (typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, isTime(k) && typeof x === 'number' ? String(x) : toJava(x)]));
  return v;
}

/** The long fields our codec reads as numbers (a Stat's times, ms): only these names hold them. */
const isTime = (field: string) => field === 'ctime' || field === 'mtime';

const SURROGATE_PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/;
/** True when some string in the value holds a character outside the BMP. */
const hasSurrogatePair = (v: unknown): boolean => SURROGATE_PAIR.test(JSON.stringify(v) ?? '');

function encode(write: (w: JuteWriter) => void): Buffer {
  const w = new JuteWriter();
  write(w);
  return w.toBuffer();
}

const codecOf = (type: string) => records[type as keyof typeof records] as unknown as RecordCodec<unknown>;

// --- our own edge values, generated from the field kinds Java reports ---

const TS_INTS = [1, -2147483648, 2147483647, -2, 65536];
const TS_LONGS = [-(2n ** 63n), 2n ** 63n - 1n, 2n ** 53n + 1n, -1n, 1n << 32n, 0n];
/** A Stat's ctime and mtime, numbers of ms: the safe-integer range our codec accepts for them. */
const TS_TIMES = [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, 1795932004690, -1, 0];
const TS_STRINGS = ['/日本語/パス', null, '', 'ascii-0000000001', 'tab\tnul\u0000 ümlaut \uFFFD', '/\u{1F600}\u{10348} outside the BMP'];
const TS_BUFFERS = [Buffer.alloc(0), null, Buffer.from(Array.from({ length: 256 }, (_, i) => i)), Buffer.from([0x80])];
const TS_VARIANTS = TS_STRINGS.length;

function tsValue(kind: string, k: number): unknown {
  const pick = <T>(xs: readonly T[]): T => xs[k % xs.length]!;
  if (kind === 'int') return pick(TS_INTS);
  if (kind === 'long') return pick(TS_LONGS);
  if (kind === 'time') return pick(TS_TIMES);
  if (kind === 'boolean') return k % 2 === 1;
  if (kind === 'buffer') return pick(TS_BUFFERS);
  if (kind === 'ustring') return pick(TS_STRINGS);
  if (kind.startsWith('record:')) return tsRecord(kind.slice('record:'.length), k);
  if (kind.startsWith('vector:')) {
    const elem = kind.slice('vector:'.length);
    switch (k % 4) {
      case 0: return [];
      case 1: return null;
      case 2: return [tsValue(elem, k + 1)];
      // Four elements; a vector<ustring> also gets a null element, which Java keeps as null.
      default: return [0, 1, 2, 3].map((i) => (elem === 'ustring' && i === 2 ? null : tsValue(elem, k + i)));
    }
  }
  throw new Error(`unknown field kind ${kind}`);
}

function tsRecord(type: string, v: number): Record<string, unknown> {
  const fields = schemas.get(type);
  if (!fields) throw new Error(`Java reported no schema for ${type}`);
  return Object.fromEntries(fields.map((f, i) => [f.name, tsValue(type === 'Stat' && isTime(f.name) ? 'time' : f.kind, v + i)]));
}

function tsStat(v: number): Stat {
  return tsRecord('Stat', v) as unknown as Stat;
}

/** Multi requests and responses with every op and result kind Java's MultiOperationRecord/MultiResponse read. */
function tsMultiCases(): Array<{ type: (typeof MULTI)[number]; value: unknown; bytes: Buffer; javaView?: unknown }> {
  const acl = [{ perms: 31, id: { scheme: 'world', id: 'anyone' } }, { perms: 1, id: { scheme: 'digest', id: 'ü:x=' } }];
  const ops: MultiOpInput[] = [
    { type: OpCode.create, path: '/t/a', data: Buffer.from('x'), acl, flags: 0 },
    { type: OpCode.create2, path: '/t/日本-', data: null, acl: [], flags: 3 },
    { type: OpCode.createContainer, path: '/t/c', data: Buffer.alloc(0), acl, flags: 4 },
    { type: OpCode.createTTL, path: '/t/\u{1F600}', data: Buffer.from([0xff]), acl, flags: 6, ttl: 2n ** 53n + 1n },
    { type: OpCode.delete, path: '/t/old', version: -1 },
    { type: OpCode.setData, path: '/t/a', data: null, version: -2147483648 },
    { type: OpCode.check, path: '/t', version: 2147483647 },
  ];
  const reads: MultiOpInput[] = [
    { type: OpCode.getData, path: '/t/a', watch: false },
    { type: OpCode.getChildren, path: '/t/ключ', watch: false },
  ];
  const results: MultiResultInput[] = [
    { type: OpCode.create, path: '/t/a' },
    { type: OpCode.create2, path: '/t/b0000000001', stat: tsStat(0) },
    { type: OpCode.delete },
    { type: OpCode.check },
    { type: OpCode.setData, stat: tsStat(1) },
    { type: OpCode.getData, data: null, stat: tsStat(2) },
    { type: OpCode.getData, data: Buffer.from([0, 0xff]), stat: tsStat(3) },
    { type: OpCode.getChildren, children: ['a', '日本', '\u{1F600}'] },
    { type: OpCode.getChildren, children: null },
    { type: OpCode.error, err: 0 },
    { type: OpCode.error, err: -110 },
  ];
  return [
    // Java's MultiOperationRecord.deserialize reads header types 1, 15 and 19 alike and rebuilds the
    // op with Op.create(path, data, acl, flags), whose type follows the flags: a create2 op (15)
    // comes back as create (1). That is Java's op model, not the bytes (the header says 15; our
    // reader keeps it), and it is why a server, which uses the same class, answers such an op
    // with a plain CreateResult.
    {
      type: 'MultiOperationRecord',
      value: ops,
      bytes: encode((w) => writeMultiRequest(w, ops)),
      javaView: ops.map((op) => (op.type === OpCode.create2 ? { ...op, type: OpCode.create } : op)),
    },
    { type: 'MultiOperationRecord', value: reads, bytes: encode((w) => writeMultiRequest(w, reads)) },
    { type: 'MultiOperationRecord', value: [], bytes: encode((w) => writeMultiRequest(w, [])) },
    { type: 'MultiResponse', value: results, bytes: encode((w) => writeMultiResponse(w, results)) },
    { type: 'MultiResponse', value: [], bytes: encode((w) => writeMultiResponse(w, [])) },
  ];
}

// --- Java ---

function java(args: string[], input?: string): string {
  const res = spawnSync('java', ['-cp', classpath, 'JuteConformance', ...args], { input, maxBuffer: 64 * 1024 * 1024, timeout: 60_000 });
  if (res.status !== 0) throw new Error(`java JuteConformance ${args[0]} failed (${res.status ?? res.signal}): ${res.stderr?.toString()}`);
  return res.stdout.toString();
}

/** Decodes every (type, bytes) in ONE Java process; answers come back in order. */
function javaDecode(items: ReadonlyArray<{ type: string; bytes: Buffer }>): Answer[] {
  const out = java(['decode'], items.map((x) => `${x.type} ${x.bytes.toString('hex')}\n`).join(''));
  const lines = out.trim().split('\n').map((l) => JSON.parse(l) as Answer);
  if (lines.length !== items.length) throw new Error(`java decode answered ${lines.length} of ${items.length} lines`);
  return lines;
}

function requireTools(): void {
  const missing = ['javac', 'java'].filter((tool) => spawnSync(tool, ['-version'], { stdio: 'ignore' }).status !== 0);
  missing.push(...JARS.filter((j) => !existsSync(j)));
  if (missing.length > 0) {
    throw new Error(`the Jute conformance test needs ${missing.join(', ')}: apt-get install zookeeper (Debian's ZooKeeper jars) and a JDK with javac (apt-get install openjdk-17-jdk-headless)`);
  }
}

beforeAll(() => {
  requireTools();
  workDir = mkdtempSync(join(tmpdir(), 'zk-jute-conformance-'));
  execFileSync('javac', ['-nowarn', '-d', workDir, '-cp', JARS.join(':'), SOURCE], { stdio: ['ignore', 'ignore', 'inherit'] });
  classpath = [workDir, ...JARS, '/usr/share/java/slf4j-nop.jar'].join(':');

  for (const line of java(['emit', ...REGISTRY]).trim().split('\n')) {
    const msg = JSON.parse(line) as { schema?: string; fields?: Field[]; unregistered?: string[] } & Partial<JavaCase>;
    if (msg.schema !== undefined) schemas.set(msg.schema, msg.fields ?? []);
    else if (msg.unregistered !== undefined) unregistered = msg.unregistered;
    else javaCases.push(msg as JavaCase);
  }

  // Everything Java must decode goes to one process: our record cases, our multi bodies, and one
  // of Java's own non-BMP encodings (to show why our writer does not copy it).
  sent = [];
  for (const type of REGISTRY) {
    for (let v = 0; v < TS_VARIANTS; v++) {
      const value = tsRecord(type, v);
      sent.push({ type, bytes: encode((w) => codecOf(type).write(w, value)), expected: toJava(value), label: `${type} ts#${v}` });
    }
  }
  tsMultiCases().forEach((c, i) => sent.push({ type: c.type, bytes: c.bytes, expected: toJava(c.javaView ?? c.value), ours: toJava(c.value), label: `${c.type} ts#${i}` }));
  const javaNonBmp = javaCases.find((c) => c.type === 'CreateRequest' && hasSurrogatePair(c.value));
  if (javaNonBmp) {
    const value = withReplacementPairs(javaNonBmp.value);
    sent.push({ type: 'CreateRequest', bytes: Buffer.from(javaNonBmp.hex, 'hex'), expected: value, label: 'Java-own non-BMP form' });
  }
  answers = javaDecode(sent);
}, 120_000);

/** A value with each character outside the BMP replaced by the two U+FFFD Java's readString makes of its own 6-byte form. */
function withReplacementPairs(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v).replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, '\uFFFD\uFFFD'));
}

afterAll(() => {
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('conformance - coverage', () => {
  it('conformance - covers every record of the registry and both multi bodies, in both directions', () => {
    const fromJava = [...new Set(javaCases.map((c) => c.type))].sort();
    const toJavaTypes = [...new Set(sent.map((s) => s.type))].sort();
    console.log(
      `jute conformance: ${javaCases.length} Java-encoded cases and ${sent.length} of ours decoded by Java, over ${fromJava.length} types:\n  ${fromJava.join(', ')}\n` +
        `  record classes in the jute jar outside our registry (server-internal): ${unregistered.join(', ') || 'none'}`,
    );
    expect(fromJava).toEqual(EXPECTED_TYPES);
    expect(toJavaTypes).toEqual(EXPECTED_TYPES);
    expect(javaCases.filter((c) => hasSurrogatePair(c.value)).length, 'Java cases with characters outside the BMP').toBeGreaterThan(0);
  });
});

describe('conformance - Java encodes, we decode and re-encode', () => {
  it('conformance - every record: same values, all bytes consumed, byte-identical re-encoding (non-BMP strings: standard UTF-8)', () => {
    const mismatches: string[] = [];
    const seen = new Map<string, number>();
    for (const c of javaCases.filter((x) => !(MULTI as readonly string[]).includes(x.type))) {
      const n = seen.get(c.type) ?? 0;
      seen.set(c.type, n + 1);
      const codec = codecOf(c.type);
      const where = `${c.type} java#${n}`;
      try {
        const r = new JuteReader(Buffer.from(c.hex, 'hex'));
        const ours = codec.read(r);
        if (r.remaining !== 0) mismatches.push(`${where}: ${r.remaining} bytes left unread of ${c.hex}`);
        if (JSON.stringify(toJava(ours)) !== JSON.stringify(c.value)) mismatches.push(`${where}: read ${JSON.stringify(toJava(ours))}, Java wrote ${JSON.stringify(c.value)}`);
        const written = encode((w) => codec.write(w, ours)).toString('hex');
        if (!hasSurrogatePair(c.value)) {
          // Inside the BMP Java's encoding is standard UTF-8, so the two Java forms agree and ours must match them.
          if (c.hexUtf8 !== c.hex) mismatches.push(`${where}: Java's two encodings differ without a non-BMP character`);
          if (written !== c.hex) mismatches.push(`${where}: Java ${c.hex} ours ${written}`);
        } else {
          // The one deliberate difference: Java's 6-byte form vs our standard UTF-8, which must equal
          // Java's record serialized with standard UTF-8 strings, and which we read back too.
          if (c.hexUtf8 === c.hex) mismatches.push(`${where}: expected Java's writeString to differ from UTF-8 outside the BMP`);
          if (written !== c.hexUtf8) mismatches.push(`${where}: Java (UTF-8 strings) ${c.hexUtf8} ours ${written}`);
          const utf8 = codec.read(new JuteReader(Buffer.from(c.hexUtf8 ?? '', 'hex')));
          if (JSON.stringify(toJava(utf8)) !== JSON.stringify(c.value)) mismatches.push(`${where}: standard UTF-8 form read as ${JSON.stringify(toJava(utf8))}`);
        }
      } catch (e) {
        mismatches.push(`${where}: ${String(e)} reading ${c.hex}`);
      }
    }
    expect(mismatches).toEqual([]);
  });

  it('conformance - multi and multiRead requests (every op kind incl. create2, empty) read as Java built them and re-encode byte for byte', () => {
    // Java's Op-built multi, multiRead and empty multi, plus a create2 multi assembled from MultiHeader + CreateRequest.
    const cases = javaCases.filter((c) => c.type === 'MultiOperationRecord');
    expect(cases.length).toBe(4);
    const kinds = new Set<number>();
    for (const c of cases) {
      const r = new JuteReader(Buffer.from(c.hex, 'hex'));
      const ops = readMultiRequest(r);
      expect(r.remaining).toBe(0);
      expect(toJava(ops)).toEqual(c.value);
      expect(encode((w) => writeMultiRequest(w, ops)).toString('hex')).toBe(c.hex);
      for (const op of ops) kinds.add(op.type);
    }
    const every = [OpCode.create, OpCode.create2, OpCode.createContainer, OpCode.createTTL, OpCode.delete, OpCode.setData, OpCode.check, OpCode.getData, OpCode.getChildren];
    expect([...kinds].sort((a, b) => a - b)).toEqual(every.sort((a, b) => a - b));
  });

  it('conformance - multi responses (every result kind, empty) read as Java built them and re-encode byte for byte', () => {
    const cases = javaCases.filter((c) => c.type === 'MultiResponse');
    expect(cases.length).toBe(2);
    for (const c of cases) {
      const r = new JuteReader(Buffer.from(c.hex, 'hex'));
      const results = readMultiResponse(r);
      expect(r.remaining).toBe(0);
      expect(toJava(results)).toEqual(c.value);
      expect(encode((w) => writeMultiResponse(w, results)).toString('hex')).toBe(c.hex);
    }
  });
});

describe('conformance - we encode, Java decodes', () => {
  it('conformance - Java reads our edge values of every record and multi body back unchanged, with no bytes left over', () => {
    const mismatches: string[] = [];
    sent.forEach((s, i) => {
      const a = answers[i]!;
      if (s.label === 'Java-own non-BMP form') return;
      if (a.error !== undefined) mismatches.push(`${s.label}: Java failed: ${a.error} on ${s.bytes.toString('hex')}`);
      else if (JSON.stringify(a.value) !== JSON.stringify(s.expected)) mismatches.push(`${s.label}: sent ${JSON.stringify(s.expected)} as ${s.bytes.toString('hex')}, Java read ${JSON.stringify(a.value)}`);
    });
    expect(mismatches).toEqual([]);
  });

  it('conformance - our own reader reads our edge values back unchanged', () => {
    for (const s of sent.filter((x) => x.label.includes(' ts#'))) {
      const r = new JuteReader(s.bytes);
      const back = s.type === 'MultiOperationRecord' ? readMultiRequest(r) : s.type === 'MultiResponse' ? readMultiResponse(r) : codecOf(s.type).read(r);
      expect(r.remaining, s.label).toBe(0);
      expect(toJava(back), s.label).toEqual(s.ours ?? s.expected);
    }
  });

  it('conformance - strings outside the BMP: Java reads our UTF-8 intact but turns its own 6-byte form into U+FFFD pairs', () => {
    const ours = sent.map((s, i) => ({ s, a: answers[i]! })).filter(({ s }) => s.label.includes(' ts#') && hasSurrogatePair(s.expected));
    expect(ours.length).toBeGreaterThan(0);
    for (const { s, a } of ours) expect(a.value, s.label).toEqual(s.expected);
    const i = sent.findIndex((s) => s.label === 'Java-own non-BMP form');
    expect(i, 'a Java CreateRequest case with a non-BMP path').toBeGreaterThanOrEqual(0);
    const a = answers[i]!;
    expect(a.error).toBeUndefined();
    expect(a.value).toEqual(sent[i]!.expected);
    expect(JSON.stringify(a.value)).toContain('\uFFFD\uFFFD');
  });
});
