/**
 * Work on whole paths and subtrees, built on the client's own calls: creating missing ancestors
 * (`create(..., { parents })`, `ensurePath`) and deleting a subtree (`deleteRecursive`).
 *
 * Requests go out pipelined: ZooKeeper executes one session's requests in the order they were
 * sent, so the creates of `/a`, `/a/b` and `/a/b/c` sent back to back without waiting apply in
 * that order and cost one round trip together.
 */
import { CreateMode } from '../constants.js';
import { InvalidArgumentError, NodeExistsError, NoNodeError, NotEmptyError } from '../errors.js';
import type { ACL } from './acl.js';
import { joinPath, parentPath, validatePath } from '../util/paths.js';
import { validateTimeout } from '../util/abort.js';

/** The calls these helpers make; the `ZooKeeper` class provides them. */
export interface TreeClient {
  create(path: string, data?: null, options?: { mode?: number; acl?: readonly ACL[]; signal?: AbortSignal | undefined; timeout?: number | undefined }): Promise<string>;
  delete(path: string, options?: { signal?: AbortSignal | undefined; timeout?: number | undefined }): Promise<void>;
  exists(path: string, options?: { signal?: AbortSignal | undefined; timeout?: number | undefined }): Promise<unknown>;
  getChildren(path: string, options?: { signal?: AbortSignal | undefined; timeout?: number | undefined }): Promise<string[]>;
}

/** How missing ancestors are created: see {@link ZooKeeper.create}'s `parents`. */
export type ParentsMode = boolean | 'container';

/** Signal and an overall deadline, handed to each request as what is left of it. */
export class Budget {
  readonly #deadline: number | undefined;
  readonly signal: AbortSignal | undefined;

  constructor(options: { signal?: AbortSignal | undefined; timeout?: number | undefined }) {
    validateTimeout(options.timeout);
    this.signal = options.signal;
    this.#deadline = options.timeout === undefined ? undefined : performance.now() + options.timeout;
  }

