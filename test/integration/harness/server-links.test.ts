/**
 * Ensembles whose server-to-server links go through fault proxies (`serverLinks: true`,
 * test/harness/server-links.ts): the election header rewrite, no connection around the proxies
 * (checked with `ss`), and partitions between servers that move the leader.
 */
import { spawnSync } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ZooKeeper } from '@zk/protocol';
import { rewriteElectionAddress, startZooKeeper, TcpProxy, timing, waitFor, type ServerHandle, type ServerLinks, type ZooKeeperEnsemble } from '../../harness/index.js';

const external = process.env.ZK_CONNECT;
const hasSs = spawnSync('ss', ['-V'], { stdio: 'ignore' }).status === 0;

/** A QuorumCnxManager initial message (3.6+ form) announcing `address`, then `rest`. */
function initialMessage(sid: number, address: string, rest = Buffer.alloc(0), version = -65536n): Buffer {
  const head = Buffer.alloc(20);
  head.writeBigInt64BE(version, 0);
  head.writeBigInt64BE(BigInt(sid), 8);
  head.writeInt32BE(Buffer.byteLength(address), 16);
  return Buffer.concat([head, Buffer.from(address), rest]);
}

describe('harness - server links: the election header rewrite', () => {
  it('rewrites the announced address however the header is split, and passes other forms through', async () => {
    const received: Buffer[] = [];
    const sink = createServer((s: Socket) => {
      const chunks: Buffer[] = [];
      s.on('data', (d: Buffer) => chunks.push(d));
      s.on('end', () => {
        received.push(Buffer.concat(chunks));
        s.end();
      });
    });
    await new Promise<void>((r) => sink.listen(0, '127.0.0.1', () => r()));
    const proxy = await TcpProxy.start({ host: '127.0.0.1', port: (sink.address() as { port: number }).port }, { rewriteFirstUp: (b) => rewriteElectionAddress(b, '127.0.0.1:7') });
    /** Sends `bytes` through the proxy in pieces of `step` bytes, each in its own segment. */
    const send = async (bytes: Buffer, step: number) => {
      const socket = connect({ host: '127.0.0.1', port: proxy.port });
      socket.setNoDelay(true);
      await new Promise<void>((r) => socket.once('connect', () => r()));
      for (let i = 0; i < bytes.length; i += step) {
        socket.write(bytes.subarray(i, i + step));
        await new Promise((r) => setTimeout(r, 2));
      }
      socket.end();
      await new Promise<void>((r) => socket.once('close', () => r()));
    };
    const after = Buffer.from('votes follow');
    for (const step of [1, 7, 1000]) await send(initialMessage(2, '127.0.0.1:65001', after), step);
    // multiAddress (-65535): several addresses joined by '|', all replaced by the one.
    await send(initialMessage(3, '127.0.0.1:65001|10.0.0.1:65002', after, -65535n), 3);
    // A pre-3.6 server sends its sid as the first long: untouched.
    const old = Buffer.concat([Buffer.alloc(8), after]);
    old.writeBigInt64BE(2n, 0);
    await send(old, 5);
    await waitFor('every connection to arrive', () => (received.length === 5 ? true : undefined));
    for (const r of received.slice(0, 3)) expect(r).toEqual(initialMessage(2, '127.0.0.1:7', after));
    expect(received[3]).toEqual(initialMessage(3, '127.0.0.1:7', after, -65535n));
    expect(received[4]).toEqual(old);
    expect(rewriteElectionAddress(initialMessage(2, '127.0.0.1:65001').subarray(0, 25), 'x:1')).toBe('need-more');
    await proxy.close();
    await new Promise<void>((r) => sink.close(() => r()));
  });
});

/** One end of an established TCP connection, from `ss -tnp`. */
interface SocketEnd {
  local: number;
  peer: number;
  pids: number[];
}

/** Every established TCP socket on the machine with its owning pids (own processes only). */
function establishedSockets(): SocketEnd[] {
  const out = spawnSync('ss', ['-tnpH', 'state', 'established'], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`ss failed: ${out.stderr}`);
  const port = (addr: string) => Number(addr.slice(addr.lastIndexOf(':') + 1));
  return out.stdout
    .split('\n')
    .filter((l) => l.trim())
    .map((line) => {
      // Recv-Q Send-Q Local:Port Peer:Port users:(("java",pid=123,fd=45),...)
      const [, , local, peer, ...rest] = line.trim().split(/\s+/);
      return { local: port(local ?? ''), peer: port(peer ?? ''), pids: [...rest.join(' ').matchAll(/pid=(\d+)/g)].map((m) => Number(m[1])) };
    });
}

