import { describe, expect, it } from 'vitest';
import { DecodeError } from './errors.js';
import { FrameDecoder } from './framing.js';
import { bytes } from './testing/bytes.js';

function collector(max?: number) {
  const frames: string[] = [];
  const oversized: Array<{ length: number; header: string }> = [];
  const decoder = new FrameDecoder(
    { frame: (f) => frames.push(f.toString('hex')), oversize: (length, header) => oversized.push({ length, header: header.toString('hex') }) },
    max,
  );
  return { decoder, frames, oversized };
}

// An independent encoding of frames: length prefix written with plain Buffer calls.
function frame(payload: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeInt32BE(payload.length);
  return Buffer.concat([len, payload]);
}

const payloads = [Buffer.from('0102030405', 'hex'), Buffer.alloc(0), Buffer.from('ff'.repeat(37), 'hex'), Buffer.from('00000001deadbeef', 'hex')];
const stream = Buffer.concat(payloads.map(frame));
const expected = payloads.map((p) => p.toString('hex'));

describe('framing - FrameDecoder', () => {
  it('yields every frame from one chunk', () => {
    const { decoder, frames } = collector();
    decoder.push(stream);
    expect(frames).toEqual(expected);
    expect(decoder.idle).toBe(true);
  });

  it('yields the same frames whatever single cut splits the stream', () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      const { decoder, frames } = collector();
      decoder.push(stream.subarray(0, cut));
      decoder.push(stream.subarray(cut));
      expect(frames, `cut at ${cut}`).toEqual(expected);
    }
  });

  it('yields the same frames for every pair of cuts', () => {
    for (let a = 0; a <= stream.length; a++) {
      for (let b = a; b <= stream.length; b++) {
        const { decoder, frames } = collector();
        decoder.push(stream.subarray(0, a));
        decoder.push(stream.subarray(a, b));
        decoder.push(stream.subarray(b));
        expect(frames).toEqual(expected);
      }
    }
  });

  it('yields the same frames one byte at a time', () => {
    const { decoder, frames } = collector();
    for (let i = 0; i < stream.length; i++) decoder.push(stream.subarray(i, i + 1));
    expect(frames).toEqual(expected);
  });

  it('rejects a negative length', () => {
    const { decoder } = collector();
    expect(() => decoder.push(Buffer.from('ffffffff00', 'hex'))).toThrow(DecodeError);
  });

  it('skips an oversized frame without buffering it, reports it with its reply header whatever the cut, and goes on', () => {
    const { decoder, frames, oversized } = collector(16);
    const big = bytes().int(7).long(9n).int(0).raw(Buffer.alloc(100, 0xab)).build();
    const input = Buffer.concat([frame(Buffer.from('aa', 'hex')), frame(big), frame(Buffer.from('bb', 'hex'))]);
    for (let cut = 0; cut <= input.length; cut++) {
      frames.length = 0;
      oversized.length = 0;
      decoder.push(input.subarray(0, cut));
      decoder.push(input.subarray(cut));
      expect(frames).toEqual(['aa', 'bb']);
      expect(oversized).toEqual([{ length: big.length, header: big.subarray(0, 16).toString('hex') }]);
      expect(decoder.idle).toBe(true);
    }
  });

  it('reports an oversized frame once its 16-byte header is in, one byte at a time', () => {
    const { decoder, oversized } = collector(8);
    const big = bytes().int(-1).long(3n).int(0).raw(Buffer.alloc(20)).build();
    const input = frame(big);
    for (let i = 0; i < 4 + 15; i++) decoder.push(input.subarray(i, i + 1));
    expect(oversized).toEqual([]);
    decoder.push(input.subarray(19, 20));
    expect(oversized).toEqual([{ length: big.length, header: big.subarray(0, 16).toString('hex') }]);
  });

  it('keeps a short oversized frame whole as its header', () => {
    const { decoder, frames, oversized } = collector(2);
    decoder.push(Buffer.concat([frame(Buffer.from('010203', 'hex')), frame(Buffer.from('04', 'hex'))]));
    expect(oversized).toEqual([{ length: 3, header: '010203' }]);
    expect(frames).toEqual(['04']);
  });

  it('does not allocate a huge claimed length', () => {
    const { decoder, oversized } = collector();
    const header = bytes().int(5).long(1n).int(0).build();
    decoder.push(Buffer.concat([Buffer.from('7fffffff', 'hex'), header, Buffer.alloc(1000)]));
    expect(oversized).toEqual([{ length: 0x7fffffff, header: header.toString('hex') }]);
    expect(decoder.idle).toBe(false);
    expect(process.memoryUsage().arrayBuffers).toBeLessThan(0x7fffffff);
  });
});
