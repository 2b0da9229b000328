/**
 * Conformance of our Jute codec with Java's own classes (Debian's zookeeper 3.8 jars): every
 * record in our registry, plus multi request and response bodies, both directions.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { JuteReader } from '../../packages/protocol/src/jute/reader.js';
import { JuteWriter } from '../../packages/protocol/src/jute/writer.js';
import { records, readMultiRequest, readMultiResponse, writeMultiRequest, writeMultiResponse, writeCreateRequest, readCreateRequest } from '../../packages/protocol/src/jute/index.js';

const JARS = ['/usr/share/java/zookeeper.jar', '/usr/share/java/zookeeper-jute.jar'];
const SOURCE = fileURLToPath(new URL('./java/Conformance.java', import.meta.url));
const MULTI = ['MultiOperationRecord', 'MultiResponse'];

interface JavaCase {
  type: string;
  value: unknown;
  hex: string;
}

let classpath = '';
let cases: JavaCase[] = [];

/** Runs `Conformance decode` on "<type> <hex>" lines; returns the parsed answers in order. */
function javaDecode(lines: Array<[string, Buffer]>): Array<{ type: string; value?: unknown; error?: string }> {
  const res = spawnSync('java', ['-cp', classpath, 'Conformance', 'decode'], { input: lines.map(([t, b]) => `${t} ${b.toString('hex')}`).join('\n') + '\n', maxBuffer: 64 * 1024 * 1024 });
  if (res.status !== 0) throw new Error(`java decode failed: ${res.stderr.toString()}`);
  return res.stdout.toString().trim().split('\n').map((l) => JSON.parse(l) as { type: string; value?: unknown; error?: string });
}

/** Our values in the JSON form the Java side prints: long as a decimal string, buffer as hex. */
function toJava(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return v.toString();
  if (Buffer.isBuffer(v)) return v.toString('hex');
  if (Array.isArray(v)) return v.map(toJava);
  if (typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJava(x)]));
  return v;
}

function encode(write: (w: JuteWriter) => void): Buffer {
  const w = new JuteWriter();
  write(w);
  return w.toBuffer();
}

beforeAll(() => {
  const missing = ['javac', 'java'].filter((tool) => spawnSync(tool, ['-version'], { stdio: 'ignore' }).status !== 0);
  const jars = JARS.filter((j) => !existsSync(j));
  if (missing.length || jars.length) throw new Error(`the conformance test needs ${[...missing, ...jars].join(', ')}: apt-get install -y zookeeper (and a JDK with javac)`);
  const out = mkdtempSync(join(tmpdir(), 'zk-conformance-'));
  execFileSync('javac', ['-d', out, '-cp', JARS.join(':'), SOURCE], { stdio: 'inherit' });
  classpath = [out, ...JARS, '/usr/share/java/slf4j-nop.jar'].join(':');
  const emitted = execFileSync('java', ['-cp', classpath, 'Conformance', 'emit', ...Object.keys(records)], { maxBuffer: 64 * 1024 * 1024 });
  cases = emitted.toString().trim().split('\n').map((l) => JSON.parse(l) as JavaCase);
}, 120_000);

describe('conformance - records against Java', () => {
  it('covers every record of the registry and the multi bodies', () => {
    const covered = [...new Set(cases.map((c) => c.type))].sort();
    console.log(`conformance: ${cases.length} Java-encoded cases over ${covered.length} types: ${covered.join(', ')}`);
    expect(covered).toEqual([...Object.keys(records), ...MULTI].sort());
  });

  it('our decoder reads what Java wrote, and our encoder writes the same bytes', () => {
    for (const c of cases.filter((x) => !MULTI.includes(x.type))) {
      const codec = records[c.type as keyof typeof records];
      const bytes = Buffer.from(c.hex, 'hex');
      const r = new JuteReader(bytes);
      const ours = codec.read(r);
      expect(r.remaining, `${c.type}: trailing bytes`).toBe(0);
      expect(toJava(ours), `${c.type} ${c.hex}`).toEqual(c.value);
      expect(encode((w) => (codec.write as (w: JuteWriter, v: unknown) => void)(w, ours)).toString('hex'), c.type).toBe(c.hex);
    }
  });

  it('Java decodes what we encode, to the same values', () => {
    const ours = cases.filter((x) => !MULTI.includes(x.type)).map((c) => {
      const codec = records[c.type as keyof typeof records];
      const value = codec.read(new JuteReader(Buffer.from(c.hex, 'hex')));
      return { c, bytes: encode((w) => (codec.write as (w: JuteWriter, v: unknown) => void)(w, value)) };
    });
    const answers = javaDecode(ours.map(({ c, bytes }) => [c.type, bytes]));
    answers.forEach((a, i) => {
      expect(a.error, ours[i]!.c.type).toBeUndefined();
      expect(a.value, ours[i]!.c.type).toEqual(ours[i]!.c.value);
    });
  });
});

