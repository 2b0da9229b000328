/**
 * The quorum proof against a real server: while held, no-op writes commit and move
 * `zk.quorumDeadline`; they are reported on `zk:proof`, not among the application's requests;
 * they stop once the client closes. (The partitions it exists for are in test/faults/quorum.test.ts.)
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChannelName, type ProofMessage } from '@zk/protocol';
import { TestSpace } from '../../harness/fixtures.js';

let space: TestSpace;
beforeEach(async () => {
  space = new TestSpace();
  await space.admin();
});
afterEach(async () => {
  await space.close();
});

describe('quorum proof - on a real server', () => {
  it('held: writes commit every T/6 or so and the quorum deadline keeps ahead; none is counted as an application request', async () => {
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
      // An absence has no event to await: two write intervals (334 ms at T = 2 s) without one.
      await new Promise((r) => setTimeout(r, 700));
      expect(proofs.length).toBe(after);
    } finally {
      unsubscribe(ChannelName.proof, onProof);
    }
  });
});
