/**
 * Curator interop under a restrictive ACL (issue 27): a Curator 5 process whose client has an
 * ACLProvider answering CREATOR_ALL_ACL and digest credentials for `owner`
 * (java/CuratorAclParticipant.java), and Node sessions of the test process authenticated as the
 * same `owner` with CREATOR_ALL_ACL (the client-wide `acl` option, or the Mutex's own), share one
 * InterProcessMutex / Mutex lock path. They exclude each other, hand the lock over both ways with
 * increasing fencing tokens (czxid), and every node either language creates (the lock nodes and
 * the container parents of the lock path) carries `digest:owner` only. Intruders, unauthenticated
 * or authenticated as `mallory`, from Node and from Curator, get NoAuth for every attempt on the
 * Java holder's node or the queue, and the Java holder keeps its lock. Negative control: with
 * Curator's default (open) ACLProvider the same intruder deletes the Java holder's node, the Node
 * waiter gets the lock, and the Java process still believes it holds.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CREATOR_ALL_ACL, digestId, NoAuthError, OPEN_ACL_UNSAFE, Perm, ZooKeeper, type ACL } from '@zk/protocol';
import { Mutex, type Lease } from '@zk/locks';
import { outcome, waitFor } from '../harness/index.js';
import { connectString, type TestSpace } from '../harness/fixtures.js';
import { curatorMissing, type CompiledJava } from '../harness/java.js';
import { interopHooks, killAll, Participant, UUID } from './participants.js';

const JAVA_SOURCE = fileURLToPath(new URL('./java/CuratorAclParticipant.java', import.meta.url));

const missing = curatorMissing();

const OWNER = { scheme: 'digest', auth: 'owner:owner-secret' };
const MALLORY = { scheme: 'digest', auth: 'mallory:mallory-secret' };
/** What the server stores for CREATOR_ALL_ACL created by a session authenticated as OWNER, whichever language. */
const OWNED: ACL[] = [{ perms: Perm.ALL, id: digestId('owner', 'owner-secret') }];
/** Every Java process halts after this long, whatever the test does (CuratorAclParticipant's lifetimeMs). */
const JAVA_LIFETIME_MS = 90_000;
const LOCK_NODE = new RegExp(`/_c_${UUID}-lock-\\d{10}$`);

let compiled: CompiledJava | undefined;
let space: TestSpace;

/** One hold, whichever language took it: its lock node and fencing token (the node's czxid). */
interface Hold {
  readonly lang: 'java' | 'node';
  readonly node: string;
  readonly token: bigint;
  release(): Promise<void>;
}

/** An acquire in progress: `settled()` tells without waiting whether it has ended. */
interface Pending {
  readonly hold: Promise<Hold>;
  settled(): boolean;
}

/** A participant of a hand-off: starts an acquire on the shared path. */
interface Side {
  acquire(): Pending;
}

/** A Java participant, once READY: `acl` chooses its ACLProvider, `auth` its digest credentials. */
async function java(path: string, acl: 'creator' | 'open', auth: string | undefined): Promise<Participant> {
  const p = Participant.java(compiled!, 'CuratorAclParticipant', [`${connectString()}${space.root}`, path, acl, auth ?? '-', String(JAVA_LIFETIME_MS)]);
  await p.until('READY');
  return p;
}

/** Sends `command` and resolves with the next line `p` prints; rejects if it exits first. */
function ask(p: Participant, command: string, timeoutMs = 30_000): Promise<string> {
  const n = p.lines.length;
  p.send(command);
  const exited = p.exited.then((code) => Promise.reject(new Error(`java exited ${code} before answering ${command}: ${p.stderr}`)));
  return Promise.race([waitFor(`java to answer ${command}`, () => p.lines[n], timeoutMs, 10), exited]);
}

/** A Java process as a hand-off side: `acquire <ms>` and `release`. */
function javaSide(p: Participant): Side {
  return {
    acquire() {
      let settled = false;
      const hold = ask(p, 'acquire 30000', 35_000).then((line): Hold => {
        settled = true;
        const [word, node = '', czxid = ''] = line.split(' ');
        if (word !== 'ACQUIRED') throw new Error(`java acquire answered ${line}`);
        return { lang: 'java', node, token: BigInt(czxid), release: async () => expect(await ask(p, 'release')).toBe('RELEASED') };
      });
      return { hold, settled: () => settled };
    },
  };
}

/** A Node Mutex as a hand-off side. */
function nodeSide(mutex: Mutex): Side {
  return {
    acquire() {
      let settled = false;
      const hold = mutex.acquire({ timeout: 30_000 }).then((lease: Lease): Hold => {
        settled = true;
        return { lang: 'node', node: lease.node, token: lease.fencingToken, release: () => lease.release() };
      });
      return { hold, settled: () => settled };
    },
  };
}

