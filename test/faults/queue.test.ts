/**
 * A safe-mode queue under SIGKILL of its consumers mid-item: three consumer processes (session
 * timeout T) take 60 items; twice, a consumer that has printed `took X` but not `completing X` is
 * killed and replaced. Every item must be acknowledged exactly once (the killed consumer's item
 * goes to another consumer once its session expires). Negative control: the same run without a
 * lock path (items deleted as they are taken) loses the killed consumers' items (and perhaps
 * others: a take whose reply is lost loses its item too).
 *
 * A kill aimed at `took X` may land later, on a loaded machine, while the victim completes X: the
 * completion (one multi) may then be applied with no `acked X` printed. Such a kill does not count
 * as mid-item (another victim is struck), and the checker takes X as completed by the victim
 * unless X is still queued (queue-consumer.ts). Before, that run reported X missing (CI, 10:03).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Queue, stringSerializer } from '@zk/locks';
import { connectString, TestSpace } from '../harness/fixtures.js';
import { waitFor } from '../harness/index.js';
import { killAll, Participant } from '../interop/participants.js';
import { checkQueue, CONSUMER_SOURCE } from './queue-consumer.js';

const T = 2000;
const ITEMS = 60;

describe('faults - queue checker', () => {
  it('passes when every item put is acknowledged once or still queued, and fails on a lost or a doubled item', () => {
    expect(checkQueue(['a', 'b', 'c'], ['a', 'b'], ['c'])).toEqual({ missing: [], duplicated: [], remaining: 1 });
    expect(checkQueue(['a', 'b', 'c'], ['a', 'c'], []).missing).toEqual(['b']);
    expect(checkQueue(['a', 'b'], ['a', 'b', 'a'], []).duplicated).toEqual(['a']);
    // A completion in flight at the kill: done when the item is gone, and never a second ack.
    expect(checkQueue(['a', 'b'], ['a'], [], ['b'])).toEqual({ missing: [], duplicated: [], remaining: 0 });
    expect(checkQueue(['a', 'b'], ['a', 'b'], [], ['b']).duplicated).toEqual([]);
    expect(checkQueue(['a', 'b'], ['a'], [], ['a']).missing).toEqual(['b']);
  });
});

describe('faults - queue consumers killed (SIGKILL) mid-item', () => {
  let space: TestSpace;
  beforeEach(async () => {
    space = new TestSpace();
    await space.admin();
  });
  afterEach(async () => {
    await killAll();
    await space.close();
  });

  for (const safe of [true, false]) {
    it(safe ? 'safe mode (lockPath): every item acknowledged exactly once' : 'negative control without lockPath: the killed consumers lose their items', async () => {
      const zk = await space.client();
      const put = Array.from({ length: ITEMS }, (_, i) => `i${i}`);
      const producer = new Queue(zk, '/fq', { serializer: stringSerializer });
      for (const item of put) await producer.put(item);
      const args = [`${connectString()}${space.root}`, '/fq', safe ? '/fq-locks' : '', '100', String(T)];
      const consumers: Participant[] = [];
      const start = (): Participant => {
        const p = new Participant('node', process.execPath, ['--input-type=module', '-e', CONSUMER_SOURCE, ...args]);
        consumers.push(p);
        return p;
      };
      for (let i = 0; i < 3; i++) start();
      await Promise.all(consumers.map((p) => p.until('READY')));
      const killedMidItem: string[] = [];
      // Two victims must die with an item in hand. A kill that lands after the victim's ack (its
      // 100 ms of work passed before the SIGKILL, on a loaded machine) does not count: another
      // consumer is struck instead, up to six times in all.
      for (let k = 0; k < 6 && killedMidItem.length < 2; k++) {
        const victim = consumers.find((p) => p.proc.exitCode === null && p.proc.signalCode === null)!;
        const line = await victim.untilMatch((l) => l.startsWith('took ') && !victim.lines.includes(`acked ${l.slice(5)}`), 'an item in hand');
        victim.proc.kill('SIGKILL');
        await victim.exited;
        const item = line.slice(5);
        if (!victim.lines.includes(`completing ${item}`)) killedMidItem.push(item);
        start();
      }
      const acked = () => consumers.flatMap((p) => p.lines.filter((l) => l.startsWith('acked ')).map((l) => l.slice(6)));
      // Completions in flight when their consumer was killed (applied or not: the checker decides by the queue).
      const inCompletion = () => consumers.filter((p) => p.proc.signalCode === 'SIGKILL').flatMap((p) => p.lines.filter((l) => l.startsWith('completing ') && !p.lines.includes(`acked ${l.slice(11)}`)).map((l) => l.slice(11)));
      const queued = async () => (await space.children('/fq')).length;
      // Done when every item is acknowledged or the queue is empty and stays so (the control's lost items are gone for good).
      await waitFor('the queue drained', async () => ((await queued()) === 0 && consumers.every((p) => p.lines.filter((l) => l.startsWith('took ')).length === p.lines.filter((l) => l.startsWith('acked ')).length || p.proc.signalCode === 'SIGKILL') ? true : undefined), 60_000, 50);
      await killAll();
      const verdict = checkQueue(put, acked(), await space.children('/fq'), inCompletion());
      console.log(`queue ${safe ? 'safe' : 'plain (control)'}, SIGKILL x2 mid-item: ${JSON.stringify({ acked: acked().length, killedMidItem, inCompletion: inCompletion(), missing: verdict.missing, duplicated: verdict.duplicated, remaining: verdict.remaining })}`);
      expect(killedMidItem).toHaveLength(2); // not vacuous: each victim died with an item in hand
      expect(verdict.duplicated).toEqual([]);
      if (safe) {
        expect(verdict.missing).toEqual([]);
        expect(acked().length + inCompletion().filter((i) => !acked().includes(i)).length).toBe(ITEMS);
      } else {
        // Every victim's item is lost. Others may be too: without a lock path a take is a delete,
        // and one whose reply a consumer never saw (a connection lost under load, after which the
        // item is gone with no telling whose delete it was: takeNormally) loses its item as well
        // (a CI run with four files at once lost i3 beside the victims' i1 and i2).
        expect(verdict.missing).toEqual(expect.arrayContaining(killedMidItem));
      }
    }, 90_000);
  }
});
