/**
 * The connection layer (one socket, one server) against a real ZooKeeper: handshake kinds,
 * resumption and expiry, deep pipelining, closeSession and pings. Requests are written with the
 * Jute records directly, below the client API.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { Connection, type ConnectionEvents, type ConnectionOptions } from '../../../packages/protocol/src/connection/connection.js';
import { CreateMode, OpCode, Perm } from '../../../packages/protocol/src/constants.js';
import { ErrorCode, SessionExpiredError } from '../../../packages/protocol/src/errors.js';
import { readStat, type Stat } from '../../../packages/protocol/src/jute/data.js';
import { writeCreateRequest, writeDeleteRequest, writeExistsRequest } from '../../../packages/protocol/src/jute/proto.js';
import type { JuteReader } from '../../../packages/protocol/src/jute/reader.js';
import { parseConnectString } from '../../../packages/protocol/src/session/hosts.js';
import { timing, waitFor } from '../../harness/index.js';

const { hosts } = parseConnectString(inject('zkConnect'));
// Every connection goes to the same server so reads see our own writes without a sync.
const server = hosts[0]!;
const ROOT = `/connection-it-${randomBytes(4).toString('hex')}`;
const OPEN_ACL = [{ perms: Perm.ALL, id: { scheme: 'world', id: 'anyone' } }];

const opened: Connection[] = [];

/** Handlers that record the close reason, with a promise for it. */
function events(): ConnectionEvents & { closed: Promise<Error | undefined>; closes: number } {
  let resolve!: (r: Error | undefined) => void;
  const closed = new Promise<Error | undefined>((r) => (resolve = r));
  const h = {
    closed,
    closes: 0,
    notification: () => {},
    close: (reason: Error | undefined) => {
      h.closes++;
      resolve(reason);
    },
  };
  return h;
}

async function open(extra: Partial<ConnectionOptions> = {}, handlers: ConnectionEvents = events()): Promise<Connection> {
  const conn = await Connection.open({ host: server.host, port: server.port, sessionTimeout: 10_000, connectTimeout: timing(10_000), ...extra }, handlers);
  opened.push(conn);
  return conn;
}

function exists(conn: Connection, path: string) {
  return conn.request(OpCode.exists, (w) => writeExistsRequest(w, { path, watch: false }), (r: JuteReader): Stat => readStat(r));
}

function create(conn: Connection, path: string, data: Buffer, flags: number) {
  return conn.request(OpCode.create, (w) => writeCreateRequest(w, { path, data, acl: OPEN_ACL, flags }), (r: JuteReader) => r.readUString());
}

