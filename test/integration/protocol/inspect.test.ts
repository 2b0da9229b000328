/**
 * What a client shows when it is logged: `util.inspect` (console.log, a debugger, an error
 * reporter that dumps objects) must not print the session password, with which anyone can resume
 * or close the session, nor the credentials given to `auth`.
 */
import { inspect } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { ZooKeeper } from '@zk/protocol';
import { Mutex } from '@zk/locks';
import { connectString, TestSpace } from '../../harness/fixtures.js';

let space: TestSpace;

beforeEach(() => {
  space = new TestSpace();
});

afterEach(async () => {
  await space.close();
});

it('inspect - a client shows neither its session password nor its credentials, even with showHidden', async () => {
  await using zk = await ZooKeeper.connect(connectString(), { auth: [{ scheme: 'digest', auth: 'inspector:pa55-w0rd' }] });
  const password = zk.sessionPassword;
  expect(password.length).toBe(16);
  // The client itself, and objects that hold it (a lock and its lease), however deep.
  const mutex = new Mutex(zk, `/inspect-${process.pid}-${Date.now()}`);
  await using lease = await mutex.acquire();
  const shown = [zk, mutex, lease].flatMap((o) => [inspect(o, { showHidden: true, depth: Infinity, getters: true }), inspect(o), inspect(o, { showHidden: true })]);
  const forms = [password.toString('hex'), password.toString('base64'), [...password].join(', '), 'pa55-w0rd'];
  for (const text of shown) for (const form of forms) expect(text).not.toContain(form);
  // A 16-byte Buffer is printed as <Buffer xx xx ...>: its hex bytes with spaces.
  const spaced = password.toString('hex').replace(/(..)(?!$)/g, '$1 ');
  for (const text of shown) expect(text).not.toContain(spaced);
  expect(inspect(zk, { breakLength: Infinity })).toBe(`ZooKeeper { sessionId: '0x${zk.sessionId.toString(16)}', state: 'connected', server: '${zk.server!.host}:${zk.server!.port}', sessionTimeout: ${zk.sessionTimeout} }`);
});
