import * as dc from 'node:diagnostics_channel';
import { afterEach, describe, expect, it } from 'vitest';
import { ZooKeeper } from './zookeeper.js';
import { OpCode, Xid } from '../constants.js';
import { ErrorCode } from '../errors.js';
import type { RequestTrace } from '../diagnostics.js';
import { FakeServer } from '../testing/fake-server.js';

// The `zk:request` context at `start`: what a sampler sees when the span starts (OpenTelemetry's
// database conventions want server.address, server.port and db.namespace then, not at the end).

const servers: FakeServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

describe('zk:request start context', () => {
  it('names the server the session is connected to and the chroot before the request is sent', async () => {
    const s = await FakeServer.start({
      onRequest: (req, conn) => {
        if (req.xid === Xid.ping || req.type === OpCode.closeSession) conn.reply({ xid: req.xid, zxid: 1n, err: 0 });
        else conn.reply({ xid: req.xid, zxid: 1n, err: ErrorCode.NONODE });
      },
    });
    servers.push(s);
    const seen: Array<Pick<RequestTrace, 'serverAddress' | 'serverPort' | 'chroot' | 'operation'>> = [];
    const channel = dc.tracingChannel<unknown, RequestTrace>('zk:request');
    const handlers = {
      start: (ctx: RequestTrace) => seen.push({ operation: ctx.operation, serverAddress: ctx.serverAddress, serverPort: ctx.serverPort, chroot: ctx.chroot }),
      end() {},
      asyncStart() {},
      asyncEnd() {},
      error() {},
    };
    channel.subscribe(handlers);
    try {
      await using zk = await ZooKeeper.connect(`127.0.0.1:${s.port}/app`, { connectTimeout: 2000 });
      await zk.exists('/x');
    } finally {
      channel.unsubscribe(handlers);
    }
    expect(seen.find((c) => c.operation === 'exists')).toEqual({ operation: 'exists', serverAddress: '127.0.0.1', serverPort: s.port, chroot: '/app' });
  });
});
