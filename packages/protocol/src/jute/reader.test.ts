import { describe, expect, it, vi } from 'vitest';
import { DecodeError } from '../errors.js';
import { bytes } from '../testing/bytes.js';
import { JuteReader } from './reader.js';

function decodeError(fn: () => unknown): DecodeError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DecodeError);
    return e as DecodeError;
  }
  throw new Error('expected a DecodeError');
}

describe('JuteReader', () => {
  it('primitives - reads big-endian ints and longs at their extremes', () => {
    const buf = bytes().int(-(2 ** 31)).int(2 ** 31 - 1).int(-1).long(-(2n ** 63n)).long(2n ** 63n - 1n).long(-2n).build();
    const r = new JuteReader(buf);
    expect(r.readInt()).toBe(-(2 ** 31));
    expect(r.readInt()).toBe(2 ** 31 - 1);
    expect(r.readInt()).toBe(-1);
    expect(r.readLong()).toBe(-(2n ** 63n));
    expect(r.readLong()).toBe(2n ** 63n - 1n);
    expect(r.readLong()).toBe(-2n);
    expect(r.remaining).toBe(0);
    expect(r.offset).toBe(buf.length);
  });

  it('primitives - any non-zero boolean byte is true, as DataInput.readBoolean reads it', () => {
    const r = new JuteReader(Buffer.from([0, 1, 2, 0xff]));
    expect([r.readBool(), r.readBool(), r.readBool(), r.readBool()]).toEqual([false, true, true, true]);
  });

  it('buffer - length -1 is null, 0 is an empty buffer', () => {
    const r = new JuteReader(bytes().int(-1).int(0).build());
    expect(r.readBuffer()).toBeNull();
    const empty = r.readBuffer();
    expect(empty).not.toBeNull();
    expect(empty!.length).toBe(0);
  });

  it('buffer - returns a view of the input, not a copy', () => {
    const buf = bytes().buf(Buffer.from([1, 2, 3])).build();
    const got = new JuteReader(buf).readBuffer()!;
    expect([...got]).toEqual([1, 2, 3]);
    buf[4] = 9;
    expect(got[0]).toBe(9);
  });

  it('ustring - length -1 is null, 0 is the empty string, UTF-8 is decoded', () => {
    const r = new JuteReader(bytes().str(null).str('').str('zné€\u0000/😀').build());
    expect(r.readUString()).toBeNull();
    expect(r.readUString()).toBe('');
    expect(r.readUString()).toBe('zné€\u0000/😀');
  });

  it('ustring - decodes the 6-byte surrogate form a Java server writes outside the BMP', () => {
    // Bytes of "x\uD83D\uDE00y" as Java 3.8.0 BinaryOutputArchive.writeString wrote them.
    const r = new JuteReader(Buffer.from('0000000878eda0bdedb88079', 'hex'));
    expect(r.readUString()).toBe('x😀y');
  });

  it('ustring - a lone encoded surrogate reads as one U+FFFD, as Java reads it', () => {
    const r = new JuteReader(bytes().buf(Buffer.from('61eda080620a', 'hex')).buf(Buffer.from('edb880', 'hex')).build());
    expect(r.readUString()).toBe('a\uFFFDb\n');
    expect(r.readUString()).toBe('\uFFFD');
  });

  it('ustring - other invalid bytes become U+FFFD without failing', () => {
    const r = new JuteReader(bytes().buf(Buffer.from([0x61, 0xff, 0x62])).build());
    expect(r.readUString()).toBe('a\uFFFDb');
  });

  it('vector - count -1 is null, 0 is empty, items are read in order', () => {
    const r = new JuteReader(bytes().int(-1).int(0).int(2).int(7).int(8).build());
    expect(r.readVector((x) => x.readInt())).toBeNull();
    expect(r.readVector((x) => x.readInt())).toEqual([]);
    expect(r.readVector((x) => x.readInt())).toEqual([7, 8]);
  });

  it('string vector - keeps null elements distinct from empty strings', () => {
    const r = new JuteReader(bytes().strs(null).strs([]).strs(['a', null, '', 'ü']).build());
    expect(r.readStringVector()).toBeNull();
    expect(r.readStringVector()).toEqual([]);
    expect(r.readStringVector()).toEqual(['a', null, '', 'ü']);
  });

  it('window - honours offset and end even when the buffer holds more', () => {
    const buf = bytes().int(1).int(2).int(3).build();
    const r = new JuteReader(buf, 4, 8);
    expect(r.offset).toBe(4);
    expect(r.remaining).toBe(4);
    expect(r.readInt()).toBe(2);
    expect(decodeError(() => r.readInt()).offset).toBe(8);
  });

  it('window - refuses a window outside the buffer', () => {
    expect(() => new JuteReader(Buffer.alloc(4), 2, 5)).toThrow(RangeError);
    expect(() => new JuteReader(Buffer.alloc(4), 3, 2)).toThrow(RangeError);
  });

  it('truncation - every primitive short by any number of bytes throws DecodeError at its offset', () => {
    const cases: Array<[number, (r: JuteReader) => unknown]> = [
      [4, (r) => r.readInt()],
      [8, (r) => r.readLong()],
      [1, (r) => r.readBool()],
      [4, (r) => r.readBuffer()],
      [4, (r) => r.readUString()],
      [4, (r) => r.readVector((x) => x.readInt())],
      [4, (r) => r.readStringVector()],
    ];
    for (const [size, read] of cases) {
      for (let have = 0; have < size; have++) {
        const buf = Buffer.concat([Buffer.from([9, 9]), Buffer.alloc(have)]);
        const r = new JuteReader(buf, 2);
        expect(decodeError(() => read(r)).offset).toBe(2);
      }
    }
  });

  it('truncation - a length one byte past the end throws', () => {
    expect(decodeError(() => new JuteReader(bytes().int(3).raw([1, 2]).build()).readBuffer()).offset).toBe(0);
    expect(decodeError(() => new JuteReader(bytes().int(3).raw([0x61, 0x62]).build()).readUString()).offset).toBe(0);
  });

  it('lengths - below -1 throw DecodeError for buffers, strings and vectors', () => {
    for (const len of [-2, -(2 ** 31)]) {
      const buf = bytes().int(len).raw(Buffer.alloc(16)).build();
      expect(decodeError(() => new JuteReader(buf).readBuffer()).message).toMatch(/negative/);
      expect(() => new JuteReader(buf).readUString()).toThrow(DecodeError);
      expect(() => new JuteReader(buf).readVector((r) => r.readBool())).toThrow(DecodeError);
      expect(() => new JuteReader(buf).readStringVector()).toThrow(DecodeError);
    }
  });

  it('lengths - a huge claimed length throws before anything of that size is allocated', () => {
    const buf = bytes().int(0x7fffffff).raw([1, 2, 3, 4, 5, 6]).build(); // 10 bytes
    const alloc = vi.spyOn(Buffer, 'alloc');
    const allocUnsafe = vi.spyOn(Buffer, 'allocUnsafe');
    const item = vi.fn((r: JuteReader) => r.readBool());
    try {
      expect(decodeError(() => new JuteReader(buf).readBuffer()).offset).toBe(0);
      expect(() => new JuteReader(buf).readUString()).toThrow(DecodeError);
      expect(() => new JuteReader(buf).readVector(item)).toThrow(DecodeError);
      expect(() => new JuteReader(buf).readStringVector()).toThrow(DecodeError);
      expect(item).not.toHaveBeenCalled();
      expect(alloc).not.toHaveBeenCalled();
      expect(allocUnsafe).not.toHaveBeenCalled();
    } finally {
      alloc.mockRestore();
      allocUnsafe.mockRestore();
    }
  });

  it('lengths - a string vector count beyond remaining/4 is refused before reading items', () => {
    // 3 elements claimed, 8 bytes left: each element needs at least its 4-byte length.
    const buf = bytes().int(3).int(0).int(0).build();
    expect(() => new JuteReader(buf).readStringVector()).toThrow(DecodeError);
    expect(new JuteReader(bytes().int(2).int(0).int(-1).build()).readStringVector()).toEqual(['', null]);
  });

  it('skip - moves the cursor and checks bounds', () => {
    const r = new JuteReader(bytes().int(1).int(2).build());
    r.skip(4);
    expect(r.readInt()).toBe(2);
    expect(() => r.skip(1)).toThrow(DecodeError);
    expect(() => r.skip(-1)).toThrow(RangeError);
  });
});
