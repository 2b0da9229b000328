/**
 * Transactions (`multi`) and batched reads (`multiRead`).
 */
import { legacyMultiOps, needsNewerServer } from './legacy.js';
import { needs39 } from './server-features.js';
import { SINCE_VERSION } from '../connection/generation.js';
import { OpCode } from '../constants.js';
import { brandError, ErrorCode, fromCode, InvalidArgumentError, ZooKeeperError, type ErrorContext } from '../errors.js';
import type { Stat } from '../jute/data.js';
import { readMultiResponse, writeMultiRequest, type MultiOpInput, type MultiResult as WireResult } from '../jute/multi.js';
import type { CallOptions, CreateOptions, Data } from './types.js';
import type { TransactionHost } from './transaction-host.js';
import { addChroot, stripChroot, validatePath } from '../util/paths.js';

/** The outcome of one operation of a committed transaction. */
export type OpResult =
  | { readonly type: 'create'; readonly path: string; readonly stat?: Stat }
  | { readonly type: 'delete' }
  | { readonly type: 'setData'; readonly stat: Stat }
  | { readonly type: 'check' };

/** One operation's outcome in a failed transaction. */
export interface OpOutcome {
  /** The operation (`'create'`, `'delete'`, `'setData'`, `'check'`). */
  readonly op: string;
  /** The path it concerned. */
  readonly path: string;
  /**
   * Its error code: the failing operation has the real code; the operations before it report
   * OK (0), those after it RUNTIMEINCONSISTENCY (-2), as the server sends them: nothing applied.
   */
  readonly code: number;
}

/**
 * A transaction failed atomically: nothing was applied. `code`/`path` name the first failing
 * operation; `results` lists every operation's outcome.
 */
export class TransactionError extends ZooKeeperError {
  static {
    brandError(this, 'TransactionError');
  }
  override name = 'TransactionError';
  /** Every operation's outcome, in order. */
  readonly results: readonly OpOutcome[];
  /** Index of the first failing operation. */
  readonly failedIndex: number;
  constructor(code: number, failedIndex: number, results: readonly OpOutcome[], context: ErrorContext) {
    const failed = results[failedIndex];
    super(code, `transaction failed at operation ${failedIndex} (${failed?.op} ${failed?.path}): ${fromCode(code).codeName}`, context);
    this.results = results;
    this.failedIndex = failedIndex;
  }
  /** The typed error of the failing operation (a NoNodeError, BadVersionError, ...). */
  get opError(): ZooKeeperError {
    const failed = this.results[this.failedIndex];
    return fromCode(this.code, { op: failed?.op, path: failed?.path });
  }
}

interface PendingOp {
  readonly op: 'create' | 'delete' | 'setData' | 'check';
  /** The path as the caller gave it (for errors). */
  readonly path: string;
  readonly wire: MultiOpInput;
}

/**
 * A transaction builder. Operations are validated as they are added; `commit()` sends them in
 * one `multi` request.
 *
 * @example
 * ```ts
 * const results = await zk.transaction()
 *   .check('/lock/_c_1-lock-0000000001', 0)
 *   .setData('/config', 'v2')
 *   .commit();
 * ```
 */
export class Transaction {
  readonly #zk: TransactionHost;
  readonly #chroot: string;
  readonly #ops: PendingOp[] = [];
  #committed = false;

  /** @internal Use {@link ZooKeeper.transaction}. */
  constructor(zk: TransactionHost, chroot: string) {
    this.#zk = zk;
    this.#chroot = chroot;
  }

  /** The number of operations added. */
  get size(): number {
    return this.#ops.length;
  }

  /**
   * Adds a create (any mode; TTL modes need `ttl`). Its result has the created path, and a
   * Stat for containers and TTL nodes (the server answers a plain create inside a multi without
   * one, even when asked with create2, so this builder does not offer it). Without `acl`, the
   * node gets the client's `acl` connect option for `path`, as a plain create does.
   */
  create(path: string, data?: Data, options: Omit<CreateOptions, 'signal' | 'timeout' | 'parents' | 'parentAcl'> = {}): this {
    if ((options as CreateOptions).parents) throw new InvalidArgumentError('parents', 'not available in a transaction: add the parents\' creates before this one, or use ensurePath first');
    const { request } = this.#zk.prepareCreate(path, data, options, false);
    this.#ops.push({ op: 'create', path, wire: request });
    return this;
  }

