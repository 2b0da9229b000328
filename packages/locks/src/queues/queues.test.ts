import { describe, expect, it } from 'vitest';
import { decodeItems, encodeItems, ItemFramingError, stringSerializer } from './item-codec.js';
import { DELAY_LAYOUT, epochOf, epochToString, fixId, ID_LAYOUT, parseId, PLAIN_LAYOUT, priorityToString } from './names.js';

describe('queue item framing - Curator ItemSerializer', () => {
  it('one item: version 0x00010001, opcode 1, length, bytes, opcode 2', () => {
    expect(encodeItems([Buffer.from('hi')]).toString('hex')).toBe('00010001' + '01' + '00000002' + '6869' + '02');
    expect(encodeItems([Buffer.alloc(0), Buffer.from([7])]).toString('hex')).toBe('00010001' + '0100000000' + '010000000107' + '02');
    expect(decodeItems(encodeItems([Buffer.from('a'), Buffer.from('bc')])).map((b) => b.toString())).toEqual(['a', 'bc']);
  });

  it('refuses what Curator refuses: raw bytes, another version or opcode, a negative size, truncation', () => {
    expect(() => decodeItems(Buffer.from('hello'))).toThrow(ItemFramingError);
    expect(() => decodeItems(Buffer.from('0001000203', 'hex'))).toThrow(/version/);
    expect(() => decodeItems(Buffer.from('0001000103', 'hex'))).toThrow(/opcode 3/);
    expect(() => decodeItems(Buffer.from('0001000101ffffffff02', 'hex'))).toThrow(/size -1/);
    const whole = encodeItems([stringSerializer.serialize('payload')]);
    for (let n = 0; n < whole.length; n++) expect(() => decodeItems(whole.subarray(0, n))).toThrow(ItemFramingError);
  });
});

describe('queue node names - Curator layouts', () => {
  it("priority: sign digit and 8 upper-case hex digits of the int's 32 bits; string order is priority order", () => {
    expect(priorityToString(0)).toBe('100000000');
    expect(priorityToString(10)).toBe('10000000A');
    expect(priorityToString(-1)).toBe('0FFFFFFFF');
    expect(priorityToString(-(2 ** 31))).toBe('080000000');
    const names = [5, -3, 0, 2 ** 31 - 1, -(2 ** 31), -1].map((p, i) => `queue-${priorityToString(p)}${String(i).padStart(10, '0')}`);
    expect(PLAIN_LAYOUT.order(['foreign', ...names], 0).map((n) => n.slice(6, 15))).toEqual(['080000000', '0FFFFFFFD', '0FFFFFFFF', '100000000', '100000005', '17FFFFFFF']);
  });

  it('delay: |hex epoch| in the name, ordered by it; unparsable names are due at once', () => {
    expect(epochToString(0x1234)).toBe('|00001234|');
    expect(epochToString(1_700_000_000_000)).toBe('|18BCFE56800|');
    expect(epochOf('queue-|18BCFE56800|0000000003')).toBe(1_700_000_000_000);
    expect(epochOf('queue-0000000003')).toBe(0);
    const order = DELAY_LAYOUT.order(['queue-|00000010|0000000001', 'queue-|00000005|0000000002', 'queue-|00000005|0000000000'], 0);
    expect(order).toEqual(['queue-|00000005|0000000000', 'queue-|00000005|0000000002', 'queue-|00000010|0000000001']);
    expect(DELAY_LAYOUT.delay('queue-|00000010|0000000001', 6)).toBe(10);
  });

  it('id: |id| with / and | made _, ordered by sequence', () => {
    expect(fixId('a/b|c')).toBe('a_b_c');
    expect(parseId('queue-|x_y|0000000004')).toEqual({ id: 'x_y', cleaned: 'queue-0000000004' });
    expect(parseId('queue-0000000004')).toEqual({ id: 'queue-0000000004', cleaned: 'queue-0000000004' });
    expect(ID_LAYOUT.order(['queue-|zz|0000000002', 'queue-|aa|0000000003', 'queue-|mm|0000000001'], 0)).toEqual(['queue-|mm|0000000001', 'queue-|zz|0000000002', 'queue-|aa|0000000003']);
  });
});
