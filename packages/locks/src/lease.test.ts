import { afterEach, describe, expect, it } from 'vitest';
import type { WatchedEvent, ZooKeeper } from '@zk/protocol';
import { LeaseEndedError, LeaseLostError, LeaseReleasedError, LeaseRevokedError, NotHeldError } from './errors.js';
import { abortCore, guard, Lease, reasonOf, RELEASED, signalOf, type LeaseCore } from './lease.js';
import { fakeClient, StateStub } from './testing/fake-client.js';
import { MultiLease } from './locks/multi-lock.js';
import { Mutex } from './locks/mutex.js';

/** A core with no guard behind it: only the signal bookkeeping is under test. */
function core(): LeaseCore {
  return {
    zk: undefined as never,
    lockPath: '/l',
    nodePath: '/l/n',
    fencingToken: 1n,
    sessionId: 0x1234n,
    controller: undefined,
    aborted: false,
    reason: undefined,
    revocation: undefined,
    revocable: false,
    refs: 1,
    released: false,
    end: async () => {},
    check: () => {},
  };
}

describe('lease - the signal, handed out lazily', () => {
  it('a hold lost before anyone asked gives out a signal already aborted, with the first reason', () => {
    const c = core();
    const first = new Error('lost');
    abortCore(c, first);
    abortCore(c, new Error('released'));
    expect(c.controller).toBeUndefined(); // nothing made for nobody
    expect(c.aborted).toBe(true);
    const signal = signalOf(c);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(first);
    expect(signalOf(c)).toBe(signal);
  });

  it('a signal handed out before the loss aborts at the loss, once, with its reason', () => {
    const c = core();
    const signal = signalOf(c);
    const reasons: unknown[] = [];
    signal.addEventListener('abort', () => reasons.push(signal.reason));
    expect(signal.aborted).toBe(false);
    const first = new Error('lost');
    abortCore(c, first);
    abortCore(c, new Error('released'));
    expect(reasons).toEqual([first]);
    expect(c.reason).toBe(first);
  });
});

/**
 * A session the test drives: its state, and the clock evidence a lease rests on (`heard`: the send
 * time of the newest answered request; leaseProof 'off', so the deadline is `heard` + T).
 * getData records the lease's watch on its own node and never answers.
 */
class Session extends StateStub {
  readonly sessionTimeout = 2000;
  readonly sessionId = 0x100004c5e2a0002n;
  readonly leaseProof = 'off';
  heard = performance.now();
  watches: ((e: WatchedEvent) => void)[] = [];
  deleted: string[] = [];
  get expiryDeadline(): number {
    return this.heard + this.sessionTimeout;
  }
  get quorumDeadline(): number {
    return this.expiryDeadline;
  }
  zk(): ZooKeeper {
    const zk = fakeClient({
      state: 'connected',
      sessionTimeout: this.sessionTimeout,
      sessionId: this.sessionId,
      leaseProof: this.leaseProof,
      onStateChange: this.onStateChange.bind(this),
      getData: (_path: string, options: { watch: (e: WatchedEvent) => void }) => {
        this.watches.push(options.watch);
        return new Promise(() => undefined);
      },
      delete: async (path: string) => void this.deleted.push(path),
      removeLocalWatch: () => true,
      holdQuorumProof: () => () => undefined,
    });
    // Read at each use, as the client's are.
    Object.defineProperty(zk, 'expiryDeadline', { get: () => this.expiryDeadline });
    Object.defineProperty(zk, 'quorumDeadline', { get: () => this.quorumDeadline });
    return zk;
  }
}
let session: Session;
const leases: Lease[] = [];

function held(options: { suspendedGrace?: number } = {}): Lease {
  session = new Session();
  const lease = new Lease(guard(session.zk(), '/jobs/lock', '/jobs/lock/_c_x-lock-0000000007', 4294967311n, options, () => undefined));
  leases.push(lease);
  return lease;
}

