/**
 * What the servers did during a repetition, counted from outside with the four-letter words:
 * requests received (`mntr` packets_received, summed over the servers: each counts its own
 * clients' packets, pings included), transactions committed (the `srvr` zxid's counter) and log
 * flushes (`mntr` cnt_fsynctime, ZooKeeper 3.6+; the most any one server made). Per operation, a
 * row then says what bounds it: a client cannot beat another that sends the same requests and
 * waits on the same commits.
 */
import { fourLetter } from '@zk/test/harness';
import type { Sample } from './stats.js';

/** A server's address. */
export interface ServerAddress {
  readonly host: string;
  readonly port: number;
}

/** The servers of a connect string (its chroot dropped). */
export function serversOf(connect: string): ServerAddress[] {
  return connect
    .replace(/\/.*$/, '')
    .split(',')
    .map((hostPort) => {
      const colon = hostPort.lastIndexOf(':');
      return { host: hostPort.slice(0, colon), port: Number(hostPort.slice(colon + 1)) };
    });
}

interface Counters {
  readonly packets: number | undefined;
  readonly zxid: bigint | undefined;
  readonly fsyncs: number | undefined;
}

const counter = (text: string, key: string) => {
  const m = new RegExp(`^${key}\\s+(\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
};

async function read(servers: readonly ServerAddress[]): Promise<Counters> {
  const each = await Promise.all(
    servers.map(async ({ host, port }) => {
      const [mntr, srvr] = await Promise.all([fourLetter(host, port, 'mntr').catch(() => ''), fourLetter(host, port, 'srvr').catch(() => '')]);
      const zxid = /^Zxid: (0x[0-9a-f]+)/m.exec(srvr)?.[1];
      return { packets: counter(mntr, 'zk_packets_received'), fsyncs: counter(mntr, 'zk_cnt_fsynctime'), zxid: zxid === undefined ? undefined : BigInt(zxid) };
    }),
  );
  const all = <T>(values: ReadonlyArray<T | undefined>): T[] | undefined => (values.every((v) => v !== undefined) ? (values as T[]) : undefined);
  const packets = all(each.map((e) => e.packets));
  const fsyncs = all(each.map((e) => e.fsyncs));
  const zxids = all(each.map((e) => e.zxid));
  return {
    packets: packets?.reduce((a, b) => a + b, 0),
    fsyncs: fsyncs === undefined ? undefined : Math.max(...fsyncs),
    zxid: zxids?.reduce((a, b) => (b > a ? b : a)),
  };
}

/**
 * `run`'s sample with what the servers did per operation: `serverRequestsPer<unit>`,
 * `serverTxnsPer<unit>` (within one leader epoch) and `fsyncsPer<unit>`, each left out when a
 * server does not report it.
 */
export async function counted(servers: readonly ServerAddress[], unit: string, run: () => Promise<Sample>): Promise<Sample> {
  const before = await read(servers);
  const sample = await run();
  const after = await read(servers);
  const metrics: Record<string, number> = { ...sample.metrics };
  if (before.packets !== undefined && after.packets !== undefined) metrics[`serverRequestsPer${unit}`] = (after.packets - before.packets) / sample.ops;
  // The zxid's low 32 bits count the transactions of the leader's epoch: only within one epoch.
  if (before.zxid !== undefined && after.zxid !== undefined && before.zxid >> 32n === after.zxid >> 32n) metrics[`serverTxnsPer${unit}`] = Number(after.zxid - before.zxid) / sample.ops;
  if (before.fsyncs !== undefined && after.fsyncs !== undefined) metrics[`fsyncsPer${unit}`] = (after.fsyncs - before.fsyncs) / sample.ops;
  return { ...sample, metrics };
}
