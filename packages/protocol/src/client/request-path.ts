/**
 * The client's request path: a call becomes a request under the client-wide retry policy, and
 * its reply the body, or a typed error naming the operation, the path and, where one is known,
 * the fix. Every operation of the `ZooKeeper` class goes through one instance of it.
 */
import { ErrorCode, fromCode, PacketTooLargeError, ZooKeeperError } from '../errors.js';
import type { JuteReader } from '../jute/reader.js';
import type { JuteWriter } from '../jute/writer.js';
import type { Reply } from '../connection/connection.js';
import { SINCE_VERSION } from '../connection/generation.js';
import type { Session } from '../session/session.js';
import { isConnected } from '../session/state.js';
import { parentPath, stripChroot } from '../util/paths.js';
import { needsNewerServer } from './legacy.js';
import type { ResolvedOptions } from './options.js';
import { sendRequest } from './requests.js';
import { readPlan, sendPlanned, type ConsistencyOptions } from './consistency.js';
import { ReadFence } from '../session/read-fence.js';
import { withRetryPolicy } from './retry-policy.js';
import type { CallOptions } from './types.js';

/** @internal One client's session, settings and chroot, and the way its calls become requests. */
export class RequestPath {
  readonly session: Session;
  readonly options: ResolvedOptions;
  readonly chroot: string;
  /** The fenced reads' batching (the `consistency` and `after` read options; consistency.ts). */
  readonly fence: ReadFence;

  constructor(session: Session, options: ResolvedOptions) {
    this.session = session;
    this.options = options;
    this.chroot = options.chroot;
    this.fence = new ReadFence({ connected: () => isConnected(session.state), waitConnected: () => session.waitConnected(), send: (kind) => session.proofRequest(kind) });
  }

  /**
   * Sends a request and returns the raw reply (err not turned into an exception), under the
   * client's retry policy (`once`: exactly one attempt, for callers that apply it themselves).
   * `batchSize`: a multi's or multiRead's number of operations, for its trace.
   */
  async rawRequest<T>(op: number, opName: string, path: string | undefined, write: ((w: JuteWriter) => void) | undefined, read: ((r: JuteReader) => T) | undefined, options: CallOptions, once = false, batchSize?: number): Promise<Reply<T>> {
    const policy = this.options.retry;
    if (policy !== undefined && !once) return withRetryPolicy(policy, options, this.options.requestTimeout, (o) => this.rawRequest(op, opName, path, write, read, { ...options, ...o }, true, batchSize));
    const notSent = this.#unsendable();
    try {
      return await this.send(op, opName, path, write, read, options, false, batchSize);
    } catch (err) {
      throw withContext(err, opName, path, notSent);
    }
  }

