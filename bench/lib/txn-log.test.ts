import { mkdtemp, rm, writeFile, appendFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LOG_HEADER_BYTES, TxnLogMeter, walkRecords } from './txn-log.js';

/** A log file's header: ZKLG, version 2, dbid 0. */
function header(): Buffer {
  const b = Buffer.alloc(LOG_HEADER_BYTES);
  b.writeInt32BE(0x5a4b4c47, 0);
  b.writeInt32BE(2, 4);
  return b;
}

/** One record as FileTxnLog.append writes it: CRC, length, the bytes, 0x42. */
function record(length: number): Buffer {
  const b = Buffer.alloc(8 + 4 + length + 1, 7);
  b.writeBigInt64BE(123n, 0);
  b.writeInt32BE(length, 8);
  b[b.length - 1] = 0x42;
  return b;
}

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('transaction log bytes', () => {
  it('walks records to the preallocated zeros, not the file size', () => {
    const bytes = Buffer.concat([record(30), record(50), Buffer.alloc(1000)]);
    expect(walkRecords(bytes, 16)).toEqual({ end: 16 + 43 + 63, records: 2, complete: true });
  });

  it('stops before a record cut off by the buffer or not yet ended', () => {
    const two = Buffer.concat([record(30), record(50)]);
    expect(walkRecords(two.subarray(0, 43 + 20), 0)).toEqual({ end: 43, records: 1, complete: false });
    const unfinished = Buffer.concat([record(30), record(50)]);
    unfinished[unfinished.length - 1] = 0;
    expect(walkRecords(unfinished, 0)).toEqual({ end: 43, records: 1, complete: true });
  });

  it('sums the log files of a directory and reads on from where it stopped', async () => {
    dir = await mkdtemp(join(tmpdir(), 'txn-log-test-'));
    const a = join(dir, 'log.1');
    await writeFile(a, Buffer.concat([header(), record(30), Buffer.alloc(4096)]));
    await writeFile(join(dir, 'snapshot.0'), Buffer.alloc(500, 1));
    const meter = new TxnLogMeter(dir);
    expect(await meter.read()).toEqual({ bytes: 16 + 43, records: 1 });
    // More records land in the preallocated space, and a new file starts.
    await writeFile(a, Buffer.concat([header(), record(30), record(100), Buffer.alloc(4096)]));
    await writeFile(join(dir, 'log.2'), Buffer.concat([header(), record(10)]));
    expect(await meter.read()).toEqual({ bytes: 16 + 43 + 113 + 16 + 23, records: 3 });
    // A record longer than the 1 MiB chunk.
    await appendFile(join(dir, 'log.2'), record(3 << 20));
    expect(await meter.read()).toEqual({ bytes: 16 + 43 + 113 + 16 + 23 + 13 + (3 << 20), records: 4 });
  });
});
