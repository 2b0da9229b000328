import { afterEach, describe, expect, it } from 'vitest';
import { ZooKeeper } from '../client/zookeeper.js';
import { CreateMode, OpCode, Xid } from '../constants.js';
import { ErrorCode, UnimplementedError } from '../errors.js';
import { FakeServer, type FakeConnection, type FakeServerOptions } from '../testing/fake-server.js';
import { forgetGenerations, rememberedGeneration } from '../connection/generation.js';
import { bytes } from '../testing/bytes.js';

// Every connection asks `exists /zookeeper/config` first: a 3.4 server (NoNode there) never gets
// an operation it lacks, since it would answer Unimplemented and close the connection.

const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  forgetGenerations(); // a later fake may get the same port
});

const STAT = Buffer.alloc(68);

/** A fake that answers pings, getData (empty), creates (the path) and exists (a Stat). */
async function server(options: FakeServerOptions): Promise<FakeServer> {
  const s = await FakeServer.start({
    onRequest: (req, conn) => {
      if (req.xid === Xid.ping) conn.reply({ xid: Xid.ping, zxid: 0n, err: 0 });
      else if (req.type === OpCode.getData) conn.reply({ xid: req.xid, zxid: 1n, err: 0, body: bytes().buf(Buffer.alloc(0)).raw(STAT).build() });
      else if (req.type === OpCode.create) conn.reply({ xid: req.xid, zxid: 2n, err: 0, body: bytes().str('/n-0000000000').build() });
      else if (req.type === OpCode.exists) conn.reply({ xid: req.xid, zxid: 2n, err: 0, body: STAT });
      else if (req.type === OpCode.closeSession) conn.reply({ xid: req.xid, zxid: 3n, err: 0 });
      else if (req.type === OpCode.whoAmI) conn.reply({ xid: req.xid, zxid: 2n, err: 0, body: bytes().int(0).build() });
    },
    ...options,
  });
  servers.push(s);
  return s;
}

const types = (c: FakeConnection): number[] => c.requests.filter((r) => r.xid !== Xid.ping).map((r) => r.type);

