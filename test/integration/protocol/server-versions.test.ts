/**
 * What the client does on each ZooKeeper line the harness runs (ZK_VERSION=3.4|3.8|3.9): the
 * operations every server has, and those a 3.4 server lacks, which must fail fast there with a
 * typed error naming the version they need, without a dropped connection, a hang or a reconnect
 * loop (a 3.4 server answers an unknown operation with Unimplemented and closes the connection).
 * On 3.5+ the same calls succeed. CI runs this file on every line.
 */
import { connect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CreateMode, digestACL, NoAuthError, UnimplementedError, ZooKeeper } from '@zk/protocol';
import { findLocalInstall, fourLetter, isZooKeeper34, startZooKeeper, versionManifest, waitForState } from '../../harness/index.js';
import { connectString, TestSpace } from '../../harness/fixtures.js';

const legacy = isZooKeeper34();
const external = process.env.ZK_CONNECT !== undefined;
let space: TestSpace;

beforeEach(async () => {
  space = new TestSpace();
  await space.admin();
});

afterEach(async () => {
  await space.close();
});

/** Records the client's state changes from now on. */
function recordStates(zk: ZooKeeper): string[] {
  const seen: string[] = [];
  zk.onStateChange((state) => seen.push(state));
  return seen;
}

describe('server versions - the line under test', () => {
  it.skipIf(external)('runs the server ZK_VERSION names', async () => {
    const [host, port] = connectString().split('/')[0]!.split(':');
    const srvr = await fourLetter(host!, Number(port), 'srvr', 2000);
    const expected = versionManifest().version;
    expect(findLocalInstall()?.version).toBe(expected);
    expect(srvr).toContain(`Zookeeper version: ${expected}`);
  });
});

/** A frame: its length, then `body`. */
function frame(body: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeInt32BE(body.length);
  return Buffer.concat([len, body]);
}

/**
 * Opens a session by hand, sends one request of `opcode` with no body, and reports the reply's
 * error code and whether the server then closed the connection.
 */
function sendUnknown(host: string, port: number, opcode: number): Promise<{ err: number | undefined; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => finish(false), 3000);
    let input = Buffer.alloc(0);
    let frames = 0;
    let err: number | undefined;
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ err, closed });
    };
    socket.on('error', reject);
    socket.on('close', () => finish(true));
    socket.on('connect', () => {
      // ConnectRequest: protocolVersion, lastZxidSeen, timeOut, sessionId, passwd (16 zero bytes), readOnly.
      const hello = Buffer.alloc(4 + 8 + 4 + 8 + 4 + 16 + 1);
      hello.writeInt32BE(10_000, 12);
      hello.writeInt32BE(16, 24);
      socket.write(frame(hello));
    });
    socket.on('data', (chunk: Buffer) => {
      input = Buffer.concat([input, chunk]);
      while (input.length >= 4 && input.length >= 4 + input.readInt32BE(0)) {
        const body = input.subarray(4, 4 + input.readInt32BE(0));
        input = input.subarray(4 + body.length);
        if (frames++ === 0) {
          const request = Buffer.alloc(8);
          request.writeInt32BE(1, 0); // xid
          request.writeInt32BE(opcode, 4);
          socket.write(frame(request));
        } else if (body.readInt32BE(0) === 1) {
          err = body.readInt32BE(12); // ReplyHeader: xid, zxid, err
        }
      }
    });
  });
}

