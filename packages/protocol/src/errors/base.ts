/**
 * The base class of the server errors, {@link ZooKeeperError}, and the brand every error class
 * of this package carries (see util/brand.ts).
 */
import { brandClass } from '../util/brand.js';
import { ErrorCode, errorCodeName } from './codes.js';

/** The key every copy and version of this package brands its error classes under. */
const ERROR_BRAND = Symbol.for('@zk/protocol:error');

/** Brands an error class of this package as `name`, for `instanceof` across copies (see util/brand.ts). */
export function brandError(cls: abstract new (...args: never[]) => Error, name: string): void {
  brandClass(ERROR_BRAND, cls, name);
}

/** Where an error happened, attached by the client. */
export interface ErrorContext {
  /** The operation (`'create'`, `'getData'`, `'multi'`, ...). */
  op?: string | undefined;
  /** The path the operation concerned, as the caller gave it (chroot not included). */
  path?: string | undefined;
  /** The underlying error. */
  cause?: unknown;
  /** True when the request never left the client (see {@link ZooKeeperError.notSent}). */
  notSent?: boolean | undefined;
  /**
   * Overrides what the code says of {@link ZooKeeperError.isRetryable}: the client sets it false
   * on a connect that failed for good (every host not a ZooKeeper server, or not found).
   */
  retryable?: boolean | undefined;
}

/**
 * An error with a ZooKeeper error code, raised by the server or, for connection loss and
 * session expiry, by the client on the server's behalf. Each code has its own subclass, named
 * after the Java client's exception ({@link ErrorCode}.NONODE, `NoNodeException`:
 * {@link NoNodeError}), which {@link fromCode} gives for a code; a code this client does not
 * know gives a plain ZooKeeperError. A failed transaction is a {@link TransactionError}, whose
 * `code` is the failing operation's.
 *
 * `instanceof` recognises the errors of every copy of `@zk/protocol` in the process (two
 * installed versions, or the bundled entry next to tsc's modules): every class is branded under
 * `Symbol.for('@zk/protocol:error')`. A subclass of your own is matched as usual, by its
 * prototype chain.
 *
 * @example
 * ```ts
 * try { await zk.delete('/a') } catch (e) {
 *   if (e instanceof NoNodeError) { ... }             // by class
 *   if (e instanceof ZooKeeperError && e.code === ErrorCode.NONODE) { ... } // by code
 *   if (e instanceof ZooKeeperError && e.isRetryable) { ... } // by kind: see retry() and isSafeToRetry()
 * }
 * ```
 */
export class ZooKeeperError extends Error {
  static {
    brandError(this, 'ZooKeeperError');
  }
  /** The class's name (`'ZooKeeperError'`, `'NoNodeError'`, ...), as each subclass sets it. */
  override name = 'ZooKeeperError';
  /** The numeric code (`ErrorCode.NONODE` is -101). */
  readonly code: number;
  /** The code's Java name (`'NONODE'`), or `'UNKNOWN(<n>)'` for a code this client does not know. */
  readonly codeName: string;
  /** The operation that failed (`'create'`, `'getData'`, `'multi'`, ...), when known. */
  readonly op: string | undefined;
  /** The path that operation concerned, as the caller gave it (chroot not included), when known. */
  readonly path: string | undefined;
  /**
   * True when the request was never sent (the client was not connected when it was made, and
   * `whileDisconnected` is `'fail'`; or it waited behind the multiRead probe and the connection
   * closed first, which the client itself answers by sending it again once connected, within
   * the call's deadline): it certainly was not applied, so sending it again is safe whatever it
   * is. False when unknown.
   */
  readonly notSent: boolean;
  readonly #retryable: boolean | undefined;

  /**
   * @param code A ZooKeeper error code ({@link ErrorCode}); any number is kept as it is.
   * @param message Replaces the default message, which is the code's name and where it happened (`NONODE (delete /a)`).
   * @param context The operation, the path, the `cause`, and whether the request was sent.
   */
  constructor(code: number, message?: string, context: ErrorContext = {}) {
    const codeName = errorCodeName(code);
    const where = [context.op, context.path].filter(Boolean).join(' ');
    super(message ?? `${codeName}${where ? ` (${where})` : ''}`, context.cause === undefined ? undefined : { cause: context.cause });
    this.code = code;
    this.codeName = codeName;
    this.op = context.op;
    this.path = context.path;
    this.notSent = context.notSent === true;
    this.#retryable = context.retryable;
  }

  /**
   * True when the same request may succeed if sent again once the client is connected:
   * connection loss, the call's deadline (RequestTimeout), operation timeout, throttling, a
   * session moved. A retry of a write after
   * connection loss may apply it twice: the caller decides; this library never does it silently.
   * False for a connect that failed for good, though its code is ConnectionLoss: every host
   * answered as another kind of server, or its name does not exist (repeating cannot help).
   */
  get isRetryable(): boolean {
    return this.#retryable ?? retryable.has(this.code);
  }
}

const retryable = new Set<number>([
  ErrorCode.CONNECTIONLOSS,
  ErrorCode.OPERATIONTIMEOUT,
  ErrorCode.SESSIONMOVED,
  ErrorCode.THROTTLEDOP,
  ErrorCode.REQUESTTIMEOUT,
]);
