/**
 * Mutation fuzzing of every record decoder, the multi decoders and the frame decoder, bounded in
 * cases and time. The properties: decoding either succeeds or throws DecodeError (never another
 * error, never a hang), and no claimed length makes the decoder allocate more than the input.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DecodeError } from '../errors.js';
import { FrameDecoder } from '../framing.js';
import { records, type RecordName } from './index.js';
import { readMultiRequest, readMultiResponse } from './multi.js';
import { JuteReader } from './reader.js';
import { JuteWriter } from './writer.js';
import { prng } from '../testing/random.js';

const SEED = Number(process.env.ZK_FUZZ_SEED ?? 20261122);
const CASES = Number(process.env.ZK_FUZZ_CASES ?? 300_000);
const BUDGET_MS = Number(process.env.ZK_FUZZ_MS ?? 15_000);
const names = Object.keys(records) as RecordName[];
const decoders: Array<[string, (r: JuteReader) => unknown]> = [
  ...names.map((n): [string, (r: JuteReader) => unknown] => [n, records[n].read as (r: JuteReader) => unknown]),
  ['multiRequest', readMultiRequest],
  ['multiResponse', readMultiResponse],
];

// Seeds: each record's minimal encoding (decoded from zeros) and a richer one (decoded from a
// buffer whose lengths are small and whose contents are printable), so mutations start from
// valid bytes of every shape.
function seedsFor(read: (r: JuteReader) => unknown, write: ((w: JuteWriter, v: unknown) => void) | undefined): Buffer[] {
  const out: Buffer[] = [];
  for (const fill of [0x00, 0x01]) {
    try {
      const v = read(new JuteReader(Buffer.alloc(4096, fill)));
      if (write) {
        const w = new JuteWriter();
        write(w, v);
        out.push(w.toBuffer());
      }
    } catch {
      // 0x01 bytes claim lengths of 16843009 (and a Stat time past 2^53): not a valid seed, fine
    }
  }
  return out;
}
const seeds = names.flatMap((n) => seedsFor(records[n].read as (r: JuteReader) => unknown, records[n].write as (w: JuteWriter, v: unknown) => void));

const SPECIAL_INTS = [-1, -2, 0, 1, 0x7fffffff, -0x80000000, 0x00ffffff, 1 << 20];

function mutate(input: Buffer, rnd: () => number): Buffer {
  const b = Buffer.from(input);
  const kind = Math.floor(rnd() * 6);
  if (kind === 0 && b.length > 0) b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256); // byte
  else if (kind === 1 && b.length > 0) b[Math.floor(rnd() * b.length)]! ^= 1 << Math.floor(rnd() * 8); // bit
  else if (kind === 2 && b.length >= 4) b.writeInt32BE(SPECIAL_INTS[Math.floor(rnd() * SPECIAL_INTS.length)]!, Math.floor(rnd() * (b.length - 3))); // a length
  else if (kind === 3) return b.subarray(0, Math.floor(rnd() * (b.length + 1))); // truncation
  else if (kind === 4) return Buffer.concat([b, Buffer.from(Array.from({ length: Math.floor(rnd() * 16) }, () => Math.floor(rnd() * 256)))]); // trailing
  else return Buffer.from(Array.from({ length: Math.floor(rnd() * 64) }, () => Math.floor(rnd() * 256))); // random
  return b;
}

describe('fuzz - decoders', () => {
  let allocSpy: { mockRestore(): void } | undefined;
  let unsafeSpy: { mockRestore(): void } | undefined;
  let biggest = 0;
  beforeAll(() => {
    const track = (size: unknown) => {
      if (typeof size === 'number' && size > biggest) biggest = size;
    };
    const alloc = Buffer.alloc.bind(Buffer);
    const unsafe = Buffer.allocUnsafe.bind(Buffer);
    allocSpy = vi.spyOn(Buffer, 'alloc').mockImplementation(((size: number, ...rest: unknown[]) => (track(size), (alloc as (...a: unknown[]) => Buffer)(size, ...rest))) as typeof Buffer.alloc);
    unsafeSpy = vi.spyOn(Buffer, 'allocUnsafe').mockImplementation(((size: number) => (track(size), unsafe(size))) as typeof Buffer.allocUnsafe);
  });
  afterAll(() => {
    allocSpy?.mockRestore();
    unsafeSpy?.mockRestore();
  });

  it(`every record and multi decoder throws only DecodeError on mutated input (seed ${SEED})`, () => {
    const rnd = prng(SEED);
    const started = performance.now();
    let cases = 0;
    let decoded = 0;
    let rejected = 0;
    let maxInput = 0;
    biggest = 0;
    while (cases < CASES && performance.now() - started < BUDGET_MS) {
      const [name, read] = decoders[cases % decoders.length]!;
      const input = mutate(seeds[Math.floor(rnd() * seeds.length)]!, rnd);
      maxInput = Math.max(maxInput, input.length);
      cases++;
      try {
        read(new JuteReader(input));
        decoded++;
      } catch (err) {
        if (!(err instanceof DecodeError)) throw new Error(`${name} threw ${(err as Error)?.name}: ${(err as Error)?.message} on ${input.toString('hex')}`);
        rejected++;
      }
    }
    console.log(`fuzz: ${cases} cases in ${Math.round(performance.now() - started)} ms (${decoded} decoded, ${rejected} DecodeError), largest allocation ${biggest} bytes for inputs up to ${maxInput} bytes`);
    expect(cases).toBeGreaterThanOrEqual(Math.min(CASES, 100_000));
    expect(rejected).toBeGreaterThan(0);
    expect(decoded).toBeGreaterThan(0);
    // No claimed length was allocated: nothing bigger than the inputs themselves.
    expect(biggest).toBeLessThanOrEqual(Math.max(maxInput, 8192));
  }, 60_000);
});

describe('fuzz - frame decoder', () => {
  it('reassembles random frames under random chunking, and rejects garbage with DecodeError or oversize only', () => {
    const rnd = prng(SEED + 1);
    for (let round = 0; round < 2000; round++) {
      const frames = Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => Buffer.from(Array.from({ length: Math.floor(rnd() * 300) }, () => Math.floor(rnd() * 256))));
      const stream = Buffer.concat(frames.flatMap((f) => [Buffer.from([f.length >>> 24, (f.length >>> 16) & 255, (f.length >>> 8) & 255, f.length & 255]), f]));
      const got: string[] = [];
      const decoder = new FrameDecoder({ frame: (f) => got.push(f.toString('hex')), oversize: () => got.push('oversize') }, 256);
      for (let off = 0; off < stream.length; ) {
        const n = 1 + Math.floor(rnd() * 40);
        decoder.push(stream.subarray(off, off + n));
        off += n;
      }
      expect(got).toEqual(frames.map((f) => (f.length > 256 ? 'oversize' : f.toString('hex'))));
    }
    for (let round = 0; round < 20_000; round++) {
      const garbage = Buffer.from(Array.from({ length: Math.floor(rnd() * 64) }, () => Math.floor(rnd() * 256)));
      const decoder = new FrameDecoder({ frame: () => {}, oversize: () => {} }, 1024);
      try {
        decoder.push(garbage);
      } catch (err) {
        expect(err).toBeInstanceOf(DecodeError);
      }
    }
  });
});