  /** Options for the next request: the signal, and the time left of the whole call. */
  call(): { signal?: AbortSignal | undefined; timeout?: number | undefined } {
    if (this.#deadline === undefined) return { signal: this.signal };
    return { signal: this.signal, timeout: Math.max(0, this.#deadline - performance.now()) };
  }
}

/** Throws InvalidArgumentError unless `parents` is undefined, a boolean or `'container'`. */
export function validateParents(parents: unknown): void {
  if (parents !== undefined && typeof parents !== 'boolean' && parents !== 'container') {
    throw new InvalidArgumentError('parents', `must be true, false or 'container', got ${String(parents)}`);
  }
}

/** Every proper ancestor of `path` below the root, from the top: `/a/b/c` -> `/a`, `/a/b`. */
export function ancestorsOf(path: string): string[] {
  const out: string[] = [];
  for (let p = parentPath(path); p !== undefined && p !== '/'; p = parentPath(p)) out.unshift(p);
  return out;
}

/**
 * Sends the creates of `paths` (top first) back to back, then `last` (the create the caller
 * wants); resolves when all have answered, with the first ancestor error other than NodeExists
 * (someone made it, maybe us) and `last`'s outcome. ConnectionLoss is such an error: that
 * create's outcome is unknown, so it is never taken for success.
 */
async function createAncestors<T>(zk: Pick<TreeClient, 'create'>, paths: readonly string[], mode: number, acl: readonly ACL[] | undefined, budget: Budget, last: () => Promise<T>): Promise<{ ancestorError: unknown; result: PromiseSettledResult<T> }> {
  const sent = paths.map((p) => zk.create(p, null, { mode, ...(acl ? { acl } : {}), ...budget.call() }));
  const [result, ...settled] = await Promise.allSettled([last(), ...sent]);
  const failed = settled.find((r) => r.status === 'rejected' && !(r.reason instanceof NodeExistsError)) as PromiseRejectedResult | undefined;
  return { ancestorError: failed?.reason, result: result as PromiseSettledResult<T> };
}

/** Attempts of create-parents-then-create when ancestors keep vanishing (deleted concurrently). */
const PARENT_ROUNDS = 3;

/**
 * `create(path, ..., { parents })` after the plain create failed with NoNode: creates the
 * missing ancestors (sent together with `create` itself, in order) and returns what `create`
 * returns. When `create` fails with NoNode, an ancestor's error (ConnectionLoss, NoAuth, ...) is
 * thrown if there is one; otherwise another client deleted an ancestor in between, which is tried
 * again, {@link PARENT_ROUNDS} rounds in all.
 */
export async function createWithParents<T>(zk: TreeClient, path: string, parents: ParentsMode, acl: readonly ACL[] | undefined, budget: Budget, create: () => Promise<T>): Promise<T> {
  const mode = parents === 'container' ? CreateMode.CONTAINER : CreateMode.PERSISTENT;
  const ancestors = ancestorsOf(path);
  for (let round = 1; ; round++) {
    // `create` is called after the ancestors' creates are sent: it is written behind them.
    const { ancestorError, result } = await createAncestors(zk, ancestors, mode, acl, budget, create);
    if (result.status === 'fulfilled') return result.value;
    if (!(result.reason instanceof NoNodeError)) throw result.reason;
    if (ancestorError !== undefined) throw ancestorError;
    if (round >= PARENT_ROUNDS) throw result.reason;
  }
}

/**
 * `ensurePath`: `path` and its missing ancestors, like `mkdir -p`. One read when the path is
 * there; otherwise every create in one round trip. Succeeds when `path` was created or already
 * existed, whatever happened to its ancestors' creates.
 */
export async function ensurePath(zk: Pick<TreeClient, 'create' | 'exists'>, path: string, options: { container?: boolean; acl?: readonly ACL[]; signal?: AbortSignal; timeout?: number }): Promise<void> {
  validatePath(path);
  if (options.container !== undefined && typeof options.container !== 'boolean') throw new InvalidArgumentError('container', 'must be a boolean');
  const budget = new Budget(options);
  if (path === '/' || (await zk.exists(path, budget.call())) !== null) return;
  const mode = options.container ? CreateMode.CONTAINER : CreateMode.PERSISTENT;
  const acl = options.acl;
  for (let round = 1; ; round++) {
    const { ancestorError, result } = await createAncestors(zk, ancestorsOf(path), mode, acl, budget, () => zk.create(path, null, { mode, ...(acl ? { acl } : {}), ...budget.call() }));
    if (result.status === 'fulfilled' || result.reason instanceof NodeExistsError) return;
    if (!(result.reason instanceof NoNodeError)) throw result.reason;
    if (ancestorError !== undefined) throw ancestorError;
    if (round >= PARENT_ROUNDS) throw result.reason;
  }
}

/** Requests of a recursive delete in flight at once. */
const BATCH = 100;
/** Times one node is listed and emptied again when children keep appearing under it (NotEmpty). */
const DELETE_ROUNDS = 5;

async function inBatches<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += BATCH) out.push(...(await Promise.all(items.slice(i, i + BATCH).map(fn))));
  return out;
}

/**
 * `deleteRecursive`: deletes `path` and everything below it, children first, and resolves with
 * the number of nodes this call deleted (0 when `path` did not exist: the wanted end state).
 * Lists the subtree level by level, then deletes from the deepest level up, {@link BATCH}
 * requests at a time. Nodes that others delete meanwhile are skipped; a node that gains children
 * meanwhile is emptied again, {@link DELETE_ROUNDS} times at most, then NotEmptyError.
 * Not atomic: a failure (ConnectionLoss, NoAuth, the deadline) leaves part of the tree deleted;
 * calling it again finishes the work.
 */
export async function deleteRecursive(zk: TreeClient, path: string, options: { signal?: AbortSignal; timeout?: number }): Promise<number> {
  validatePath(path);
  if (path === '/') throw new InvalidArgumentError('path', 'refusing to delete the whole tree (/)');
  return deleteSubtree(zk, path, new Budget(options), 1);
}

async function deleteSubtree(zk: TreeClient, path: string, budget: Budget, round: number): Promise<number> {
  const levels: string[][] = [[path]];
  for (let level = levels[0] as string[]; level.length > 0; ) {
    const children = await inBatches(level, (p) => zk.getChildren(p, budget.call()).then((names) => names.map((c) => joinPath(p, c)), (err: unknown) => (err instanceof NoNodeError ? [] : Promise.reject(err))));
    level = children.flat();
    if (level.length > 0) levels.push(level);
  }
  let deleted = 0;
  const refilled: string[] = [];
  for (const level of levels.reverse()) {
    await inBatches(level, (p) =>
      zk.delete(p, budget.call()).then(
        () => void deleted++,
        (err: unknown) => {
          if (err instanceof NoNodeError) return; // deleted by someone else meanwhile
          if (err instanceof NotEmptyError) return void refilled.push(p);
          throw err;
        },
      ),
    );
    if (refilled.length > 0) break; // its parents would only fail with NotEmpty too
  }
  if (refilled.length === 0) return deleted;
  if (round >= DELETE_ROUNDS) throw new NotEmptyError(`${path} kept gaining children (${DELETE_ROUNDS} rounds); deleted ${deleted} nodes`, { op: 'deleteRecursive', path });
  // Nodes created under a deleted parent's sibling meanwhile: start over from the top.
  return deleted + (await deleteSubtree(zk, path, budget, round + 1));
}