/** The lock nodes under `path`, listed by `zk`, in queue order. */
async function children(zk: ZooKeeper, path: string): Promise<string[]> {
  return (await zk.getChildren(path)).sort((a, b) => (a.slice(-10) < b.slice(-10) ? -1 : 1)).map((c) => `${path}/${c}`);
}

/** Waits until `path` has `n` lock nodes (listed by the owner: nobody else can). */
function queued(zk: ZooKeeper, path: string, n: number): Promise<string[]> {
  return waitFor(`${n} nodes under ${path}`, async () => {
    const q = await children(zk, path);
    return q.length === n ? q : undefined;
  }, 30_000, 10);
}

/** Every node of `paths` with its ACL, for one comparison that names the odd one out. */
async function acls(zk: ZooKeeper, paths: string[]): Promise<Array<{ path: string; acl: ACL[] }>> {
  return Promise.all(paths.map(async (path) => ({ path, acl: (await zk.getACL(path)).acl })));
}

/** `path` and its ancestors within the namespace: the container parents a lock creates. */
function parentsOf(path: string): string[] {
  const parts = path.split('/').slice(1);
  return parts.map((_, i) => `/${parts.slice(0, i + 1).join('/')}`);
}


/**
 * first holds, second queues behind it, first releases and second holds, first queues again and
 * gets the lock when second releases. While each waiter is queued the other side holds, the
 * waiter has not settled, and every node on the path (both lock nodes, the lock path and its
 * container parents) is compared with OWNED. Returns the three holds and the ACLs checked.
 */
async function handOff(owner: ZooKeeper, path: string, first: Side, second: Side): Promise<{ holds: Hold[]; checked: number }> {
  let checked = 0;
  const queuedBehind = async (holder: Hold, waiter: Pending): Promise<void> => {
    const q = await queued(owner, path, 2);
    expect(q[0]).toBe(holder.node);
    expect(waiter.settled()).toBe(false);
    const nodes = [...parentsOf(path), ...q];
    for (const n of q) expect(n).toMatch(LOCK_NODE);
    expect(await acls(owner, nodes)).toEqual(nodes.map((p) => ({ path: p, acl: OWNED })));
    checked += nodes.length;
  };
  const h1 = await first.acquire().hold;
  const w2 = second.acquire();
  await queuedBehind(h1, w2);
  await h1.release();
  const h2 = await w2.hold;
  const w3 = first.acquire();
  await queuedBehind(h2, w3);
  await h2.release();
  const h3 = await w3.hold;
  await h3.release();
  expect(await children(owner, path)).toEqual([]);
  return { holds: [h1, h2, h3], checked };
}

