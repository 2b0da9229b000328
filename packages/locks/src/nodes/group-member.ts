/**
 * GroupMember: Curator 5.4's `GroupMember` (recipes.nodes), so Java and Node processes share one
 * member list: each member is an EPHEMERAL PersistentNode at `<membershipPath>/<thisId>`
 * (unprotected, parents as containers) whose data is its payload, and the list is a cache of
 * that path's children; `currentMembers()` maps each cached node's name to its data and adds this
 * member's own id and payload while the cache has not seen them yet (as Curator's
 * getCurrentMembers). Curator's default payload is the local address as text.
 */
import { networkInterfaces } from 'node:os';
import { CreateMode, InvalidArgumentError, validatePath, type ACL, type ZooKeeper } from '@zk/protocol';
import { LockStateError } from '../errors.js';
import { openMemberList, type MemberList } from '../internal/member-list.js';
import { pauseUnless, RETRY_FIRST_MS, RETRY_MAX_MS, toBytes } from '../internal/persistent-node-support.js';
import { PersistentNode, type InitialWaitOptions } from './persistent-node.js';
import { RenewingClient } from '../renewing-client.js';

/** Options of a {@link GroupMember}. */
export interface GroupMemberOptions {
  /** This member's payload (default: this host's address as text, like Curator's). */
  payload?: Uint8Array | string;
  /** ACL of the member node and of the container parents. */
  acl?: readonly ACL[] | undefined;
}

/** A change of the member list: a member `joined`, `left`, or `changed` its payload. */
export interface GroupChange {
  readonly type: 'joined' | 'left' | 'changed';
  readonly id: string;
  /** The payload (the last known one for `left`). */
  readonly payload: Buffer;
}

/**
 * One member of a group, and the group's current member list. The member node is re-created
 * after a reconnect, after someone deletes it and (with a {@link RenewingClient}) after session
 * expiry; the list follows joins, leaves and payload changes. With a plain `ZooKeeper` both end
 * with its session (the list keeps its last content). The list is a `TreeCache` (a persistent
 * recursive watch) on 3.6+ servers, and a listing kept by one-shot watches on older ones.
 *
 * @example
 * ```ts
 * await using member = new GroupMember(sessions, '/services/api', 'worker-1', { payload: 'host-1:8080' });
 * await member.start();
 * member.onChange((change) => console.log(change.type, change.id));
 * console.log([...member.currentMembers().keys()]);
 * ```
 */
export class GroupMember implements AsyncDisposable {
  /** The group's path. */
  readonly membershipPath: string;
  /** This member's id (its node's name). */
  readonly id: string;
  readonly #source: ZooKeeper | RenewingClient;
  readonly #node: PersistentNode;
  #list: MemberList | undefined;
  #offCache: (() => void) | undefined;
  #offRenew: (() => void) | undefined;
  #state: 'latent' | 'started' | 'closed' = 'latent';
  #members = new Map<string, Buffer>();
  readonly #listeners = new Set<(change: GroupChange) => void>();
  #reopening: Promise<void> | undefined;
  /** Wakes the `changes()` loops, so that close() ends them. */
  readonly #wakers = new Set<() => void>();
  readonly #stop = new AbortController();

  /** Bad input (a path, an id that is not one node name, a payload, an acl) throws InvalidArgumentError before anything is sent. */
  constructor(client: ZooKeeper | RenewingClient, membershipPath: string, thisId: string, options: GroupMemberOptions = {}) {
    validatePath(membershipPath);
    if (typeof thisId !== 'string' || thisId.length === 0 || thisId.includes('/') || thisId === '.' || thisId === '..') {
      throw new InvalidArgumentError('thisId', `must be one node name (no '/'), got ${JSON.stringify(thisId)}`);
    }
    const memberPath = `${membershipPath === '/' ? '' : membershipPath}/${thisId}`;
    validatePath(memberPath);
    const payload = options.payload === undefined ? localAddress() : toBytes(options.payload, 'payload');
    this.#node = new PersistentNode(client, memberPath, { mode: CreateMode.EPHEMERAL, data: payload, acl: options.acl });
    this.#source = client;
    this.membershipPath = membershipPath;
    this.id = thisId;
  }

