/**
 * What the servers spend on a fleet of idle lease holders (issue 35), read from outside at the
 * start and end of a window and taken as differences, the leader's figures (the server `srvr`
 * calls `leader`, or the standalone server):
 *
 * - transactions: the low 32 bits of the leader's zxid (`srvr`), which count the transactions of
 *   its epoch (a window across a leader change is not counted);
 * - transaction-log bytes: the records really written to the leader's `log.*` files (its
 *   `dataLogDir` from `conf`), read as the server reads them ({@link TxnLogMeter}), not the files'
 *   preallocated sizes; every other server of an ensemble logs the same records;
 * - fsyncs: `mntr`'s `zk_cnt_fsynctime`, the number of log flushes the leader timed (one per
 *   group commit: `FileTxnLog.commit` times each `fsync` of the log);
 * - snapshots: the `snapshot.*` files in the leader's `dataDir` (and `mntr`'s `zk_cnt_snapshottime`);
 * - the leader's CPU: user + system time of its JVM from `/proc/<pid>/stat`, when the server is
 *   a local process whose pid is known (the harness's).
 */
import { readdir, readFile } from 'node:fs/promises';
import { fourLetter } from '@zk/test/harness';
import { TxnLogMeter } from './txn-log.js';

/** A server to read: its client address and, for a local process, its pid. */
export interface FleetServer {
  readonly host: string;
  readonly port: number;
  readonly pid?: number | undefined;
}

/** The leader's counters at one moment. */
export interface LeaderCounters {
  /** performance.now() when read, ms. */
  readonly at: number;
  /** The leader's client port (a change between two readings voids the window). */
  readonly leader: number;
  readonly zxid: bigint;
  readonly fsyncs: number | undefined;
  readonly snapshotTimings: number | undefined;
  readonly snapshotFiles: number | undefined;
  readonly logBytes: number | undefined;
  readonly logRecords: number | undefined;
  /** CPU seconds of the leader's process so far. */
  readonly cpuSeconds: number | undefined;
}

/** What a window cost on the leader (differences of two {@link LeaderCounters}). */
export interface LeaderSpend {
  readonly seconds: number;
  /** Undefined when the leader changed (or its epoch did) during the window. */
  readonly txns: number | undefined;
  readonly fsyncs: number | undefined;
  readonly snapshots: number | undefined;
  readonly logBytes: number | undefined;
  readonly logRecords: number | undefined;
  readonly cpuSeconds: number | undefined;
}

const counter = (text: string, key: string) => {
  const m = new RegExp(`^${key}\\s+(\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
};

/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`: 100 on Linux everywhere it matters). */
const CLK_TCK = 100;

/** User + system CPU seconds of a process, or undefined when /proc does not have it. */
export async function processCpuSeconds(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // After the command's closing parenthesis: field 3 (state) onwards; utime is field 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  } catch {
    return undefined;
  }
}

/** Reads the leader's counters of one ensemble (its data directories found once, through `conf`). */
export class LeaderMeter {
  readonly #servers: readonly FleetServer[];
  readonly #logs = new Map<number, TxnLogMeter>();
  readonly #dataDirs = new Map<number, string | undefined>();

  constructor(servers: readonly FleetServer[]) {
    this.#servers = servers;
  }

  /** What `srvr` says `server` is (`leader`, `follower`, `standalone`...), or `down`. */
  async modeOf(server: FleetServer): Promise<string> {
    const srvr = await fourLetter(server.host, server.port, 'srvr').catch(() => '');
    return /^Mode: (\S+)/m.exec(srvr)?.[1] ?? 'down';
  }

  /** The leader (or standalone server) and its counters now. */
  async read(): Promise<LeaderCounters> {
    const modes = await Promise.all(this.#servers.map(async (s) => ({ s, srvr: await fourLetter(s.host, s.port, 'srvr').catch(() => '') })));
    const found = modes.find(({ srvr }) => /^Mode: (leader|standalone)/m.test(srvr));
    if (!found) throw new Error(`no server says it leads: ${modes.map(({ s, srvr }) => `${s.port} ${/^Mode: (.*)$/m.exec(srvr)?.[1] ?? 'down'}`).join(', ')}`);
    const { s: leader, srvr } = found;
    const zxid = BigInt(/^Zxid: (0x[0-9a-f]+)/m.exec(srvr)?.[1] ?? 'x');
    const at = performance.now();
    const [mntr, log, snapshotFiles, cpuSeconds] = await Promise.all([
      fourLetter(leader.host, leader.port, 'mntr').catch(() => ''),
      this.#logMeter(leader).then((m) => m?.read()),
      this.#dataDir(leader).then((dir) => (dir === undefined ? undefined : readdir(dir).then((names) => names.filter((n) => n.startsWith('snapshot.')).length, () => undefined))),
      leader.pid === undefined ? undefined : processCpuSeconds(leader.pid),
    ]);
    return {
      at,
      leader: leader.port,
      zxid,
      fsyncs: counter(mntr, 'zk_cnt_fsynctime'),
      snapshotTimings: counter(mntr, 'zk_cnt_snapshottime'),
      snapshotFiles,
      logBytes: log?.bytes,
      logRecords: log?.records,
      cpuSeconds,
    };
  }

  async #conf(server: FleetServer): Promise<{ dataDir?: string; dataLogDir?: string }> {
    const conf = await fourLetter(server.host, server.port, 'conf').catch(() => '');
    const dataDir = /^dataDir=(.*)$/m.exec(conf)?.[1];
    const dataLogDir = /^dataLogDir=(.*)$/m.exec(conf)?.[1];
    return { ...(dataDir ? { dataDir } : {}), ...(dataLogDir ? { dataLogDir } : {}) };
  }

  /** The server's snapshot directory when this machine can read it. */
  async #dataDir(server: FleetServer): Promise<string | undefined> {
    if (!this.#dataDirs.has(server.port)) {
      const { dataDir } = await this.#conf(server);
      this.#dataDirs.set(server.port, dataDir !== undefined && (await readdir(dataDir).then(() => true, () => false)) ? dataDir : undefined);
    }
    return this.#dataDirs.get(server.port);
  }

  async #logMeter(server: FleetServer): Promise<TxnLogMeter | undefined> {
    if (!this.#logs.has(server.port)) {
      const { dataLogDir } = await this.#conf(server);
      if (dataLogDir === undefined || !(await readdir(dataLogDir).then(() => true, () => false))) return undefined;
      this.#logs.set(server.port, new TxnLogMeter(dataLogDir));
    }
    return this.#logs.get(server.port);
  }
}

/** The difference of two readings; undefined figures where either reading lacks one. */
export function spend(before: LeaderCounters, after: LeaderCounters): LeaderSpend {
  const diff = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : b - a);
  const sameLeader = before.leader === after.leader && before.zxid >> 32n === after.zxid >> 32n;
  return {
    seconds: (after.at - before.at) / 1000,
    txns: sameLeader ? Number(after.zxid - before.zxid) : undefined,
    fsyncs: sameLeader ? diff(before.fsyncs, after.fsyncs) : undefined,
    snapshots: sameLeader ? (diff(before.snapshotFiles, after.snapshotFiles) ?? diff(before.snapshotTimings, after.snapshotTimings)) : undefined,
    logBytes: sameLeader ? diff(before.logBytes, after.logBytes) : undefined,
    logRecords: sameLeader ? diff(before.logRecords, after.logRecords) : undefined,
    cpuSeconds: sameLeader ? diff(before.cpuSeconds, after.cpuSeconds) : undefined,
  };
}
