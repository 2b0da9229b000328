import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors.js';
import { bytes } from '../testing/bytes.js';
import { JuteReader } from './reader.js';
import { JuteWriter } from './writer.js';

describe('JuteWriter', () => {
  it('primitives - big-endian ints, longs and booleans as the independent builder encodes them', () => {
    const w = new JuteWriter();
    w.writeInt(-(2 ** 31)).writeInt(2 ** 31 - 1).writeInt(-1).writeInt(0x01020304);
    w.writeLong(-(2n ** 63n)).writeLong(2n ** 63n - 1n).writeLong(0x0102030405060708n);
    w.writeBool(true).writeBool(false);
    const expected = bytes()
      .int(-(2 ** 31)).int(2 ** 31 - 1).int(-1).int(0x01020304)
      .long(-(2n ** 63n)).long(2n ** 63n - 1n).long(0x0102030405060708n)
      .bool(true).bool(false)
      .build();
    expect(w.toBuffer().equals(expected)).toBe(true);
  });

  it('primitives - refuses ints and longs outside their range instead of wrapping', () => {
    const w = new JuteWriter();
    for (const bad of [2 ** 31, -(2 ** 31) - 1, 1.5, Number.NaN]) expect(() => w.writeInt(bad)).toThrow(InvalidArgumentError);
    for (const bad of [2n ** 63n, -(2n ** 63n) - 1n]) expect(() => w.writeLong(bad)).toThrow(InvalidArgumentError);
    expect(w.length).toBe(0);
  });

  it('buffer - null is length -1, empty is length 0, any Uint8Array is accepted', () => {
    const w = new JuteWriter();
    w.writeBuffer(null).writeBuffer(new Uint8Array(0)).writeBuffer(new Uint8Array([1, 2, 255])).writeBuffer(Buffer.from('hi'));
    const expected = bytes().int(-1).int(0).int(3).raw([1, 2, 255]).int(2).raw(Buffer.from('hi')).build();
    expect(w.toBuffer().equals(expected)).toBe(true);
  });

  it('ustring - null is length -1, "" is length 0, text is UTF-8 with its byte length', () => {
    const w = new JuteWriter();
    w.writeUString(null).writeUString('').writeUString('/zné€\u0000');
    const expected = bytes().int(-1).int(0).buf(Buffer.from('/zné€\u0000', 'utf8')).build();
    expect(w.toBuffer().equals(expected)).toBe(true);
  });

  it('ustring - matches the bytes Java 3.8.0 writes inside the BMP', () => {
    // Java BinaryOutputArchive.writeString("a\u00e9\u20ac") and ("\u0000"), captured from the 3.8.0 jar.
    expect(new JuteWriter().writeUString('a\u00e9\u20ac').toBuffer().toString('hex')).toBe('0000000661c3a9e282ac');
    expect(new JuteWriter().writeUString('\u0000').toBuffer().toString('hex')).toBe('0000000100');
    expect(new JuteWriter().writeUString('\uFFFF').toBuffer().toString('hex')).toBe('00000003efbfbf');
  });

  it('ustring - outside the BMP writes standard 4-byte UTF-8, which Java reads back intact', () => {
    expect(new JuteWriter().writeUString('x😀y').toBuffer().toString('hex')).toBe('0000000678f09f988079');
  });

  it('vector - null is count -1, empty is count 0, items in order', () => {
    const w = new JuteWriter();
    w.writeVector(null, (x, v: number) => x.writeInt(v));
    w.writeVector([], (x, v: number) => x.writeInt(v));
    w.writeVector([5, 6], (x, v) => x.writeInt(v));
    w.writeStringVector(null).writeStringVector([]).writeStringVector(['a', null, '', 'ü']);
    const expected = bytes().int(-1).int(0).int(2).int(5).int(6).strs(null).strs([]).strs(['a', null, '', 'ü']).build();
    expect(w.toBuffer().equals(expected)).toBe(true);
  });

  it('growth - doubles from a tiny capacity without losing bytes', () => {
    const w = new JuteWriter(0);
    const b = bytes();
    const big = Buffer.alloc(1000, 7);
    for (let i = 0; i < 200; i++) {
      w.writeInt(i).writeUString(`node-${i}-ü`).writeLong(BigInt(i) * 1_000_000_007n);
      b.int(i).str(`node-${i}-ü`).long(BigInt(i) * 1_000_000_007n);
    }
    w.writeBuffer(big);
    b.buf(big);
    const expected = b.build();
    expect(w.length).toBe(expected.length);
    expect(w.toBuffer().equals(expected)).toBe(true);
  });

  it('frame - finishFrame patches the payload length into the reserved prefix', () => {
    const w = JuteWriter.frame(1);
    expect(w.length).toBe(4);
    w.writeInt(7).writeInt(4).writeUString('/a').writeBool(true);
    const frame = w.finishFrame();
    expect(frame.equals(bytes().int(7).int(4).str('/a').bool(true).frame())).toBe(true);
  });

  it('frame - an empty frame has length 0', () => {
    expect(JuteWriter.frame().finishFrame().equals(Buffer.from([0, 0, 0, 0]))).toBe(true);
  });

  it('frame - finishFrame on a plain writer is refused', () => {
    expect(() => new JuteWriter().writeInt(1).finishFrame()).toThrow(InvalidArgumentError);
  });

  it('ownership - writes after toBuffer cannot change the bytes handed out', () => {
    const w = new JuteWriter(64);
    w.writeInt(1);
    const out = w.toBuffer();
    w.writeInt(2).writeInt(3);
    expect(out.equals(bytes().int(1).build())).toBe(true);
  });

  it('round trip - what the writer writes the reader reads, null and empty kept apart', () => {
    const w = new JuteWriter(8);
    w.writeBuffer(null).writeBuffer(new Uint8Array(0)).writeUString(null).writeUString('').writeUString('😀ä');
    w.writeStringVector(null).writeStringVector([]).writeStringVector([null, '']);
    const r = new JuteReader(w.toBuffer());
    expect(r.readBuffer()).toBeNull();
    expect(r.readBuffer()?.length).toBe(0);
    expect(r.readUString()).toBeNull();
    expect(r.readUString()).toBe('');
    expect(r.readUString()).toBe('😀ä');
    expect(r.readStringVector()).toBeNull();
    expect(r.readStringVector()).toEqual([]);
    expect(r.readStringVector()).toEqual([null, '']);
    expect(r.remaining).toBe(0);
  });
});
