/**
 * Hand-offs of one Mutex path between a Curator participant and our client, for the interop
 * suites whose locks carry ACLs (acl-identities.test.ts, kerberos.test.ts): each side's acquire as
 * a {@link Side}, the lock queue as its owner lists it, and {@link alternate}, which passes the
 * lock back and forth checking the queue, the waiter and every node's ACL at each turn.
 */
import { expect } from 'vitest';
import type { ACL, ZooKeeper } from '@zk/protocol';
import type { Mutex } from '@zk/locks';
import { waitFor } from '../harness/index.js';
import type { Participant } from './participants.js';

/** One hold, whichever language took it. */
export interface Hold {
  readonly lang: 'java' | 'node';
  readonly node: string;
  readonly token: bigint;
  release(): Promise<void>;
}

/** An acquire in progress: `settled()` tells without waiting whether it has ended. */
export interface Pending {
  readonly hold: Promise<Hold>;
  settled(): boolean;
}

/** Starts one acquire of a side. */
export type Side = () => Pending;

/** A Curator participant's side (its `acquire <ms>` / `release` line commands). */
export function javaSide(p: Participant): Side {
  return () => {
    let settled = false;
    const hold = p.reply('acquire 30000', 35_000).then((line): Hold => {
      settled = true;
      const [word, node = '', czxid = ''] = line.split(' ');
      if (word !== 'ACQUIRED') throw new Error(`java acquire answered ${line}`);
      return { lang: 'java', node, token: BigInt(czxid), release: async () => expect(await p.reply('release')).toBe('RELEASED') };
    });
    return { hold, settled: () => settled };
  };
}

/** Our side: `mutex`. */
export function nodeSide(mutex: Mutex): Side {
  return () => {
    let settled = false;
    const hold = mutex.acquire({ timeout: 30_000 }).then((lease): Hold => {
      settled = true;
      return { lang: 'node', node: lease.node, token: lease.fencingToken, release: () => lease.release() };
    });
    return { hold, settled: () => settled };
  };
}

/** The lock nodes under `path` in queue order, listed by `owner` (under CREATOR_ALL_ACL nobody else can). */
export async function lockNodes(owner: ZooKeeper, path: string): Promise<string[]> {
  return (await owner.getChildren(path)).sort((a, b) => (a.slice(-10) < b.slice(-10) ? -1 : 1)).map((c) => `${path}/${c}`);
}

/** Waits until `n` lock nodes are queued under `path` (a path not made yet counts as empty); resolves with them. */
export function queued(owner: ZooKeeper, path: string, n: number): Promise<string[]> {
  return waitFor(`${n} nodes under ${path}`, async () => {
    const q = await lockNodes(owner, path).catch(() => []);
    return q.length === n ? q : undefined;
  }, 30_000, 10);
}

/** `path` and its ancestors: the container parents a lock creates. */
export function parentsOf(path: string): string[] {
  const parts = path.split('/').slice(1);
  return parts.map((_, i) => `/${parts.slice(0, i + 1).join('/')}`);
}

/**
 * `holds` holds on `path`, the sides alternating, `first` first: while each waiter is queued
 * the other side holds, the waiter has not settled, and every node on the path (parents, holder,
 * waiter) carries `owned` only; each hold's token exceeds the last. Returns the holds in order
 * and how many ACLs were compared.
 */
export async function alternate(owner: ZooKeeper, path: string, first: Side, second: Side, owned: readonly ACL[], holds: number): Promise<{ holds: Hold[]; checked: number }> {
  const done: Hold[] = [];
  let checked = 0;
  let current = await first().hold;
  for (let i = 1; i < holds; i++) {
    const waiter = (i % 2 === 1 ? second : first)();
    const q = await queued(owner, path, 2);
    expect(q[0]).toBe(current.node);
    expect(waiter.settled()).toBe(false);
    const nodes = [...parentsOf(path), ...q];
    const acls = await Promise.all(nodes.map(async (p) => ({ path: p, acl: (await owner.getACL(p)).acl })));
    expect(acls).toEqual(nodes.map((p) => ({ path: p, acl: owned })));
    checked += nodes.length;
    done.push(current);
    await current.release();
    const next = await waiter.hold;
    expect(next.token).toBeGreaterThan(current.token);
    current = next;
  }
  done.push(current);
  await current.release();
  expect(await lockNodes(owner, path)).toEqual([]);
  return { holds: done, checked };
}

/** Hand-offs between the languages in a sequence of holds. */
export function handOffs(holds: readonly Hold[]): { javaToNode: number; nodeToJava: number } {
  let javaToNode = 0;
  let nodeToJava = 0;
  for (let i = 1; i < holds.length; i++) {
    if (holds[i - 1]!.lang === 'java' && holds[i]!.lang === 'node') javaToNode++;
    if (holds[i - 1]!.lang === 'node' && holds[i]!.lang === 'java') nodeToJava++;
  }
  return { javaToNode, nodeToJava };
}
