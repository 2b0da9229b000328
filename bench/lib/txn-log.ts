/**
 * How many bytes a ZooKeeper server has really written to its transaction logs. A server
 * preallocates each `log.<zxid>` file in 64 MiB steps of zeros, so the file size (and `mntr`'s
 * `zk_log_dir_size`, `conf`'s `dataLogSize`) says nothing about what was logged: this reads each
 * file's records up to the first that is not there, as the server's own reader does
 * (`FileTxnLog`: a 16-byte header, magic `ZKLG`, version, dbid; then per transaction a CRC
 * (8 bytes), the record's length (4, big-endian), the record, and an end-of-record byte 0x42; a
 * length of 0 is the preallocated tail).
 */
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** The file header: magic, version, dbid. */
export const LOG_HEADER_BYTES = 16;
/** `ZKLG`, the header's first int. */
const LOG_MAGIC = 0x5a4b4c47;
/** What `FileTxnLog.append` writes after each record. */
const END_OF_RECORD = 0x42;
/** CRC and length before each record. */
const RECORD_HEAD = 12;
const CHUNK = 1 << 20;

/**
 * The end of the records in `bytes` read from file offset `offset` (at a record boundary): the
 * offset just past the last complete record, and the records found. A record cut off by the end
 * of `bytes` is not counted (read on from the returned offset).
 */
export function walkRecords(bytes: Uint8Array, offset: number): { end: number; records: number; complete: boolean } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  let records = 0;
  for (;;) {
    if (at + RECORD_HEAD > bytes.length) return { end: offset + at, records, complete: false };
    const length = view.getInt32(at + 8);
    // The preallocated zeros, or garbage: the end of what was written.
    if (length <= 0) return { end: offset + at, records, complete: true };
    const next = at + RECORD_HEAD + length + 1;
    if (next > bytes.length) return { end: offset + at, records, complete: false };
    // A record whose end byte is not there yet is being written: the end is before it.
    if (bytes[next - 1] !== END_OF_RECORD) return { end: offset + at, records, complete: true };
    at = next;
    records++;
  }
}

/**
 * The transaction logs of one server's `dataLogDir` (its `version-2` directory, as `conf`
 * prints it). Remembers how far each file was read, so each call reads only what is new.
 */
export class TxnLogMeter {
  readonly #dir: string;
  /** Per file, the end of its records as last read and their count. */
  readonly #files = new Map<string, { end: number; records: number }>();

  constructor(dir: string) {
    this.#dir = dir;
  }

  /**
   * The bytes written so far to every `log.*` file of the directory (headers included), and the
   * transactions (records) in them. Differences between two calls are what was logged in between.
   */
  async read(): Promise<{ bytes: number; records: number }> {
    const names = (await readdir(this.#dir)).filter((n) => n.startsWith('log.'));
    let bytes = 0;
    let records = 0;
    for (const name of names) {
      const file = await this.#readFile(join(this.#dir, name));
      bytes += file.end;
      records += file.records;
    }
    return { bytes, records };
  }

  async #readFile(path: string): Promise<{ end: number; records: number }> {
    const known = this.#files.get(path);
    const handle = await open(path, 'r');
    try {
      let end = known?.end;
      let records = known?.records ?? 0;
      if (end === undefined) {
        const header = new Uint8Array(LOG_HEADER_BYTES);
        const { bytesRead } = await handle.read(header, 0, LOG_HEADER_BYTES, 0);
        // A file just created, its header not written yet: nothing logged in it so far.
        if (bytesRead < LOG_HEADER_BYTES || new DataView(header.buffer).getInt32(0) !== LOG_MAGIC) return { end: 0, records: 0 };
        end = LOG_HEADER_BYTES;
      }
      let size = CHUNK;
      for (;;) {
        const buffer = new Uint8Array(size);
        const { bytesRead } = await handle.read(buffer, 0, size, end);
        const walked = walkRecords(buffer.subarray(0, bytesRead), end);
        const progressed = walked.end > end;
        end = walked.end;
        records += walked.records;
        if (walked.complete || bytesRead < size) break;
        // One record longer than the chunk: read a larger one.
        if (!progressed) size *= 2;
      }
      const file = { end, records };
      this.#files.set(path, file);
      return file;
    } finally {
      await handle.close();
    }
  }
}