describe('conformance - multi bodies against Java', () => {
  const asJavaRequest = (ops: ReturnType<typeof readMultiRequest>) => ops.map(({ type, ...record }) => ({ type, record: toJava(record) }));

  it('reads and re-writes Java multi and multiRead requests byte for byte, and Java reads ours', () => {
    const requests = cases.filter((c) => c.type === 'MultiOperationRecord');
    expect(requests).toHaveLength(2);
    for (const c of requests) {
      const ops = readMultiRequest(new JuteReader(Buffer.from(c.hex, 'hex')));
      expect(asJavaRequest(ops)).toEqual(c.value);
      const bytes = encode((w) => writeMultiRequest(w, ops));
      expect(bytes.toString('hex')).toBe(c.hex);
      const [back] = javaDecode([['MultiOperationRecord', bytes]]);
      expect(back?.value).toEqual(c.value);
    }
  });

  it('reads and re-writes a Java multi response with every result kind, and Java reads ours', () => {
    const [c] = cases.filter((x) => x.type === 'MultiResponse');
    const results = readMultiResponse(new JuteReader(Buffer.from(c!.hex, 'hex')));
    expect(toJava(results)).toEqual(c!.value);
    const bytes = encode((w) => writeMultiResponse(w, results));
    expect(bytes.toString('hex')).toBe(c!.hex);
    const [back] = javaDecode([['MultiResponse', bytes]]);
    expect(back?.value).toEqual(c!.value);
  });
});

describe('conformance - strings outside the Basic Multilingual Plane', () => {
  it('Java reads our standard UTF-8 as the same characters; we read Java\u2019s own encoding back too', () => {
    // Java's BinaryOutputArchive writes each UTF-16 unit separately (6 bytes for an emoji), while
    // ours writes standard UTF-8 (4 bytes), which Java's reader and the server decode correctly.
    const value = { path: '/emoji-\u{1F600}-\u{10348}', data: null, acl: [], flags: 0 };
    const bytes = encode((w) => writeCreateRequest(w, value));
    const [java] = javaDecode([['CreateRequest', bytes]]);
    expect(java?.error).toBeUndefined();
    expect((java?.value as { path: string }).path).toBe(value.path);
    // Java's own 6-byte form of the same path, decoded by our reader.
    const javaBytes = Buffer.concat([Buffer.from([0, 0, 0, 0]), Buffer.from(value.path.split('').map((u) => Buffer.from(cesu(u)).toString('binary')).join(''), 'binary')]);
    javaBytes.writeInt32BE(javaBytes.length - 4, 0);
    const tail = encode((w) => w.writeBuffer(null).writeVector([], () => undefined).writeInt(0));
    expect(readCreateRequest(new JuteReader(Buffer.concat([javaBytes, tail]))).path).toBe(value.path);
  });
});

/** One UTF-16 code unit as Java's modified encoding writes it (surrogates as 3 bytes each). */
function cesu(unit: string): number[] {
  const c = unit.charCodeAt(0);
  if (c < 0x80) return [c];
  if (c < 0x800) return [0xc0 | (c >> 6), 0x80 | (c & 0x3f)];
  return [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)];
}