function remove(conn: Connection, path: string) {
  return conn.request(OpCode.delete, (w) => writeDeleteRequest(w, { path, version: -1 }), undefined);
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

let admin: Connection;

beforeAll(async () => {
  admin = await Connection.open({ host: server.host, port: server.port, sessionTimeout: 30_000, connectTimeout: timing(10_000) }, events());
  expect((await create(admin, ROOT, Buffer.alloc(0), CreateMode.PERSISTENT)).err).toBe(0);
});

afterEach(async () => {
  await Promise.all(opened.splice(0).map((c) => c.close(timing(2000))));
});

afterAll(async () => {
  if (!admin) return;
  for (let i = 0; i < 10; i++) await remove(admin, `${ROOT}/n${i}`);
  await remove(admin, ROOT);
  await admin.close();
});

describe('connection (real server) - handshake', () => {
  it('connection - a first handshake creates a new session with a 16-byte password and a negotiated timeout', async () => {
    const conn = await open({ sessionTimeout: 6000 });
    expect(conn.session.kind).toBe('new');
    expect(conn.session.sessionId).not.toBe(0n);
    expect(conn.session.passwd).toHaveLength(16);
    expect(conn.session.timeOut).toBeGreaterThan(0);
    expect(conn.session.readOnly).toBe(false);
    // The session is usable: the server answers a request on it.
    expect((await exists(conn, '/')).err).toBe(0);
  });

  it('connection - a second connection presenting sessionId and password resumes the session; the server drops the first', async () => {
    const firstEvents = events();
    const first = await open({}, firstEvents);
    const second = await open({ sessionId: first.session.sessionId, passwd: first.session.passwd, lastZxidSeen: first.lastZxid });
    expect(second.session.kind).toBe('resumed');
    expect(second.session.sessionId).toBe(first.session.sessionId);
    expect((await exists(second, '/')).err).toBe(0);
    // The server closes the stale socket of a session that moved; the first connection reports it.
    expect(await firstEvents.closed).toBeInstanceOf(Error);
    expect(firstEvents.closes).toBe(1);
  });

  it('connection - after close() (closeSession) resuming that session fails with SessionExpiredError', async () => {
    const conn = await open();
    const { sessionId, passwd } = conn.session;
    await conn.close();
    await expect(open({ sessionId, passwd })).rejects.toBeInstanceOf(SessionExpiredError);
  });

  it('connection - a wrong password for a live session is refused as expired', async () => {
    const conn = await open();
    const passwd = Buffer.from(conn.session.passwd);
    passwd[0] = (passwd[0]! + 1) & 0xff;
    await expect(open({ sessionId: conn.session.sessionId, passwd })).rejects.toBeInstanceOf(SessionExpiredError);
  });
});

describe('connection (real server) - pipelining', () => {
  it('connection - 10,000 pipelined exists requests on one socket are all outstanding at once and answered in order', async () => {
    const conn = await open();
    // Ten nodes whose data length is their index, so each answer says which node it describes.
    const creates = [];
    for (let i = 0; i < 10; i++) creates.push(create(conn, `${ROOT}/n${i}`, Buffer.alloc(i), CreateMode.PERSISTENT));
    for (const c of await Promise.all(creates)) expect([0, ErrorCode.NODEEXISTS]).toContain(c.err);

    const N = 10_000;
    const order: number[] = [];
    const replies = [];
    for (let i = 0; i < N; i++) {
      // Every seventh request asks for a node that does not exist.
      const path = i % 7 === 0 ? `${ROOT}/missing${i}` : `${ROOT}/n${i % 10}`;
      replies.push(
        exists(conn, path).then((reply) => {
          order.push(i);
          return reply;
        }),
      );
    }
    // Nothing was awaited: every request is outstanding on the socket.
    expect(conn.pendingCount).toBe(N);
    const results = await Promise.all(replies);
    expect(order).toEqual(Array.from({ length: N }, (_, i) => i));
    let lastZxid = -1n;
    results.forEach((reply, i) => {
      if (i % 7 === 0) {
        expect(reply.err).toBe(ErrorCode.NONODE);
        expect(reply.body).toBeUndefined();
      } else {
        expect(reply.err).toBe(0);
        expect(reply.body?.dataLength).toBe(i % 10);
      }
      // Reply zxids never go backwards on one session.
      expect(reply.zxid >= lastZxid).toBe(true);
      lastZxid = reply.zxid;
    });
    // An idle ping may be in flight (the replies took seconds on a loaded machine): it is answered.
    await waitFor('no request pending', () => (conn.pendingCount === 0 ? true : undefined));
    expect(conn.lastZxid).toBeGreaterThanOrEqual(lastZxid);
  });
});

describe('connection (real server) - closeSession and pings', () => {
  it('connection - close() sends closeSession: our ephemeral node is gone at once for another session', async () => {
    const ownerEvents = events();
    const owner = await open({ sessionTimeout: 30_000 }, ownerEvents);
    const path = `${ROOT}/ephemeral-${randomBytes(3).toString('hex')}`;
    expect((await create(owner, path, Buffer.from('x'), CreateMode.EPHEMERAL)).err).toBe(0);
    const before = await exists(admin, path);
    expect(before.err).toBe(0);
    expect(before.body?.ephemeralOwner).toBe(owner.session.sessionId);

    await owner.close();
    expect(await ownerEvents.closed).toBeUndefined();
    // Well inside the 30 s session timeout: only closeSession can have removed it.
    expect((await exists(admin, path)).err).toBe(ErrorCode.NONODE);
  });

  it('connection - an idle connection pings and keeps its session past the timeout; a silent one expires', async () => {
    const idleEvents = events();
    const idle = await open({ sessionTimeout: 2000 }, idleEvents);
    const dropped = await open({ sessionTimeout: 2000 });
    const path = `${ROOT}/kept-${randomBytes(3).toString('hex')}`;
    expect((await create(idle, path, Buffer.alloc(0), CreateMode.EPHEMERAL)).err).toBe(0);
    const timeOut = Math.max(idle.session.timeOut, dropped.session.timeOut);
    const { sessionId, passwd } = dropped.session;
    // The control: a session whose socket is gone and that sends nothing.
    dropped.destroy();

    // Idle (no request at all) for twice the negotiated timeout plus the server's expiry tick.
    await delay(2 * timeOut + timing(1000));

    expect(idle.closed).toBe(false);
    expect(idleEvents.closes).toBe(0);
    const kept = await exists(admin, path);
    expect(kept.err).toBe(0);
    expect(kept.body?.ephemeralOwner).toBe(idle.session.sessionId);
    expect((await exists(idle, '/')).err).toBe(0);
    // The same wait was long enough to expire a session that did not ping.
    await expect(open({ sessionId, passwd })).rejects.toBeInstanceOf(SessionExpiredError);
  });
});