describe.skipIf(missing !== undefined)(`interop - Curator with an ACLProvider and @zk/locks under CREATOR_ALL_ACL${missing ? ` (skipped: ${missing})` : ''}`, () => {
  interopHooks([JAVA_SOURCE], { compiled: (c) => (compiled = c), space: (s) => (space = s) });

  // Registered after interopHooks, so it runs first (vitest runs after-hooks in reverse): the
  // owned nodes are beyond the reach of the namespace's unauthenticated admin, so the owner
  // removes them once no Java process can create more.
  afterEach(async () => {
    await killAll();
    await using root = await ZooKeeper.connect(connectString(), { auth: [OWNER] });
    await root.deleteRecursive(space.root).catch(() => undefined);
    expect(await root.exists(space.root)).toBeNull();
  });

  /** A Node session of the test authenticated as `owner`, with `acl` as its client-wide option when given. */
  function owner(acl?: readonly ACL[]): Promise<ZooKeeper> {
    return space.client({ auth: [OWNER], ...(acl ? { acl } : {}) });
  }

  it('acl - Curator creates the path: Java holds, Node (client-wide acl) waits, Java waits again; exclusion, increasing tokens and digest:owner on every node', async () => {
    const path = '/acl/java-first/lock';
    const zk = await owner(CREATOR_ALL_ACL);
    const p = await java(path, 'creator', OWNER.auth);
    const { holds, checked } = await handOff(zk, path, javaSide(p), nodeSide(new Mutex(zk, path)));
    console.log(`interop acl java-first: ${holds.map((h) => `${h.lang} ${h.token}`).join(' -> ')}, ${checked} ACLs checked`);
    expect(holds.map((h) => h.lang)).toEqual(['java', 'node', 'java']);
    expect(holds[0]!.token < holds[1]!.token && holds[1]!.token < holds[2]!.token).toBe(true);
    expect(await acls(zk, parentsOf(path))).toEqual(parentsOf(path).map((n) => ({ path: n, acl: OWNED })));
    expect(await ask(p, 'status')).toBe('STATUS false none');
    p.send('exit');
    expect(await p.exited).toBe(0);
  });

  it('acl - Node creates the path (the Mutex\'s acl option): Node holds, Java waits, Node waits again; the same', async () => {
    const path = '/acl/node-first/lock';
    const zk = await owner(); // no client-wide acl: the recipe's option alone
    const p = await java(path, 'creator', OWNER.auth);
    const { holds, checked } = await handOff(zk, path, nodeSide(new Mutex(zk, path, { acl: CREATOR_ALL_ACL })), javaSide(p));
    console.log(`interop acl node-first: ${holds.map((h) => `${h.lang} ${h.token}`).join(' -> ')}, ${checked} ACLs checked`);
    expect(holds.map((h) => h.lang)).toEqual(['node', 'java', 'node']);
    expect(holds[0]!.token < holds[1]!.token && holds[1]!.token < holds[2]!.token).toBe(true);
    p.send('exit');
    expect(await p.exited).toBe(0);
  });

  it('acl - intruders (unauthenticated, mallory; Node and Curator) get NoAuth on the Java holder\'s node and the queue, and the Java holder keeps its lock', async () => {
    const path = '/acl/guarded/lock';
    const zk = await owner(CREATOR_ALL_ACL);
    const holder = await java(path, 'creator', OWNER.auth);
    const held = await javaSide(holder).acquire().hold;
    const waiter = nodeSide(new Mutex(zk, path)).acquire();
    await queued(zk, path, 2);
    const nodeIntruders: Array<[string, ZooKeeper]> = [
      ['unauthenticated', await space.client()],
      ['mallory', await space.client({ auth: [MALLORY] })],
    ];
    let refused = 0;
    for (const [who, intruder] of nodeIntruders) {
      const tries: Record<string, () => Promise<unknown>> = {
        'delete the Java holder\'s node': () => intruder.delete(held.node),
        'overwrite the Java holder\'s node': () => intruder.setData(held.node, 'mine'),
        'queue on the mutex': () => new Mutex(intruder, path).acquire({ timeout: 5000 }),
        'queue with its own open ACL': () => new Mutex(intruder, path, { acl: OPEN_ACL_UNSAFE }).acquire({ timeout: 5000 }),
        'create under the lock path': () => intruder.create(`${path}/x`),
        'delete the lock path recursively': () => intruder.deleteRecursive('/acl'),
        'open the lock path\'s ACL': () => intruder.setACL(path, OPEN_ACL_UNSAFE),
      };
      for (const [what, attempt] of Object.entries(tries)) {
        expect({ who, what, error: await outcome(attempt()) }).toEqual({ who, what, error: expect.any(NoAuthError) });
        refused++;
      }
    }
    // Curator intruders: mallory with her own CREATOR_ALL provider, and an unauthenticated client
    // with the default (open) provider. Neither gets a node into the queue.
    for (const [acl, auth] of [['creator', MALLORY.auth], ['open', undefined]] as const) {
      const intruder = await java(path, acl, auth);
      expect({ acl, auth, answer: await ask(intruder, 'acquire 5000') }).toEqual({ acl, auth, answer: 'FAILED NoAuthException' });
      refused++;
      intruder.send('exit');
      expect(await intruder.exited).toBe(0);
    }
    console.log(`interop acl intruders: ${refused} attempts refused with NoAuth`);
    expect(refused).toBe(16);
    expect(await ask(holder, 'status')).toBe('STATUS true present');
    expect(waiter.settled()).toBe(false);
    expect((await queued(zk, path, 2))[0]).toBe(held.node); // no intruder node, nothing removed
    await held.release();
    const next = await waiter.hold;
    expect(next.token).toBeGreaterThan(held.token);
    await next.release();
    holder.send('exit');
    expect(await holder.exited).toBe(0);
  });

  it('acl - negative control, Curator\'s default ACLProvider: the intruder deletes the Java holder\'s node, the Node waiter gets the lock, and Java still believes it holds', async () => {
    const path = '/acl/open/lock';
    const zk = await space.client();
    const holder = await java(path, 'open', undefined);
    const held = await javaSide(holder).acquire().hold;
    const waiter = nodeSide(new Mutex(zk, path)).acquire();
    await queued(zk, path, 2);
    expect((await zk.getACL(held.node)).acl).toEqual(OPEN_ACL_UNSAFE);
    const intruder = await space.client();
    await intruder.delete(held.node);
    const next = await waiter.hold;
    // Two holders: Node by the queue, Java by its own account.
    expect(await ask(holder, 'status')).toBe('STATUS true gone');
    expect(next.token).toBeGreaterThan(held.token);
    console.log(`interop acl control: intruder deleted java's ${held.token}, node holds ${next.token}, java reports STATUS true gone`);
    await next.release();
    await held.release(); // Curator ignores the missing node
    holder.send('exit');
    expect(await holder.exited).toBe(0);
  });
});
