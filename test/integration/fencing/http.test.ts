/**
 * The HTTP convention against a real node:http server: the guard answers missing (428),
 * malformed (400) and stale (409, JSON problem) tokens itself and lets equal and higher ones
 * through; requests of one resource take turns, so a stale request admitted first cannot write
 * after a newer one (control: with `serialize: false` it does); and fencedFetch sends a real
 * lease's token, refuses locally once the lease is lost, and turns a 409 into StaleTokenError.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FENCING_RESOURCE_HEADER, FENCING_TOKEN_HEADER, fencedFetch, fencingGuard, LeaseLostError, MemoryTokenStore, Mutex, StaleTokenError, type FencingGuardOptions } from '@zk/locks';
import { outcome } from '../../harness/index.js';
import { TestSpace } from '../../harness/fixtures.js';

let server: Server | undefined;
let base = '';

/** A server whose handler, once admitted, waits `delay(req)` ms, then writes the body to `store` and answers 200. */
async function serve(options: FencingGuardOptions, data: Map<string, string>, delay: (req: IncomingMessage) => number = () => 0): Promise<void> {
  const guard = fencingGuard(options);
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      setTimeout(() => {
        data.set(new URL(req.url ?? '/', 'http://x').pathname, body);
        res.end('ok');
      }, delay(req));
    });
  };
  server = createServer((req, res) => guard(req, res, (err) => (err ? ((res.statusCode = 500), res.end(String(err))) : handle(req, res))));
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

const put = (path: string, headers: Record<string, string>, body = 'x') => fetch(`${base}${path}`, { method: 'PUT', headers, body });

describe('fencing http - the guard', () => {
  it('missing 428, malformed 400, stale 409 with a problem body; equal and higher pass', async () => {
    const store = new MemoryTokenStore();
    const data = new Map<string, string>();
    await serve({ store }, data);
    const missing = await put('/reports/1', {});
    expect(missing.status).toBe(428);
    expect(await missing.json()).toMatchObject({ status: 428, resource: '/reports/1' });
    for (const bad of ['-1', '01', '1.5', 'abc', '9223372036854775808', '1 2']) {
      expect((await put('/reports/1', { [FENCING_TOKEN_HEADER]: bad })).status, bad).toBe(400);
    }
    expect((await put('/reports/1', { [FENCING_TOKEN_HEADER]: '10' }, 'v10')).status).toBe(200);
    expect((await put('/reports/1', { [FENCING_TOKEN_HEADER]: '10' }, 'v10 again')).status).toBe(200); // equal
    expect((await put('/reports/1', { [FENCING_TOKEN_HEADER]: '11' }, 'v11')).status).toBe(200); // higher
    const stale = await put('/reports/1', { [FENCING_TOKEN_HEADER]: '9' }, 'v9');
    expect(stale.status).toBe(409);
    expect(stale.headers.get('content-type')).toBe('application/problem+json');
    expect(await stale.json()).toEqual({
      type: 'urn:zk-locks:fencing:stale-token',
      status: 409,
      title: 'Stale fencing token',
      detail: 'stale fencing token 9 for /reports/1: the store has accepted 11',
      resource: '/reports/1',
      token: '9',
      highest: '11',
    });
    expect(data.get('/reports/1')).toBe('v11');
    // The resource: the Fencing-Resource header when sent (else the path).
    expect((await put('/reports/2', { [FENCING_TOKEN_HEADER]: '9', [FENCING_RESOURCE_HEADER]: '/reports/1' })).status).toBe(409);
    expect(store.get('/reports/1')).toBe(11n);
  });

  it('one resource\'s requests take turns: a stale request admitted first finishes before a newer one is checked', async () => {
    const data = new Map<string, string>();
    let admitted!: () => void;
    const fiveWriting = new Promise<void>((resolve) => (admitted = resolve));
    await serve({ resource: 'r' }, data, (req) => (req.headers['fencing-token'] === '5' ? (admitted(), 300) : 0));
    const first = put('/a', { [FENCING_TOKEN_HEADER]: '5' }, 'by 5');
    await fiveWriting; // 5 is admitted and writing slowly (300 ms)
    const second = put('/a', { [FENCING_TOKEN_HEADER]: '6' }, 'by 6');
    expect([(await first).status, (await second).status]).toEqual([200, 200]);
    expect(data.get('/a')).toBe('by 6');
  });

  it('control: without turns (serialize: false) the slow stale write lands after the newer one', async () => {
    const data = new Map<string, string>();
    let admitted!: () => void;
    const fiveWriting = new Promise<void>((resolve) => (admitted = resolve));
    await serve({ resource: 'r', serialize: false }, data, (req) => (req.headers['fencing-token'] === '5' ? (admitted(), 300) : 0));
    const first = put('/a', { [FENCING_TOKEN_HEADER]: '5' }, 'by 5');
    await fiveWriting; // 5 is admitted and writing slowly (300 ms)
    const second = put('/a', { [FENCING_TOKEN_HEADER]: '6' }, 'by 6');
    expect([(await first).status, (await second).status]).toEqual([200, 200]);
    expect(data.get('/a')).toBe('by 5'); // the stale write won
  });
});

describe('fencing http - fencedFetch with a real lease', () => {
  let space: TestSpace;
  beforeEach(() => {
    space = new TestSpace();
  });
  afterEach(async () => {
    await space.close();
  });

  it('sends the lease\'s token and path; lost, it refuses locally; a stale token that reaches the service is StaleTokenError', async () => {
    const data = new Map<string, string>();
    await serve({}, data);
    const [alice, bob] = [await space.client(), await space.client()];
    const aliceLease = await new Mutex(alice, '/locks/report').acquire();
    const asAlice = fencedFetch(aliceLease);
    expect((await asAlice(`${base}/report`, { method: 'PUT', body: 'alice' })).status).toBe(200);

    // Alice's session "expires" (her node is deleted); Bob takes the lock and writes.
    await bob.delete(aliceLease.node);
    await using bobLease = await new Mutex(bob, '/locks/report').acquire({ timeout: 5_000 });
    expect(bobLease.fencingToken).toBeGreaterThan(aliceLease.fencingToken);
    expect((await fencedFetch(bobLease)(`${base}/report`, { method: 'PUT', body: 'bob' })).status).toBe(200);

    // Alice's lease knows it is lost: her fetch refuses before sending.
    await expect.poll(() => aliceLease.held).toBe(false);
    expect(await outcome(asAlice(`${base}/report`, { method: 'PUT', body: 'alice late' }))).toBeInstanceOf(LeaseLostError);
    // A holder that has not noticed (paused before the check: only the token) is refused by the service.
    const paused = fencedFetch({ fencingToken: aliceLease.fencingToken, path: aliceLease.path });
    const err = await outcome(paused(`${base}/report`, { method: 'PUT', body: 'alice stale' }));
    expect(err).toBeInstanceOf(StaleTokenError);
    expect(err).toMatchObject({ resource: '/locks/report', token: aliceLease.fencingToken, highest: bobLease.fencingToken });
    expect(data.get('/report')).toBe('bob');
    await aliceLease.release();
  });
});