  /** True when a request made now fails without being sent (not connected, `whileDisconnected: 'fail'`). */
  #unsendable(): boolean {
    return this.options.whileDisconnected === 'fail' && !isConnected(this.session.state);
  }

  /**
   * One request as it is: no retry policy, the reply's error code not thrown. A read with a
   * `consistency` or `after` (or the client's `readConsistency`) goes behind its fence (consistency.ts).
   */
  send<T>(op: number, opName: string, path: string | undefined, write: ((w: JuteWriter) => void) | undefined, read: ((r: JuteReader) => T) | undefined, options: CallOptions & ConsistencyOptions, coalesce = false, batchSize?: number): Promise<Reply<T>> {
    const plan = readPlan(op, options, this.options.readConsistency, this.session.lastZxid);
    const plain = () => sendRequest(this.session, this.options, op, opName, path, write, read, options, coalesce, batchSize);
    if (plan === undefined) return plain();
    const timeout = options.timeout ?? this.options.requestTimeout;
    return sendPlanned(plan, { fence: this.fence, failsUnsent: this.#unsendable(), send: plain, options, timeout, context: { op: opName, ...(path ? { path } : {}) } });
  }

  /**
   * A request whose reply's error is thrown as a typed error; resolves with the reply's body.
   * Under the client's retry policy when it has one (client/retry-policy.ts). `coalesce`: a
   * watch-less getData or getChildren, which coalesceReads may batch.
   */
  // Not an async function: one promise (the `then`) instead of an async frame and its await,
  // on the path every request takes.
  call<T>(op: number, opName: string, path: string | undefined, write: ((w: JuteWriter) => void) | undefined, read: ((r: JuteReader) => T) | undefined, options: CallOptions, coalesce = false): Promise<T> {
    const policy = this.options.retry;
    if (policy === undefined) return this.#callOnce(op, opName, path, write, read, options, coalesce);
    return withRetryPolicy(policy, options, this.options.requestTimeout, (o) => this.#callOnce(op, opName, path, write, read, { ...options, ...o }, coalesce));
  }

  /**
   * Like {@link call}, resolving with the whole reply: the body and the reply header's `zxid` (the
   * server's last applied transaction when it answered: what a causal token names).
   */
  callReply<T>(op: number, opName: string, path: string | undefined, write: ((w: JuteWriter) => void) | undefined, read: ((r: JuteReader) => T) | undefined, options: CallOptions, coalesce = false): Promise<Reply<T>> {
    const policy = this.options.retry;
    const once = (o: CallOptions) => this.#callOnce(op, opName, path, write, read, o, coalesce, true) as unknown as Promise<Reply<T>>;
    if (policy === undefined) return once(options);
    return withRetryPolicy(policy, options, this.options.requestTimeout, (o) => once({ ...options, ...o }));
  }

  // `whole`: resolve with the reply rather than its body (callReply).
  #callOnce<T>(op: number, opName: string, path: string | undefined, write: ((w: JuteWriter) => void) | undefined, read: ((r: JuteReader) => T) | undefined, options: CallOptions, coalesce: boolean, whole = false): Promise<T> {
    let sent: Promise<Reply<T>>;
    const notSent = this.#unsendable();
    try {
      sent = this.send(op, opName, path, write, read, options, coalesce);
    } catch (err) {
      return Promise.reject(err);
    }
    return sent.then(
      (reply) => {
        if (reply.err !== 0) throw this.#serverError(reply.err, opName, path, op);
        return (whole ? reply : reply.body) as T;
      },
      (err: unknown) => {
        throw withContext(err, opName, path, notSent);
      },
    );
  }

  /**
   * The typed error of a reply, with the fix where one is known: Unimplemented names the server
   * version the operation needs; a create's NoNode names the missing parent (or the chroot,
   * directly below it) and `{ parents: true }`; NoNode under a chroot names it; NoAuth names
   * where credentials come from.
   */
  #serverError(code: number, op: string, path: string | undefined, opCode?: number): ZooKeeperError {
    const since = code === ErrorCode.UNIMPLEMENTED && opCode !== undefined ? SINCE_VERSION.get(opCode) : undefined;
    if (since !== undefined) return needsNewerServer(op, path, since, this.session.serverGeneration() === 'legacy');
    if (path === undefined) return fromCode(code, { op, path });
    if (code === ErrorCode.NOAUTH) {
      return fromCode(code, { op, path }, `NOAUTH (${op} ${path}): the node's ACL does not grant this session (credentials come from the \`auth\` connect option or zk.addAuth())`);
    }
    if (code !== ErrorCode.NONODE) return fromCode(code, { op, path });
    const under = this.chroot === '' ? '' : ` under the chroot ${this.chroot}`;
    if (op !== 'create') return under === '' ? fromCode(code, { op, path }) : fromCode(code, { op, path }, `NONODE (${op} ${path})${under}`);
    // A create's NoNode is its parent's (or the chroot's, directly below it).
    const parent = parentPath(path);
    const detail =
      parent === '/' && this.chroot !== ''
        ? `: the chroot ${this.chroot} does not exist (create it, or connect with { createChroot: true })`
        : `: its parent ${parent} does not exist${under} (create it first, or pass { parents: true })`;
    return fromCode(code, { op, path }, `NONODE (${op} ${path})${detail}`);
  }

  /** A path the server sent, as the caller sees it (the chroot stripped). */
  strip(serverPath: string | null): string {
    return stripChroot(this.chroot, serverPath ?? '');
  }
}

/**
 * A connection-level error (ConnectionLoss when the socket drops, SessionExpired, ...) is made
 * without knowing the request: the same class again, naming the operation and path, whether the
 * request was sent, and the original as its cause. Errors that already name them pass through.
 */
function withContext(err: unknown, op: string, path: string | undefined, notSent: boolean): unknown {
  if (err instanceof PacketTooLargeError && err.op === undefined) return new PacketTooLargeError(err.size, err.limit, { direction: err.direction, op, path });
  if (!(err instanceof ZooKeeperError) || err.op !== undefined) return err;
  return fromCode(err.code, { op, path, cause: err, notSent: notSent || err.notSent }, `${err.message} (${op}${path ? ` ${path}` : ''})`);
}
