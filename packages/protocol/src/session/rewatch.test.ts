import { describe, expect, it } from 'vitest';
import { OpCode } from '../constants.js';
import { JuteReader } from '../jute/reader.js';
import { JuteWriter } from '../jute/writer.js';
import { readSetWatches, readSetWatches2 } from '../jute/proto.js';
import { SET_WATCHES_MAX_LENGTH, setWatchesRequests } from './rewatch.js';

const empty = { data: [], exist: [], child: [], persistent: [], persistentRecursive: [] };

function encode(write: (w: JuteWriter) => void): Buffer {
  const w = new JuteWriter();
  write(w);
  return w.toBuffer();
}

describe('rewatch - setWatchesRequests', () => {
  it('sends nothing for an empty table', () => {
    expect(setWatchesRequests(empty, '', 5n, 1 << 20)).toEqual([]);
  });

  it('uses SetWatches without persistent watches, with the chroot and relative zxid', () => {
    const reqs = setWatchesRequests({ ...empty, data: ['/a'], exist: ['/b'], child: ['/'] }, '/app', 42n, 1 << 20);
    expect(reqs).toHaveLength(1);
    expect(reqs[0]?.type).toBe(OpCode.setWatches);
    const rec = readSetWatches(new JuteReader(encode(reqs[0]!.write)));
    expect(rec).toEqual({ relativeZxid: 42n, dataWatches: ['/app/a'], existWatches: ['/app/b'], childWatches: ['/app'] });
  });

  it('re-arms getConfig’s watch on the config node itself, outside the chroot', () => {
    const reqs = setWatchesRequests({ ...empty, data: ['/zookeeper/config', '/a'] }, '/app', 3n, 1 << 20);
    const rec = readSetWatches(new JuteReader(encode(reqs[0]!.write)));
    expect(rec.dataWatches).toEqual(['/zookeeper/config', '/app/a']);
  });

  it('uses SetWatches2 when persistent watches exist', () => {
    const reqs = setWatchesRequests({ ...empty, data: ['/a'], persistentRecursive: ['/r'] }, '', 1n, 1 << 20);
    expect(reqs[0]?.type).toBe(OpCode.setWatches2);
    const rec = readSetWatches2(new JuteReader(encode(reqs[0]!.write)));
    expect(rec.persistentRecursiveWatches).toEqual(['/r']);
    expect(rec.dataWatches).toEqual(['/a']);
  });

  it('splits 10,000 long paths into batches under the limit, losing none', () => {
    const data = Array.from({ length: 10_000 }, (_, i) => `/some/rather/long/path/to/a/watched/node/number-${i}`);
    const reqs = setWatchesRequests({ ...empty, data }, '', 7n, 1 << 20);
    expect(reqs.length).toBeGreaterThan(1);
    const seen: string[] = [];
    for (const r of reqs) {
      const bytes = encode(r.write);
      expect(bytes.length).toBeLessThanOrEqual(SET_WATCHES_MAX_LENGTH + 64);
      seen.push(...(readSetWatches(new JuteReader(bytes)).dataWatches ?? []).map(String));
    }
    expect(seen).toEqual(data);
  });
});