describe('server generation (fake servers)', () => {
  it('a 3.4 server: what it lacks fails at once, typed and naming the version, and is never sent', async () => {
    const s = await server({ generation: 'legacy' });
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { connectTimeout: 2000 });
    const states: string[] = [];
    zk.onStateChange((state) => states.push(state));
    const err = await zk.whoAmI().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnimplementedError);
    expect((err as UnimplementedError).code).toBe(ErrorCode.UNIMPLEMENTED);
    expect((err as Error).message).toBe('UNIMPLEMENTED (whoAmI): whoAmI needs ZooKeeper 3.7 or newer; this server is 3.4');
    await expect(zk.getAllChildrenNumber('/')).rejects.toThrow('getAllChildrenNumber needs ZooKeeper 3.6 or newer; this server is 3.4');
    const conn = s.connections[0]!;
    expect(conn.generationProbes).toBe(1);
    expect(types(conn)).toEqual([]);
    expect(states).toEqual([]);
  });

  it('a 3.4 server: createWithStat is a create then an exists; a container is a persistent node; reads are never coalesced', async () => {
    const s = await server({ generation: 'legacy' });
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { connectTimeout: 2000 });
    const { path, stat } = await zk.createWithStat('/n-', null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    expect(path).toBe('/n-0000000000');
    expect(stat.czxid).toBe(0n);
    await zk.create('/c', null, { mode: CreateMode.CONTAINER });
    await Promise.all([zk.getData('/a'), zk.getData('/b'), zk.getData('/c')]);
    const conn = s.connections[0]!;
    expect(types(conn)).toEqual([OpCode.create, OpCode.exists, OpCode.create, OpCode.getData, OpCode.getData, OpCode.getData]);
    // The container's create carries the persistent flags (0): its body ends with them.
    expect(conn.requests.filter((r) => r.type === OpCode.create)[1]!.body.readInt32BE(conn.requests.filter((r) => r.type === OpCode.create)[1]!.body.length - 4)).toBe(CreateMode.PERSISTENT);
    expect(conn.probes).toEqual([]);
  });

  it('a create2 made before the answer leaves in call order: as a plain create on 3.4, the listing behind it after it', async () => {
    const s = await server({ generation: 'legacy' });
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { connectTimeout: 2000 });
    // Right after connect the probe may still be out (then both are held, in order, until it is
    // answered) or answered (then the create goes as a plain one at once): the order holds either way.
    const created = zk.createWithStat('/n-', null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    const read = zk.getData('/n-0000000000');
    await Promise.all([created, read]);
    expect(types(s.connections[0]!)).toEqual([OpCode.create, OpCode.getData, OpCode.exists]);
  });

  it('SASL goes first on a connection: the probe leaves only after it (a server answers SASL out of band)', async () => {
    // The fake refuses the SASL token: the probe must not have been sent before it.
    const s = await server({
      generation: 'script',
      onRequest: (req, conn) => {
        if (req.type === OpCode.sasl) conn.reply({ xid: req.xid, zxid: 0n, err: ErrorCode.AUTHFAILED });
      },
    });
    const err = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { connectTimeout: 1000, sasl: { mechanism: 'DIGEST-MD5', username: 'u', password: 'p' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(types(s.connections[0]!)[0]).toBe(OpCode.sasl);
  });

  it('a 3.5+ server: the same operations are sent as themselves', async () => {
    const s = await server({ generation: 'modern' });
    await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { connectTimeout: 2000 });
    await zk.whoAmI();
    const conn = s.connections[0]!;
    expect(conn.generationProbes).toBe(1);
    expect(types(conn)).toEqual([OpCode.whoAmI]);
  });

  it('a server is probed once per process: a second client, or a reconnect, starts knowing it', async () => {
    const s = await server({ generation: 'modern' });
    for (let i = 0; i < 2; i++) {
      await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { connectTimeout: 2000 });
      await zk.whoAmI();
    }
    expect(s.connections.map((c) => c.generationProbes)).toEqual([1, 0]);
    expect(s.connections.map(types)).toEqual([
      [OpCode.whoAmI, OpCode.closeSession],
      [OpCode.whoAmI, OpCode.closeSession],
    ]);
  });

  it('an Unimplemented answer to an operation the remembered generation has: the next connection probes again', async () => {
    const s = await server({
      generation: 'modern',
      onRequest: (req, conn) => {
        if (req.type === OpCode.whoAmI) conn.reply({ xid: req.xid, zxid: 0n, err: ErrorCode.UNIMPLEMENTED }); // as a 3.5/3.6 server would
        else if (req.type === OpCode.closeSession) conn.reply({ xid: req.xid, zxid: 3n, err: 0 });
        else if (req.type === OpCode.exists) conn.reply({ xid: req.xid, zxid: 2n, err: 0, body: STAT });
      },
    });
    const where = `127.0.0.1:${s.port}`;
    {
      await using zk = await ZooKeeper.connect(where, { connectTimeout: 2000 });
      await zk.exists('/x'); // answered after the probe: modern, remembered
      expect(rememberedGeneration(where)).toBe('modern');
      await expect(zk.whoAmI()).rejects.toBeInstanceOf(UnimplementedError);
      expect(rememberedGeneration(where)).toBeUndefined();
    }
    await using again = await ZooKeeper.connect(where, { connectTimeout: 2000 });
    await again.exists('/x'); // answered after its probe
    expect(s.connections.map((c) => c.generationProbes)).toEqual([1, 1]);
  });

  it('a 3.4 server remembered from an earlier connection never gets the multiRead probe', async () => {
    const s = await server({ generation: 'legacy' });
    for (let i = 0; i < 2; i++) {
      await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}`, { connectTimeout: 2000 });
      await Promise.all([zk.getData('/a'), zk.getData('/b')]);
    }
    expect(s.connections.map((c) => c.generationProbes)).toEqual([1, 0]);
    expect(s.connections.map((c) => c.probes)).toEqual([[], []]);
  });
});