describe('server versions - operations every line has', () => {
  it('create, read, write, list, delete, multi, sync, ACLs, auth and one-shot watches', async () => {
    const zk = await space.client({ auth: [{ scheme: 'digest', auth: 'ann:pw' }] });
    const states = recordStates(zk);
    expect(await zk.create('/a', 'one')).toBe('/a');
    const seq = await zk.create('/a/n-', null, { mode: CreateMode.PERSISTENT_SEQUENTIAL });
    expect(seq).toMatch(/^\/a\/n-\d{10}$/);
    const changed = new Promise((resolve) => void zk.getData('/a', { watch: resolve }));
    const child = new Promise((resolve) => void zk.getChildren('/a', { watch: resolve }));
    await zk.setData('/a', 'two');
    await zk.create('/a/m');
    expect(await changed).toMatchObject({ type: 'NodeDataChanged', path: '/a' });
    expect(await child).toMatchObject({ type: 'NodeChildrenChanged', path: '/a' });
    expect((await zk.getData('/a')).data.toString()).toBe('two');
    expect((await zk.getChildrenWithStat('/a')).children.sort()).toEqual(['m', seq.slice(3)].sort());
    const results = await zk.transaction().create('/b', 'x').setData('/a', 'three').delete('/a/m').check('/a').commit();
    expect(results.map((r) => r.type)).toEqual(['create', 'setData', 'delete', 'check']);
    await zk.sync('/a');
    await zk.create('/secret', 's', { acl: digestACL('ann', 'pw') });
    expect((await zk.getACL('/secret')).acl).toHaveLength(1);
    const other = await space.client();
    await expect(other.getData('/secret')).rejects.toBeInstanceOf(NoAuthError);
    await zk.delete(seq);
    expect(await zk.exists(seq)).toBeNull();
    expect(states).toEqual([]);
  });

  it('createWithStat and containers: the Stat is the node’s; on 3.4 a container is a persistent node', async () => {
    const zk = await space.client();
    const { path, stat } = await zk.createWithStat('/s-', 'v', { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    const now = await zk.exists(path);
    expect(now?.czxid).toBe(stat.czxid);
    expect(stat.ephemeralOwner).toBe(zk.sessionId);
    await zk.create('/c', null, { mode: CreateMode.CONTAINER });
    await zk.create('/c/x', null, { parents: 'container' });
    expect(await zk.exists('/c/x')).not.toBeNull();
    const tx = await zk.transaction().create('/c2', null, { mode: CreateMode.CONTAINER }).create('/c2/y').commit();
    expect(tx.map((r) => r.type)).toEqual(['create', 'create']);
  });

  it('a create with a Stat made right after connecting leaves in call order (the listing behind it sees the node)', async () => {
    const admin = await space.admin();
    await admin.create(`${space.root}/q`);
    const zk = await space.client();
    const created = zk.createWithStat('/q/n-', null, { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    const listed = zk.getChildren('/q');
    const { path } = await created;
    expect(await listed).toEqual([path.slice('/q/'.length)]);
  });
});

describe('server versions - operations a 3.4 server lacks', () => {
  // Each: the call, and the version the error must name on 3.4.
  const newer: Array<[string, string, (zk: ZooKeeper) => Promise<unknown>]> = [
    ['whoAmI', '3.7', (zk) => zk.whoAmI()],
    ['getEphemerals', '3.6', (zk) => zk.getEphemerals('/')],
    ['getAllChildrenNumber', '3.6', (zk) => zk.getAllChildrenNumber('/')],
    ['multiRead', '3.6', (zk) => zk.multiRead([{ type: 'getData', path: '/' }])],
    ['addWatch', '3.6', async (zk) => (await zk.addWatch('/', () => {}))()],
    [
      'removeWatches',
      '3.5',
      async (zk) => {
        await zk.getData('/n', { watch: () => {} }); // a watch to remove (none: NoWatcher, found locally)
        await zk.removeWatches('/n', { kind: 'data' }).catch((err: unknown) => (zk.removeLocalWatch('data', '/n'), Promise.reject(err)));
      },
    ],
    ['getConfig', '3.5', (zk) => zk.getConfig()],
  ];

  it.each(newer)('%s: %s+ (on 3.4 a typed error, and the connection stays)', async (name, since, call) => {
    const zk = await space.client();
    await zk.create('/n');
    const states = recordStates(zk);
    const server = zk.server;
    const outcome = await call(zk).then(
      () => 'ok',
      (err: unknown) => err,
    );
    if (legacy) {
      expect(outcome).toBeInstanceOf(UnimplementedError);
      expect((outcome as Error).message).toContain(`${name} needs ZooKeeper ${since} or newer; this server is 3.4`);
    } else if (name === 'removeWatches' || name === 'getConfig') {
      // 3.5+: no watch to remove is NoWatcher; a standalone server without reconfig has no config to read.
      expect(outcome === 'ok' || !(outcome instanceof UnimplementedError)).toBe(true);
    } else {
      expect(outcome).toBe('ok');
    }
    // Same connection, same session, no state change: the request was never sent to a server that would drop us.
    expect(zk.server).toEqual(server);
    expect(states).toEqual([]);
    expect((await zk.getData('/n')).stat.version).toBe(0);
  });

  it.skipIf(external)('why: a server answers an operation it does not know with Unimplemented, then drops the connection', async () => {
    const [host, port] = connectString().split('/')[0]!.split(':');
    // whoAmI (107) is unknown to 3.4; 9999 to every line.
    for (const opcode of legacy ? [107, 9999] : [9999]) {
      expect(await sendUnknown(host!, Number(port), opcode)).toEqual({ err: -6, closed: true });
    }
  });

  it('many reads in one tick are all answered (on 3.4 without ever probing for multiRead)', async () => {
    const zk = await space.client();
    await zk.create('/r', 'r');
    const states = recordStates(zk);
    for (let round = 0; round < 3; round++) {
      const reads = await Promise.all(Array.from({ length: 20 }, () => zk.getData('/r')));
      expect(reads.every((r) => r.data.toString() === 'r')).toBe(true);
    }
    expect(states).toEqual([]);
  });

  it('a TTL create fails before it is sent on 3.4', async () => {
    const zk = await space.client();
    const states = recordStates(zk);
    const outcome = await zk.create('/ttl', null, { mode: CreateMode.PERSISTENT_WITH_TTL, ttl: 1000 }).catch((err: unknown) => err);
    // On 3.4 it never leaves; 3.5.3+ creates it when extended types are on (the harness's default), else refuses it.
    if (legacy) expect((outcome as Error).message).toContain('needs ZooKeeper 3.5.3 or newer; this server is 3.4');
    else expect(outcome === '/ttl' || (outcome instanceof Error && !(outcome instanceof UnimplementedError))).toBe(true);
    expect(states).toEqual([]);
  });
});

describe.skipIf(external)('server versions - failover on the line under test', () => {
  it('a session moves to another server when its server dies, with its ephemeral node', async () => {
    const ensemble = await startZooKeeper({ servers: 3 });
    try {
      await using zk = await ZooKeeper.connect(ensemble.connectString, { sessionTimeout: 6000, connectTimeout: 2000 });
      await zk.create('/e', 'mine', { mode: CreateMode.EPHEMERAL });
      const on = ensemble.servers.find((s) => s.port === zk.server?.port);
      expect(on).toBeDefined();
      const session = zk.sessionId;
      await on!.kill();
      await waitForState(zk, 'suspended');
      await waitForState(zk, 'connected');
      expect(zk.sessionId).toBe(session);
      expect(zk.server?.port).not.toBe(on!.port);
      expect((await zk.getData('/e')).stat.ephemeralOwner).toBe(session);
    } finally {
      await ensemble.close();
    }
  });
});