afterEach(async () => {
  for (const l of leases.splice(0)) await l.release().catch(() => undefined);
});

describe('lease - the signal reason tells released, revoked and lost apart', () => {
  it('a plain release: LeaseReleasedError, code released, not a LeaseLostError (an alert on losses stays quiet)', async () => {
    const lease = held();
    const signal = lease.signal;
    await lease.release();
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(LeaseReleasedError);
    expect(signal.reason).toBeInstanceOf(LeaseEndedError);
    expect(signal.reason).not.toBeInstanceOf(LeaseLostError);
    expect(signal.reason).toMatchObject({ name: 'LeaseReleasedError', code: 'released', path: '/jobs/lock', message: 'lease on /jobs/lock released' });
    expect(() => lease.assertHeld()).toThrow(NotHeldError); // acting on a lease you gave up: misuse, as before
  });

  it('a release read only later (the error is made lazily) is the same LeaseReleasedError', () => {
    const c = core();
    abortCore(c, RELEASED);
    const reason = reasonOf(c);
    expect(reason).toBeInstanceOf(LeaseReleasedError);
    expect(reasonOf(c)).toBe(reason);
    expect(signalOf(c).reason).toBe(reason);
  });

  it('the lock node deleted by someone else: LeaseRevokedError, code revoked, still a LeaseLostError', () => {
    const lease = held();
    const signal = lease.signal;
    return new Promise<void>((resolve) => process.nextTick(resolve)).then(() => {
      expect(session.watches).toHaveLength(1); // the lease watches its own node
      session.watches[0]!({ type: 'NodeDeleted', state: 'SyncConnected', path: '/jobs/lock/_c_x-lock-0000000007' } as WatchedEvent);
      expect(signal.reason).toBeInstanceOf(LeaseRevokedError);
      expect(signal.reason).toBeInstanceOf(LeaseLostError);
      expect(signal.reason).toMatchObject({ code: 'revoked', message: expect.stringMatching(/revoked: the lock node was deleted/) });
      expect(() => lease.assertHeld()).toThrow(LeaseRevokedError);
    });
  });

  it('the session expired: LeaseLostError, code lost', () => {
    const lease = held();
    session.to('expired');
    expect(lease.signal.reason).toBeInstanceOf(LeaseLostError);
    expect(lease.signal.reason).not.toBeInstanceOf(LeaseRevokedError);
    expect(lease.signal.reason).toMatchObject({ code: 'lost', message: 'lease on /jobs/lock lost: session expired' });
  });
});

