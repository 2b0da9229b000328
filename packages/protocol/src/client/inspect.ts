/**
 * How a client looks in `util.inspect` (console.log, the REPL, a debugger, an error reporter that
 * dumps the objects around an error): the session's id, state, server and timeout, never its
 * password. Without this, `inspect(zk, { showHidden: true, getters: true })` walks the class's
 * getters and prints `sessionPassword`, with which anyone who sees the log can resume the session
 * or close it (and free every lock it holds) from another client.
 */
import type { InspectOptionsStylized, inspect as utilInspect } from 'node:util';
import { hex64 } from '../util/hex.js';

/** The view a client gives `util.inspect`; `sessionPassword` is left out on purpose. */
interface ClientView {
  readonly sessionId: bigint;
  readonly state: string;
  readonly server: { host: string; port: number } | undefined;
  readonly sessionTimeout: number;
}

/** Node's `util.inspect.custom` (a registered symbol: no import of node:util needed). */
export const inspectCustom = Symbol.for('nodejs.util.inspect.custom');

/** `util.inspect.custom` for the client: a summary object, formatted with the caller's options. */
export function inspectClient(this: ClientView, depth: number, options: InspectOptionsStylized, inspect: typeof utilInspect): string {
  const server = this.server;
  const view = {
    sessionId: `0x${hex64(this.sessionId)}`,
    state: this.state,
    server: server === undefined ? undefined : `${server.host}:${server.port}`,
    sessionTimeout: this.sessionTimeout,
  };
  if (depth < 0) return options.stylize('[ZooKeeper]', 'special');
  return `ZooKeeper ${inspect(view, { ...options, depth: options.depth === null ? null : (options.depth ?? 2) - 1, showHidden: false, getters: false })}`;
}