describe.skipIf(external)('harness - server links (skipped on an external ensemble: needs its own servers)', () => {
  let ensemble: ZooKeeperEnsemble;
  let links: ServerLinks;

  beforeAll(async () => {
    // syncLimit 5 ticks of 1 s: a follower cut from its leader gives up after ~5 s.
    ensemble = await startZooKeeper({ servers: 3, serverLinks: true, tickTime: 1000, config: { syncLimit: 5 } });
    links = ensemble.links!;
    process.stderr.write(`[zk] 3-node ensemble with server links started in ${Math.round(ensemble.startMs)} ms\n`);
  }, 180_000);

  afterEach(async () => {
    links?.heal();
    await ensemble?.waitForQuorum(timing(60_000), { all: true });
  }, 90_000);

  afterAll(async () => {
    await ensemble?.close();
  });

  /** Each server's mode, by id. */
  const modes = async () => new Map(await Promise.all(ensemble.servers.map(async (s) => [s.id, await s.mode()] as const)));

  it.skipIf(!hasSs)('no server-to-server connection goes around the proxies (ss -tnp)', async () => {
    const leader = await ensemble.waitForQuorum(undefined, { all: true });
    const serverPids = new Set(ensemble.servers.map((s) => s.pid!));
    const proxyPorts = links.proxyPorts;
    const sockets = establishedSockets();
    const owner = new Map(sockets.map((s) => [`${s.local}>${s.peer}`, s.pids]));
    const javaEnds = sockets.filter((s) => s.pids.some((p) => serverPids.has(p)));
    expect(javaEnds.length).toBeGreaterThan(0);
    for (const s of javaEnds) {
      const other = owner.get(`${s.peer}>${s.local}`) ?? [];
      // Both ends in server processes: a connection around the proxies.
      expect(other.filter((p) => serverPids.has(p)), `direct server connection ${s.local} <-> ${s.peer}`).toEqual([]);
      // Whoever the server talks to over loopback is a proxy (this process) or a client of this
      // test: a server dialing out reaches a proxy port, a server dialed reaches this process.
      if (proxyPorts.has(s.peer)) expect(other).toContain(process.pid);
    }
    // Positively: each pair of servers has an election connection through one of its proxies,
    // each follower a quorum connection through its proxy to the leader.
    const dialed = (from: ServerHandle, port: number) => javaEnds.some((s) => s.pids.includes(from.pid!) && s.peer === port);
    for (const a of ensemble.servers)
      for (const b of ensemble.servers)
        if (a.id < b.id) expect(dialed(a, links.portsFor(a.id, b.id).election) || dialed(b, links.portsFor(b.id, a.id).election), `election link ${a.id}-${b.id}`).toBe(true);
    for (const f of ensemble.servers.filter((s) => s.id !== leader.id)) expect(dialed(f, links.portsFor(f.id, leader.id).peer), `follower ${f.id} to leader`).toBe(true);
  });

  it('a frozen leader (SIGSTOP) is replaced, and comes back as a follower when it runs again', async () => {
    const old = await ensemble.waitForQuorum(undefined, { all: true });
    const frozen = performance.now();
    await old.pause();
    try {
      const next = await ensemble.waitForQuorum(timing(60_000));
      expect(next.id).not.toBe(old.id);
      process.stderr.write(`[zk] pause(leader ${old.id}): server ${next.id} elected after ${Math.round(performance.now() - frozen)} ms\n`);
    } finally {
      await old.resume();
    }
    await waitFor('the thawed leader to rejoin as a follower', async () => ((await old.mode()) === 'follower' ? true : undefined), timing(60_000), 50);
  });

  it('isolating the leader: the other two elect a new one, and heal brings it back as a follower', async () => {
    const old = await ensemble.waitForQuorum(undefined, { all: true });
    const cut = performance.now();
    links.isolate(old.id, 'hold');
    const next = await waitFor(
      'a leader among the other two',
      async () => {
        const m = await modes();
        const others = ensemble.servers.filter((s) => s.id !== old.id);
        const leader = others.find((s) => m.get(s.id) === 'leader');
        return leader && others.every((s) => s === leader || m.get(s.id) === 'follower') ? leader : undefined;
      },
      timing(60_000),
      50,
    );
    const electedMs = performance.now() - cut;
    expect(next.id).not.toBe(old.id);
    // The old leader loses its quorum too (Leader.lead checks its followers every half tick).
    await waitFor('the old leader to step down', async () => ((await old.mode()) === 'leader' ? undefined : true), timing(60_000), 50);
    const stepDownMs = performance.now() - cut;
    links.heal();
    const healed = performance.now();
    await waitFor('the old leader to rejoin as a follower', async () => ((await old.mode()) === 'follower' ? true : undefined), timing(60_000), 50);
    const rejoinMs = performance.now() - healed;
    expect((await ensemble.leader())?.id).toBe(next.id);
    process.stderr.write(`[zk] isolate(leader ${old.id}): server ${next.id} elected after ${Math.round(electedMs)} ms, old leader stepped down after ${Math.round(stepDownMs)} ms; rejoined ${Math.round(rejoinMs)} ms after heal\n`);
  });

  // 'drop' also checks heal(): the connections that lost bytes are reset, or they would stay
  // black-holed and the follower could not rejoin.
  it.each(['hold', 'drop', 'reset'] as const)('isolating a follower (%s): it stops serving while the other two keep a quorum', async (fault) => {
    const leader = await ensemble.waitForQuorum(undefined, { all: true });
    const [isolated, other] = ensemble.servers.filter((s) => s.id !== leader.id) as [ServerHandle, ServerHandle];
    const cut = performance.now();
    links.isolate(isolated.id, fault);
    await waitFor('the isolated follower to stop serving', async () => ((await isolated.mode()) === 'down' ? true : undefined), timing(60_000), 50);
    const downMs = performance.now() - cut;
    const m = await modes();
    expect(m.get(leader.id)).toBe('leader');
    expect(m.get(other.id)).toBe('follower');
    // The majority still commits writes.
    const zk = await ZooKeeper.connect(leader.connectString);
    try {
      await zk.create(`/server-links-${Date.now()}`, Buffer.from('written while a follower is cut off'));
    } finally {
      await zk.close();
    }
    links.heal();
    const healed = performance.now();
    await waitFor('the follower to rejoin', async () => ((await isolated.mode()) === 'follower' ? true : undefined), timing(60_000), 50);
    process.stderr.write(`[zk] isolate(follower ${isolated.id}, '${fault}'): stopped serving after ${Math.round(downMs)} ms; rejoined ${Math.round(performance.now() - healed)} ms after heal\n`);
  });
});
