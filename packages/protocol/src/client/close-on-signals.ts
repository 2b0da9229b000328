/**
 * closeOnSignals: end the sessions of a process stopped with Ctrl-C (SIGINT) or SIGTERM, so what
 * they held passes on at once instead of after the session timeout.
 *
 * Without it, Node's default action for SIGINT and SIGTERM kills the process without a word to
 * the server: its ephemeral nodes (lock and queue nodes, leader candidacies, permits) stay until
 * the server expires the session, a whole session timeout T later (29-30 s at T = 30 s), and
 * everyone waiting for them waits that long. A `closeSession` request deletes them at once.
 *
 * Opt-in, and in `@zk/protocol` rather than `@zk/locks`: it acts on sessions, not on locks (every
 * ephemeral node, a recipe's or the application's, goes with its session), and a library must not
 * take a process's signals on its own (adding a listener turns off Node's default exit).
 * Node's conventions are kept: the process still exits (128 + the signal's number, the code a
 * shell reports for a process killed by that signal), a second signal exits at once without
 * waiting for the closes, and the listeners never keep the process alive.
 */
import { constants } from 'node:os';
import { InvalidArgumentError } from '../errors/client-errors.js';

/** Anything with a `close()` that ends its session: a `ZooKeeper`, `@zk/locks`' `RenewingClient`. */
export interface Closable {
  close(): Promise<void>;
}

/** Options of {@link closeOnSignals}. */
export interface CloseOnSignalsOptions {
  /** The signals that close the clients (default `['SIGINT', 'SIGTERM']`). */
  signals?: readonly NodeJS.Signals[];
  /**
   * How long the closes may take before the process exits anyway, ms (default 2000): a client
   * that cannot reach a server cannot end its session, which then expires after its timeout.
   */
  timeout?: number;
  /**
   * Exit once the clients are closed (default true), with 128 + the signal's number. `false`:
   * close them and leave the exit to the application's own listener for the signal.
   */
  exit?: boolean;
}

/** What {@link closeOnSignals} returns: disposing it removes its signal listeners. */
export interface SignalCloser extends Disposable {
  /** The signals listened to. */
  readonly signals: readonly NodeJS.Signals[];
  /** Removes the listeners (also `using closer = closeOnSignals(...)`); idempotent. */
  dispose(): void;
}

const DEFAULT_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

/**
 * Closes `clients` when the process gets one of `signals` (default SIGINT and SIGTERM), then
 * exits with 128 + the signal's number (130 for SIGINT, 143 for SIGTERM): their ephemeral nodes
 * (held locks, queue places, leadership) are deleted by the server at once, instead of a session
 * timeout after the process died. A second signal while closing exits at once. The listeners do
 * not keep the process alive; dispose of the result to remove them.
 *
 * @example
 * ```ts
 * const zk = await ZooKeeper.connect('127.0.0.1:2181');
 * using _ = closeOnSignals(zk);                      // or closeOnSignals(zk, other, { signals: ['SIGINT'] })
 * await using lease = await new Mutex(zk, '/locks/nightly').acquire();
 * await job(); // Ctrl-C here: the lock passes on at once, the process exits 130
 * ```
 */
export function closeOnSignals(...args: Array<Closable | CloseOnSignalsOptions>): SignalCloser {
  const clients: Closable[] = [];
  let options: CloseOnSignalsOptions = {};
  args.forEach((a, i) => {
    if (a !== null && typeof a === 'object' && typeof (a as Closable).close === 'function') clients.push(a as Closable);
    else if (i === args.length - 1 && a !== null && typeof a === 'object') options = a as CloseOnSignalsOptions;
    else throw new InvalidArgumentError('clients', `argument ${i} has no close() method (options go last)`);
  });
  if (clients.length === 0) throw new InvalidArgumentError('clients', 'give at least one client to close');
  const signals = [...(options.signals ?? DEFAULT_SIGNALS)];
  for (const sig of signals) {
    if (typeof sig !== 'string' || typeof constants.signals[sig as keyof typeof constants.signals] !== 'number') throw new InvalidArgumentError('signals', `${String(sig)} is not a signal`);
  }
  const timeout = options.timeout ?? 2000;
  if (!Number.isFinite(timeout) || timeout < 0) throw new InvalidArgumentError('timeout', `must be a number of ms >= 0, got ${String(timeout)}`);
  const exit = options.exit ?? true;
  const code = (sig: NodeJS.Signals) => 128 + (constants.signals[sig as keyof typeof constants.signals] ?? 0);

  let closing = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (closing) {
      // A second Ctrl-C: the user does not want to wait for the closes.
      if (exit) process.exit(code(sig));
      return;
    }
    closing = true;
    let timer: NodeJS.Timeout | undefined;
    const bounded = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeout)));
    void Promise.race([Promise.allSettled(clients.map((c) => c.close())), bounded]).then(() => {
      clearTimeout(timer);
      if (exit) process.exit(code(sig));
    });
  };
  for (const sig of signals) process.on(sig, onSignal);
  let disposed = false;
  const dispose = () => {
    if (disposed) return;
    disposed = true;
    for (const sig of signals) process.off(sig, onSignal);
  };
  return { signals, dispose, [Symbol.dispose]: dispose };
}