describe('lease - held and assertHeld read the clock (issue 41)', () => {
  it('past its deadline with no timer run yet (a paused process, resumed): held is false, and the signal aborts there, with lost', () => {
    const lease = held();
    expect(lease.held).toBe(true);
    // What a pause longer than T looks like to the clock: the newest answer is older than T.
    // No timer has run (this test never yields to the event loop).
    session.heard = performance.now() - 5000;
    const signal = lease.signal;
    expect(signal.aborted).toBe(false); // control: the timer-set flag does not know yet
    expect(lease.held).toBe(false);
    expect(signal.aborted).toBe(true); // aborted right there, synchronously
    expect(signal.reason).toBeInstanceOf(LeaseLostError);
    expect(signal.reason).toMatchObject({ code: 'lost', message: expect.stringMatching(/^lease on \/jobs\/lock lost: the lease's deadline passed \d+ ms ago, found by reading the clock .*paused.*may have expired the session$/) });
  });

  it('assertHeld throws the loss at the first call after the deadline, before anything else runs', () => {
    const lease = held();
    lease.assertHeld();
    session.heard = performance.now() - 5000;
    let thrown: unknown;
    try {
      lease.assertHeld();
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(LeaseLostError);
    expect(thrown).toBe(lease.signal.reason);
  });

  it('the deadline is the timers\': at risk from a sixth of the timeout before the ensemble may expire the session, not before', () => {
    const lease = held();
    const T = session.sessionTimeout;
    session.heard = performance.now() - (T - T / 6) + 50; // 50 ms before the margin
    expect(lease.held).toBe(true);
    session.heard = performance.now() - (T - T / 6) - 1; // just past it
    expect(lease.held).toBe(false);
  });

  it('suspended past the grace with its timer not yet run: held is false, with the grace timer\'s reason', async () => {
    const lease = held({ suspendedGrace: 30 });
    session.to('suspended');
    expect(lease.held).toBe(true);
    const until = performance.now() + 40;
    while (performance.now() < until); // the event loop blocked past the grace: the timer cannot run
    expect(lease.signal.aborted).toBe(false);
    expect(lease.held).toBe(false);
    expect(lease.signal.reason).toMatchObject({ code: 'lost', message: 'lease on /jobs/lock lost: suspended for more than 30 ms' });
  });
});

describe('lease - a MultiLease reads its parts\' clocks', () => {
  it('past the deadline, held is false and assertHeld throws the part\'s loss, before any timer ran', () => {
    const first = held();
    const multi = new MultiLease([first], []);
    expect(multi.held).toBe(true);
    session.heard = performance.now() - 5000;
    expect(multi.signal.aborted).toBe(false); // control: the flag the timers set
    expect(() => multi.assertHeld()).toThrow(LeaseLostError);
    expect(multi.held).toBe(false);
    expect(multi.signal.reason).toMatchObject({ code: 'lost', message: expect.stringMatching(/deadline passed/) });
  });
});

describe('lease - reentrancy reads the clock too', () => {
  it('isHeldBy is false past the deadline, and an acquire by the same owner does not re-enter the dead hold', async () => {
    held(); // a session to hold on
    const zk = session.zk();
    // A Mutex whose node is "acquired" at once: the guard is the real one, on the stub session.
    class Instant extends Mutex {
      protected override acquireNode() {
        return Promise.resolve({ nodePath: '/m/_c_x-lock-0000000001', name: '_c_x-lock-0000000001', czxid: 7n });
      }
    }
    const mutex = new Instant(zk, '/m');
    const owner = Symbol('owner');
    const first = await mutex.acquire({ owner });
    leases.push(first);
    expect(mutex.isHeldBy(owner)).toBe(true);
    const again = await mutex.acquire({ owner });
    expect(again.fencingToken).toBe(first.fencingToken); // reentrant while held
    leases.push(again);
    session.heard = performance.now() - 5000; // paused past the deadline; no timer has run
    expect(first.signal.aborted).toBe(false); // control
    expect(mutex.isHeldBy(owner)).toBe(false);
    expect(first.signal.reason).toMatchObject({ code: 'lost' });
  });
});

describe('lease - JSON', () => {
  it('JSON.stringify(lease): path, node, token and session id in decimal (signed, as a Stat\'s JSON), held; once ended, how', async () => {
    const lease = held();
    expect(JSON.parse(JSON.stringify(lease))).toEqual({ path: '/jobs/lock', node: '/jobs/lock/_c_x-lock-0000000007', fencingToken: '4294967311', sessionId: '72057922035253250', held: true });
    expect(BigInt(lease.toJSON().sessionId)).toBe(session.sessionId);
    // A session id past 2^63 (a server with myid 128 and up) is a negative Java long: signed, as the client has it.
    const negative = new Lease({ ...core(), sessionId: -9151314245684559873n });
    expect(negative.toJSON().sessionId).toBe('-9151314245684559873');
    expect(BigInt(lease.toJSON().fencingToken)).toBe(lease.fencingToken);
    await lease.release();
    expect(lease.toJSON()).toMatchObject({ held: false, ended: 'released' });
    const lost = held();
    session.to('expired');
    expect(JSON.stringify({ lease: lost })).toContain('"held":false,"ended":"lost"');
  });
});
