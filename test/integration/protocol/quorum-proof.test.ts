/**
 * The quorum proof against a real server: while held, no-op writes commit and move
 * `zk.quorumDeadline`; they are reported on `zk:proof`, not among the application's requests;
 * they stop once the client closes. Its modes (issue 35): syncs instead of writes when the tick is
 * known and T is many ticks, the session's own writes standing in for the proof's, nothing sent
 * once released, nothing at all when off. (The partitions it exists for are in
 * test/faults/quorum.test.ts, in each mode.)
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChannelName, InvalidArgumentError, ZooKeeper, type ProofMessage } from '@zk/protocol';
import { Mutex } from '@zk/locks';
import { connectString, TestSpace } from '../../harness/fixtures.js';

let space: TestSpace;
beforeEach(async () => {
  space = new TestSpace();
  await space.admin();
});
afterEach(async () => {
  await space.close();
});

describe('quorum proof - on a real server', () => {
  it('held: writes commit every period (706 ms at T = 2 s, the tick unknown) and the quorum deadline keeps ahead; none is counted as an application request', async () => {
    const zk = await space.client({ sessionTimeout: 2000 });
    const proofs: ProofMessage[] = [];
    let requests = 0;
    const onProof = (m: unknown) => void proofs.push(m as ProofMessage);
    const onRequest = () => void requests++;
    subscribe(ChannelName.proof, onProof);
    subscribe(ChannelName.requestStart, onRequest);
    try {
      const release = zk.holdQuorumProof();
      const handshake = zk.quorumDeadline;
      // Confirmed proofs need a write sent confirmAfter (600 ms at T = 2 s) after a sample: wait
      // for the deadline to move past the handshake's, then for a few more writes.
      await zk.awaitQuorumDeadline(handshake, {});
      const moved = proofs.length;
      await zk.awaitQuorumDeadline(zk.quorumDeadline, {});
      expect(proofs.length).toBeGreaterThan(moved);
      expect(proofs.every((p) => p.err === 0 && p.sessionId === zk.sessionId)).toBe(true);
      // Fresh: the lease monitor's line is T/6 before the deadline; a held proof stays well ahead of it.
      expect(zk.quorumDeadline - performance.now()).toBeGreaterThan(2000 / 6);
      expect(requests).toBe(0);
      release();
    } finally {
      unsubscribe(ChannelName.proof, onProof);
      unsubscribe(ChannelName.requestStart, onRequest);
    }
  });

  it('not held: no write; a closed client stops the lingering loop and rejects a wait', async () => {
    const zk = await space.client({ sessionTimeout: 2000 });
    const proofs: unknown[] = [];
    const onProof = (m: unknown) => void proofs.push(m);
    subscribe(ChannelName.proof, onProof);
    try {
      const before = zk.quorumDeadline;
      // Nothing holds the proof: a wait for a later deadline holds it itself, and is answered.
      await zk.awaitQuorumDeadline(before, {});
      expect(proofs.length).toBeGreaterThan(0);
      // The rejection comes inside close(): its handler must be there before.
      const never = expect(zk.awaitQuorumDeadline(Number.POSITIVE_INFINITY, {})).rejects.toThrow(/closed/);
      await zk.close();
      await never;
      const after = proofs.length;
      // An absence has no event to await: more than a write interval (706 ms at T = 2 s) without one.
      await new Promise((r) => setTimeout(r, 900));
      expect(proofs.length).toBe(after);
    } finally {
      unsubscribe(ChannelName.proof, onProof);
    }
  });

  /** The proof messages of `zk`'s session while `body` runs. */
  async function proofsDuring(zk: ZooKeeper, body: () => Promise<void>): Promise<ProofMessage[]> {
    const seen: ProofMessage[] = [];
    const on = (m: unknown) => void ((m as ProofMessage).sessionId === zk.sessionId && seen.push(m as ProofMessage));
    subscribe(ChannelName.proof, on);
    try {
      await body();
    } finally {
      unsubscribe(ChannelName.proof, on);
    }
    return seen;
  }
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

  it("auto with the tick known and T = 8 ticks: the proof is kept by syncs, none a write, and it keeps ahead", async () => {
    // The harness's tick is 500 ms: T = 4 s leaves a sync room (it proves 875 ms before it was sent).
    const zk = await space.client({ sessionTimeout: 4000, serverTickTime: 500 });
    expect(zk.leaseProof).toBe('auto');
    const seen = await proofsDuring(zk, async () => {
      const release = zk.holdQuorumProof();
      // Long enough for several syncs (one every 1366 ms): the deadline must stay ahead all along.
      for (let i = 0; i < 8; i++) {
        await sleep(500);
        expect(zk.quorumDeadline - performance.now()).toBeGreaterThan(4000 / 6);
      }
      release();
    });
    expect(seen.length).toBeGreaterThanOrEqual(2);
    expect(seen.every((p) => p.kind === 'sync' && p.err === 0)).toBe(true);
  });

  it("the session's own writes stand in for the proof's writes; once released, nothing more is sent (no linger)", async () => {
    const zk = await space.client({ sessionTimeout: 2000, leaseProof: 'write' });
    await zk.create('/own', Buffer.alloc(0));
    const busy = await proofsDuring(zk, async () => {
      const release = zk.holdQuorumProof();
      // A write every 100 ms (the proof's period is 706 ms at T = 2 s): it never needs its own.
      for (let i = 0; i < 20; i++) {
        await zk.setData('/own', Buffer.from([i]));
        await sleep(100);
      }
      expect(zk.quorumDeadline - performance.now()).toBeGreaterThan(2000 / 6);
      release();
    });
    expect(busy).toHaveLength(0);
    const idleHeld = await proofsDuring(zk, async () => {
      const release = zk.holdQuorumProof();
      await zk.awaitQuorumDeadline(performance.now() + 1500, {});
      await sleep(800); // two periods without a write of its own: the proof writes
      release();
    });
    expect(idleHeld.length).toBeGreaterThanOrEqual(2);
    expect(idleHeld.every((p) => p.kind === 'write')).toBe(true);
    // An absence has no event to await: three periods after the release without a write.
    const after = await proofsDuring(zk, () => sleep(1200));
    expect(after).toHaveLength(0);
  });

  it("'off': nothing is sent for the proof, not even for a lease; 'sync' without the tick is refused before connecting", async () => {
    const zk = await space.client({ sessionTimeout: 2000, leaseProof: 'off' });
    const seen = await proofsDuring(zk, async () => {
      const lease = await new Mutex(zk, '/off').acquire();
      await sleep(1200); // three of the write mode's periods
      expect(lease.signal.aborted).toBe(false);
      await lease.release();
    });
    expect(seen).toHaveLength(0);
    const refused = ZooKeeper.connect(connectString(), { leaseProof: 'sync' });
    await expect(refused).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(refused).rejects.toThrow(/serverTickTime/);
  });

  it('a told tick too large for the negotiated T: a lease is refused at once with a typed error, not handed out to be lost at birth', async () => {
    // Before: the acquire waited for a proof it could never make fresh, then handed out a lease
    // lost within a second ("no write committed through the quorum confirmed the session").
    const zk = await space.client({ sessionTimeout: 2000, serverTickTime: 2500 });
    expect(zk.sessionTimeout).toBe(2000);
    await sleep(600); // the handshake's proof no longer fresh: the acquire must ask for one
    const started = performance.now();
    const acquire = new Mutex(zk, '/too-coarse').acquire({ timeout: 5000 });
    await expect(acquire).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(acquire).rejects.toThrow(/serverTickTime.*at least \d+ ms/);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(() => zk.holdQuorumProof()).toThrow(InvalidArgumentError);
    // Nothing was left behind: the lock's path has no contender.
    const left = (await zk.exists('/too-coarse')) === null ? [] : await zk.getChildren('/too-coarse');
    expect(left).toEqual([]);
  });
});
