import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { waitFor } from '../harness/index.js';
import { FaultFixture, parseEvent } from './fixture.js';
import { GuardedResource } from './resource.js';
import { renderTable, type NemesisRow } from './summary.js';

describe('faults - fixture and summary', () => {
  it('parses participant lines, errors included, and refuses what is not an event', () => {
    expect(parseEvent('{"who":"p1","t":"12","kind":"error","message":"acquire timed out"}')).toEqual({ kind: 'error', who: 'p1', t: 12n, message: 'acquire timed out' });
    expect(parseEvent('{"who":"p1","t":"13","kind":"acquired","token":"7"}')).toEqual({ kind: 'acquired', who: 'p1', t: 13n, token: 7n, mode: 'write' });
    expect(parseEvent('Warning: something')).toBeUndefined();
  });

  it('fails a run below its minimum rate, showing the participants\' errors by message', async () => {
    const fx = await FaultFixture.start({ root: '/x' });
    try {
      for (let i = 0; i < 5; i++) fx.events.push({ kind: 'error', who: `p${i}`, t: BigInt(i), message: `ConnectionLoss on /x/faults/lock/_c_${i}` });
      fx.events.push({ kind: 'error', who: 'p0', t: 9n, message: 'acquire timed out' });
      const verdict = fx.check();
      expect(verdict.errors).toBe(6);
      const problems = fx.problems({ ...verdict, acquisitions: 0 }, { minPerSecond: 1 });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^progress: 0 acquisitions in .* below the minimum 1\/s; participant errors: 5x ConnectionLoss on \/x\/faults\/lock\/_c_N; 1x acquire timed out$/);
      expect(fx.problems({ ...verdict, acquisitions: 1_000_000 }, { minPerSecond: 1 })).toEqual([]);
    } finally {
      await fx.close();
    }
  });

  it('a participant that cannot reach a server logs its errors into the history', async () => {
    // A port that refuses connections: listen, note the port, close.
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const fx = await FaultFixture.start({ root: '/x' });
    try {
      fx.spawn({ who: 'lonely', connect: `127.0.0.1:${port}`, durationMs: 500, workMs: 1 });
      await fx.exited();
      const errors = fx.events.filter((e) => e.kind === 'error');
      expect(errors.length).toBeGreaterThan(0);
      expect(errors.every((e) => e.who === 'lonely')).toBe(true);
      expect(fx.errorCounts()[0]![0]).toMatch(/^connect: /);
    } finally {
      await fx.close();
    }
  }, 30_000);

  it('ends a pause when the participant is seen running after SIGCONT (its first line), not at the SIGCONT', async () => {
    const fx = await FaultFixture.start({ root: '/x' });
    try {
      const ticker = "setInterval(() => console.log(JSON.stringify({ who: 'x', t: process.hrtime.bigint().toString(), kind: 'error', message: 'tick' })), 20)";
      const p = fx.attach('x', spawn(process.execPath, ['-e', ticker], { stdio: ['ignore', 'pipe', 'pipe'] }), 2000);
      await waitFor('a first line', () => (fx.events.length > 0 ? true : undefined), 10_000, 5);
      p.pause();
      const stopped = process.hrtime.bigint();
      await new Promise((r) => setTimeout(r, 200)); // the pause itself
      expect(fx.history().filter((e) => e.kind === 'paused')).toHaveLength(1); // open: counted up to now
      const cont = process.hrtime.bigint();
      p.resume();
      const paused = await waitFor('the pause to end', () => fx.events.find((e) => e.kind === 'paused'), 10_000, 5);
      if (paused.kind !== 'paused') throw new Error('unreachable');
      expect(paused.from).toBeLessThanOrEqual(stopped);
      expect(paused.to).toBeGreaterThan(cont);
      const firstAfter = fx.events.find((e) => e.kind === 'error' && e.t >= cont);
      expect(paused.to).toBe(firstAfter!.t);
      p.kill();
    } finally {
      await fx.close();
    }
  });

  it('awaitHolder wakes at the line that makes someone a holder, and gives up at its deadline', async () => {
    const fx = await FaultFixture.start({ root: '/x' });
    try {
      const t0 = Date.now();
      expect(await fx.awaitHolder(t0 + 100)).toBeUndefined();
      expect(Date.now() - t0).toBeGreaterThanOrEqual(95);
      // A participant that logs an error, then acquires 300 ms later, then idles.
      const line = (kind: string, extra: string) => `console.log(JSON.stringify({ who: 'h', t: process.hrtime.bigint().toString(), kind: '${kind}', ${extra} }))`;
      const script = `${line('error', "message: 'first'")}; setTimeout(() => ${line('acquired', "token: '5'")}, 300); setInterval(() => {}, 1000)`;
      const p = fx.attach('h', spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'] }), 2000);
      const who = await fx.awaitHolder(Date.now() + 10_000);
      expect(who).toBe('h');
      const acquired = fx.events.find((e) => e.kind === 'acquired');
      expect(acquired).toBeDefined();
      expect(fx.events.some((e) => e.kind === 'error' && e.message === 'first')).toBe(true);
      expect(await fx.awaitHolder(0)).toBe('h'); // already a holder: at once
      p.kill();
      expect(await fx.awaitHolder(Date.now() + 50)).toBeUndefined(); // killed: no longer holds
    } finally {
      await fx.close();
    }
  });

  it('a resource shared by N holders accepts only writes whose lease lives, and its log is checked by tokens writing at once', async () => {
    // Leases 10, 12, 14 live; 8 is gone (its holder's session expired).
    const live = new Map([['/s/leases/a', 10n], ['/s/leases/b', 12n], ['/s/leases/c', 14n], ['/s/leases/old', 99n]]);
    const r = await GuardedResource.start({ capacity: 2, alive: async (token, node) => live.get(node) === token });
    const post = async (who: string, token: bigint, node: string) => (await fetch(`${r.url}?who=${who}&token=${token}&node=${encodeURIComponent(node)}`, { method: 'POST' })).status;
    try {
      // The oldest live lease writes after newer ones: accepted (a highest-token rule would refuse it).
      expect(await post('b', 12n, '/s/leases/b')).toBe(200);
      expect(await post('a', 10n, '/s/leases/a')).toBe(200);
      // A stale holder: its node is gone, or the node is someone else's now (another token).
      expect(await post('stale', 8n, '/s/leases/gone')).toBe(409);
      expect(await post('stale', 8n, '/s/leases/old')).toBe(409);
      expect(r.staleRejected).toBe(2);
      expect(r.fenceViolations()).toEqual([]);
      // A third token writing while both others still write: over the capacity of 2.
      expect(await post('c', 14n, '/s/leases/c')).toBe(200);
      expect(await post('a', 10n, '/s/leases/a')).toBe(200);
      expect(await post('b', 12n, '/s/leases/b')).toBe(200);
      expect(r.fenceViolations()).toHaveLength(1);
      expect(r.staleAccepted).toBe(1);
    } finally {
      await r.close();
    }
    await expect(GuardedResource.start({ capacity: 2 })).rejects.toThrow(/lease check/);
  });

  it('renders one line per nemesis, summing rounds (the soak) and adding a total', () => {
    const row = (nemesis: string, acquisitions: number, longestDetectionMs = 0): NemesisRow => ({ nemesis, processes: 5, acquisitions, violations: 0, longestDetectionMs, staleRejected: 1, staleAccepted: 0, participantErrors: 2, durationMs: 10_000 });
    expect(renderTable([row('a', 100), row('b', 50, 12)]).split('\n')).toEqual([
      '| nemesis | processes | acquisitions | acquisitions/s | violations | longest detection window | stale writes rejected | stale writes accepted | participant errors | duration |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
      '| a | 5 | 100 | 10.0 | 0 | 0 ms | 1 | 0 | 2 | 10.0 s |',
      '| b | 5 | 50 | 5.0 | 0 | 12 ms | 1 | 0 | 2 | 10.0 s |',
      '| **total** | 10 | 150 | 7.5 | 0 | 12 ms | 2 | 0 | 4 | 20.0 s |',
    ]);
    const soak = renderTable([row('a', 1000), row('a', 3000, 7)]).split('\n');
    expect(soak[0]).toMatch(/^\| nemesis \| rounds \| processes \(most in a round\) \| acquisitions \|/);
    expect(soak[2]).toBe('| a | 2 | 5 | 4,000 | 200.0 | 0 | 7 ms | 2 | 0 | 4 | 20.0 s |');
  });
});