  /**
   * Starts the member node and the member list; resolves once the list is loaded (not waiting
   * for the node: see {@link waitForInitialCreate}). `options` bound the list's first load.
   */
  async start(options: { timeout?: number; signal?: AbortSignal } = {}): Promise<void> {
    if (this.#state !== 'latent') throw new LockStateError(this.membershipPath, `GroupMember ${this.id} was already ${this.#state === 'closed' ? 'closed' : 'started'}`);
    this.#state = 'started';
    this.#node.start();
    if (this.#source instanceof RenewingClient) this.#offRenew = this.#source.onRenew((zk) => void this.#reopen(zk));
    const zk = this.#source instanceof RenewingClient ? await this.#source.client() : this.#source;
    await this.#open(zk, options);
  }

  /** Resolves with this member's node path once it exists (as {@link PersistentNode.waitForInitialCreate}). */
  waitForInitialCreate(options: InitialWaitOptions = {}): Promise<string> {
    return this.#node.waitForInitialCreate(options);
  }

  /** The members, id to payload (a copy); this member included even before the list shows it. */
  currentMembers(): Map<string, Buffer> {
    const members = new Map<string, Buffer>();
    for (const [id, payload] of this.#members) members.set(id, Buffer.from(payload));
    if (!members.has(this.id)) members.set(this.id, this.#node.data);
    return members;
  }

  /** Changes this member's payload (as {@link PersistentNode.setData}). */
  setThisData(payload: Uint8Array | string): Promise<void> {
    return this.#node.setData(payload);
  }

  /** Calls `listener` with each change of the list; returns a function that stops it. */
  onChange(listener: (change: GroupChange) => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** The changes from now on as an async iterable; ending the loop, aborting `signal` or `close()` ends it. */
  async *changes(options: { signal?: AbortSignal } = {}): AsyncGenerator<GroupChange> {
    const queue: GroupChange[] = [];
    let wake: (() => void) | undefined;
    const onWake = () => wake?.();
    const off = this.onChange((change) => (queue.push(change), onWake()));
    options.signal?.addEventListener('abort', onWake);
    this.#wakers.add(onWake);
    try {
      while (!options.signal?.aborted && this.#state !== 'closed') {
        const next = queue.shift();
        if (next) yield next;
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      off();
      this.#wakers.delete(onWake);
      options.signal?.removeEventListener('abort', onWake);
    }
  }

  /** Leaves the group: closes the list (its watch) and deletes the member node. Idempotent. */
  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    this.#stop.abort();
    this.#offRenew?.();
    this.#offCache?.();
    this.#listeners.clear();
    for (const wake of [...this.#wakers]) wake();
    await this.#reopening?.catch(() => undefined);
    await Promise.all([this.#list?.close(), this.#node.close()]);
  }

  /** With `await using`, {@link GroupMember.close} at the end of the scope. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #open(zk: ZooKeeper, options: { timeout?: number; signal?: AbortSignal } = {}): Promise<void> {
    const list = await openMemberList(zk, this.membershipPath, options);
    if (this.#state !== 'started') return void (await list.close());
    this.#offCache?.();
    const old = this.#list;
    this.#list = list;
    this.#offCache = list.onChange(() => this.#refresh(list));
    await old?.close();
    this.#refresh(list);
  }

  /** After a session expiry: the list again on the new session (what changed meanwhile comes as changes). */
  #reopen(zk: ZooKeeper): void {
    if (this.#state !== 'started') return;
    const reopening = (this.#reopening ?? Promise.resolve()).then(async () => {
      for (let pause = RETRY_FIRST_MS; this.#state === 'started' && zk.state !== 'expired'; pause = Math.min(pause * 2, RETRY_MAX_MS)) {
        try {
          return await this.#open(zk);
        } catch {
          await pauseUnless(pause * (0.5 + Math.random() / 2), this.#stop.signal);
        }
      }
    });
    this.#reopening = reopening;
  }

  /** The list as read now, and the changes since the last one. */
  #refresh(list: MemberList): void {
    if (list !== this.#list || this.#state !== 'started') return;
    const next = list.members();
    const changes: GroupChange[] = [];
    for (const [id, payload] of next) {
      const before = this.#members.get(id);
      if (!before) changes.push({ type: 'joined', id, payload });
      else if (!before.equals(payload)) changes.push({ type: 'changed', id, payload });
    }
    for (const [id, payload] of this.#members) if (!next.has(id)) changes.push({ type: 'left', id, payload });
    this.#members = next;
    for (const change of changes) {
      for (const listener of [...this.#listeners]) {
        try {
          listener(change);
        } catch {
          // a listener's throw is its own
        }
      }
    }
  }
}

/** Curator's `getLocalAddress()` payload: the host's address as text (the first external IPv4, else loopback). */
function localAddress(): Buffer {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return Buffer.from(a.address, 'utf8');
  }
  return Buffer.from('127.0.0.1', 'utf8');
}