  /**
   * Adds a create whose result carries the new node's Stat (`create2` inside the multi,
   * ZOOKEEPER-4026), like {@link ZooKeeper.createWithStat}. Needs ZooKeeper 3.9: an older server
   * takes it as a plain create and answers without the Stat, so on one `commit()` fails with
   * UnimplementedError before sending anything (3.7.2 and 3.8.2+ have it too, but cannot be told
   * from 3.8.0 and are refused the same way). Containers and TTL nodes answer with a Stat on
   * every server: {@link create} gives it for them. The check is made on the connection the
   * commit is sent on; a commit the client's retry policy sends again after a failover to an
   * older server is applied there without the Stat (`stat` then undefined).
   *
   * @example
   * ```ts
   * const [made] = await zk.transaction().createWithStat('/jobs/job-', 'x', { mode: CreateMode.PERSISTENT_SEQUENTIAL }).commit();
   * if (made?.type === 'create') console.log(made.path, made.stat?.czxid);
   * ```
   */
  createWithStat(path: string, data?: Data, options: Omit<CreateOptions, 'signal' | 'timeout' | 'parents' | 'parentAcl'> = {}): this {
    if ((options as CreateOptions).parents) throw new InvalidArgumentError('parents', 'not available in a transaction: add the parents\' creates before this one, or use ensurePath first');
    const { request } = this.#zk.prepareCreate(path, data, options, true);
    this.#ops.push({ op: 'create', path, wire: request });
    return this;
  }

  /** Adds a delete (`version` -1, the default, matches any). */
  delete(path: string, version = -1): this {
    validatePath(path);
    checkVersion(version);
    this.#ops.push({ op: 'delete', path, wire: { type: OpCode.delete, path: addChroot(this.#chroot, path), version } });
    return this;
  }

  /** Adds a setData (`version` -1, the default, matches any). */
  setData(path: string, data: Data, version = -1): this {
    validatePath(path);
    checkVersion(version);
    const bytes = this.#zk.prepareData(data);
    this.#ops.push({ op: 'setData', path, wire: { type: OpCode.setData, path: addChroot(this.#chroot, path), data: bytes, version } });
    return this;
  }

  /** Adds a version check: the transaction fails unless the node exists with this version (-1: any). */
  check(path: string, version = -1): this {
    validatePath(path);
    checkVersion(version);
    this.#ops.push({ op: 'check', path, wire: { type: OpCode.check, path: addChroot(this.#chroot, path), version } });
    return this;
  }

