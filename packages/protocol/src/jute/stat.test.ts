/**
 * The Stat as a JavaScript value (issue 37 item 6): times are numbers that `new Date` takes, and
 * a decoded Stat goes through `JSON.stringify` with its 64-bit ids as exact decimal strings.
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DecodeError, InvalidArgumentError } from '../errors.js';
import { bytes } from '../testing/bytes.js';
import { readStat, writeStat, type Stat, type StatJSON } from './data.js';
import { readGetDataResponse } from './proto.js';
import { JuteReader } from './reader.js';
import { JuteWriter } from './writer.js';

const CTIME = Date.UTC(2026, 10, 29, 6, 0, 0, 123);
const MTIME = CTIME + 4_567;
// Above 2^53: a double would round these. 0x8100... is a session of the server with myid 129,
// negative as Java's long (SessionTrackerImpl puts myid in the top byte).
const CZXID = 0x7fff_ffff_0000_0001n;
const MZXID = 0x0020_0000_0000_0003n;
const OWNER = -0x7eff_ffd2_1a00_0001n;
const PZXID = 2n ** 63n - 1n;

function encoded(ctime: bigint = BigInt(CTIME), mtime: bigint = BigInt(MTIME)): Buffer {
  return bytes().long(CZXID).long(MZXID).long(ctime).long(mtime).int(7).int(2).int(1).long(OWNER).int(5).int(0).long(PZXID).build();
}

const decoded = (): Stat => readStat(new JuteReader(encoded()));

describe('Stat - times', () => {
  it('ctime and mtime decode as numbers of ms since the epoch, which new Date takes', () => {
    const stat = decoded();
    expect(stat.ctime).toBe(CTIME);
    expect(stat.mtime).toBe(MTIME);
    expect(new Date(stat.mtime).toISOString()).toBe('2026-11-29T06:00:04.690Z');
    expect(new Date(stat.ctime).getTime()).toBe(CTIME);
  });

  it('a time of 0 (the root, /zookeeper) and negative times decode exactly', () => {
    expect(readStat(new JuteReader(encoded(0n, -1n)))).toMatchObject({ ctime: 0, mtime: -1 });
    const edge = readStat(new JuteReader(encoded(BigInt(Number.MAX_SAFE_INTEGER), BigInt(Number.MIN_SAFE_INTEGER))));
    expect(edge).toMatchObject({ ctime: Number.MAX_SAFE_INTEGER, mtime: Number.MIN_SAFE_INTEGER });
  });

  it('a time a double cannot hold exactly is a DecodeError at its offset, not a rounded number', () => {
    for (const t of [2n ** 53n, -(2n ** 53n), 2n ** 63n - 1n, -(2n ** 63n)]) {
      let thrown: unknown;
      try {
        readStat(new JuteReader(encoded(BigInt(CTIME), t)));
      } catch (e) {
        thrown = e;
      }
      expect(thrown, String(t)).toBeInstanceOf(DecodeError);
      expect((thrown as DecodeError).offset).toBe(24);
    }
  });

  it('writeStat writes the times back byte for byte and refuses one that is not a safe integer', () => {
    const w = new JuteWriter();
    writeStat(w, decoded());
    expect(w.toBuffer().toString('hex')).toBe(encoded().toString('hex'));
    for (const mtime of [2 ** 53, 1.5, Number.NaN]) expect(() => writeStat(new JuteWriter(), { ...decoded(), mtime }), String(mtime)).toThrow(InvalidArgumentError);
  });
});

describe('Stat - JSON', () => {
  it('JSON.stringify gives the 64-bit ids as decimal strings and the rest as numbers', () => {
    const json = JSON.parse(JSON.stringify(decoded())) as StatJSON;
    expect(json).toEqual({
      czxid: '9223372032559808513',
      mzxid: '9007199254740995',
      ctime: CTIME,
      mtime: MTIME,
      version: 7,
      cversion: 2,
      aversion: 1,
      ephemeralOwner: '-9151314245684559873',
      dataLength: 5,
      numChildren: 0,
      pzxid: '9223372036854775807',
    });
  });

  it('the decimal strings round-trip every 64-bit id exactly (BigInt(json.czxid))', () => {
    const stat = decoded();
    const json = JSON.parse(JSON.stringify({ stat })) as { stat: StatJSON };
    expect(BigInt(json.stat.czxid)).toBe(stat.czxid);
    expect(BigInt(json.stat.mzxid)).toBe(stat.mzxid);
    expect(BigInt(json.stat.ephemeralOwner)).toBe(stat.ephemeralOwner);
    expect(BigInt(json.stat.pzxid)).toBe(stat.pzxid);
    expect(new Date(json.stat.mtime).getTime()).toBe(stat.mtime);
  });

  it('toJSON is not an own or enumerable property: keys, spread and equality see the eleven fields in wire order; inspect names it Stat', () => {
    const stat = decoded();
    expect(Object.keys(stat)).toEqual(['czxid', 'mzxid', 'ctime', 'mtime', 'version', 'cversion', 'aversion', 'ephemeralOwner', 'dataLength', 'numChildren', 'pzxid']);
    expect(Object.hasOwn(stat, 'toJSON')).toBe(false);
    expect(stat).toEqual({ ...stat });
    expect(inspect(stat, { breakLength: Infinity })).toMatch(/^Stat \{ czxid: 9223372032559808513n, mzxid: 9007199254740995n, ctime: 1795932000123,/);
  });

  it('a Stat inside a decoded reply serialises too', () => {
    const reply = Buffer.concat([bytes().buf(Buffer.from('v')).build(), encoded()]);
    const { stat } = readGetDataResponse(new JuteReader(reply));
    expect(JSON.parse(JSON.stringify({ data: 'v', stat })).stat.czxid).toBe(CZXID.toString());
  });
});