  /**
   * Sends the operations as one atomic `multi`. Resolves with one result per operation, or
   * rejects with a {@link TransactionError} (nothing applied). Can be called once.
   */
  async commit(options: CallOptions = {}): Promise<OpResult[]> {
    if (this.#committed) throw new InvalidArgumentError('transaction', 'already committed');
    if (this.#ops.length === 0) throw new InvalidArgumentError('transaction', 'has no operations');
    this.#committed = true;
    const ops = this.#ops;
    // A 3.4 server would drop the connection on a container or TTL create inside a multi. Known
    // at once on a connection past its first round trip; waited for (one round trip at most)
    // only by a multi with such a create made before.
    let generation = this.#zk.serverGeneration();
    if (generation instanceof Promise && ops.some((o) => SINCE_VERSION.has(o.wire.type))) generation = await generation.catch(() => undefined);
    // A create2 (createWithStat) needs a 3.9 server: checked before anything is sent.
    const withStat = ops.find((o) => o.wire.type === OpCode.create2);
    if (withStat !== undefined) {
      const what = "a create's Stat inside a transaction";
      if (generation === 'legacy') throw needs39('createWithStat', withStat.path, what, true);
      await this.#zk.requireServer39('createWithStat', withStat.path, what, options);
    }
    const wire = generation === 'legacy' ? legacyMultiOps(ops) : ops.map((o) => o.wire);
    const reply = await this.#zk.rawRequest(OpCode.multi, 'multi', ops[0]?.path, (w) => writeMultiRequest(w, wire), readMultiResponse, options, false, wire.length);
    // A failed multi still has err 0 in its reply header; the failure is inside, per op.
    if (reply.err !== 0) throw fromCode(reply.err, { op: 'multi' });
    return this.#results(ops, reply.body as WireResult[]);
  }

  #results(ops: readonly PendingOp[], wire: readonly WireResult[]): OpResult[] {
    const failed = wire.findIndex((r) => r.type === OpCode.error && r.err !== ErrorCode.OK && r.err !== ErrorCode.RUNTIMEINCONSISTENCY);
    const anyError = wire.some((r) => r.type === OpCode.error);
    if (anyError) {
      const index = failed === -1 ? wire.findIndex((r) => r.type === OpCode.error) : failed;
      const outcomes = ops.map((op, i) => {
        const r = wire[i];
        return { op: op.op, path: op.path, code: r && r.type === OpCode.error ? r.err : ErrorCode.OK };
      });
      const first = wire[index];
      const code = first && first.type === OpCode.error ? first.err : ErrorCode.SYSTEMERROR;
      throw new TransactionError(code, index, outcomes, { op: 'multi', path: ops[index]?.path });
    }
    return wire.map((r): OpResult => {
      switch (r.type) {
        case OpCode.create:
          return { type: 'create', path: stripChroot(this.#chroot, r.path ?? '') };
        case OpCode.create2:
        case OpCode.createContainer:
        case OpCode.createTTL:
          return { type: 'create', path: stripChroot(this.#chroot, r.path ?? ''), stat: r.stat };
        case OpCode.delete:
          return { type: 'delete' };
        case OpCode.setData:
          return { type: 'setData', stat: r.stat };
        case OpCode.check:
          return { type: 'check' };
        default:
          throw new InvalidArgumentError('multi', `unexpected result type ${r.type}`);
      }
    });
  }
}

function checkVersion(version: number): void {
  if (!Number.isInteger(version) || version < -1 || version > 0x7fffffff) {
    throw new InvalidArgumentError('version', `must be an integer >= -1, got ${String(version)}`);
  }
}

/** One read of a {@link ZooKeeper.multiRead}. */
export type MultiReadOp = { readonly type: 'getData'; readonly path: string } | { readonly type: 'getChildren'; readonly path: string };

/** One result of a {@link ZooKeeper.multiRead}: the value, or the error for that path. */
export type MultiReadResult =
  | { readonly type: 'getData'; readonly path: string; readonly data: Buffer; readonly stat: Stat }
  | { readonly type: 'getChildren'; readonly path: string; readonly children: string[] }
  | { readonly type: 'error'; readonly path: string; readonly error: ZooKeeperError };

/** @internal */
export async function executeMultiRead(zk: TransactionHost, chroot: string, ops: readonly MultiReadOp[], options: CallOptions): Promise<MultiReadResult[]> {
  if (!Array.isArray(ops) || ops.length === 0) throw new InvalidArgumentError('ops', 'must be a non-empty list');
  const wireOps = ops.map((op): MultiOpInput => {
    validatePath(op.path);
    const path = addChroot(chroot, op.path);
    if (op.type === 'getData') return { type: OpCode.getData, path, watch: false };
    if (op.type === 'getChildren') return { type: OpCode.getChildren, path, watch: false };
    throw new InvalidArgumentError('ops', `unknown read ${(op as { type: string }).type}`);
  });
  const reply = await zk.rawRequest(OpCode.multiRead, 'multiRead', ops[0]?.path, (w) => writeMultiRequest(w, wireOps), readMultiResponse, options, false, wireOps.length);
  if (reply.err === ErrorCode.UNIMPLEMENTED) throw needsNewerServer('multiRead', undefined, '3.6', zk.serverGeneration() === 'legacy');
  if (reply.err !== 0) throw fromCode(reply.err, { op: 'multiRead' });
  const wire = reply.body as WireResult[];
  return ops.map((op, i): MultiReadResult => {
    const r = wire[i];
    if (!r || r.type === OpCode.error) return { type: 'error', path: op.path, error: fromCode(r ? r.err : ErrorCode.SYSTEMERROR, { op: op.type, path: op.path }) };
    if (r.type === OpCode.getData) return { type: 'getData', path: op.path, data: r.data ?? Buffer.alloc(0), stat: r.stat };
    if (r.type === OpCode.getChildren) return { type: 'getChildren', path: op.path, children: (r.children ?? []) as string[] };
    return { type: 'error', path: op.path, error: fromCode(ErrorCode.MARSHALLINGERROR, { op: op.type, path: op.path }) };
  });
}
