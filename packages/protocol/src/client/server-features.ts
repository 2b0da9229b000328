/**
 * The client features that came with ZooKeeper 3.9, and how the client learns, before it sends
 * one, whether the server of the current connection has them:
 * - ZOOKEEPER-4472 (3.9.0): `removeWatches` / `checkWatches` by watch mode, `WatcherType`
 *   Persistent (4) and PersistentRecursive (5);
 * - ZOOKEEPER-4026: a create sent as create2 inside a multi answered with its Stat (3.9.0; also
 *   back-ported to 3.7.2 and 3.8.2, which this client cannot tell from 3.8.0 and so treats as
 *   older: the refusal is conservative there).
 *
 * Why a probe: an older server does not refuse these, it does something else. A 3.8 server takes
 * a create2 inside a multi as a plain create (`MultiOperationRecord.deserialize` decays it) and
 * answers without the Stat, after applying it; and it cannot express "only this mode" in a watch
 * removal. Nothing in the handshake tells the versions apart (3.9's ZOOKEEPER-4492 moved the
 * read-only flag into the records without changing the bytes).
 *
 * The probe: `checkWatches { path: '/', type: Persistent }`. A 3.9 server answers OK or NOWATCHER
 * (`DataTree.containsWatcher`); a 3.5-3.8 server's `WatcherType.fromInt(4)` throws, which
 * `FinalRequestProcessor` answers with MARSHALLINGERROR (keeping the connection; it logs the
 * request at ERROR); a 3.4 server never gets it (the connection answers Unimplemented itself,
 * see connection/probes.ts). It needs no ACL, changes nothing and is sent at most once per
 * connection, only by a call that needs a 3.9 feature.
 */
import { OpCode, WatcherType } from '../constants.js';
import { ErrorCode, fromCode, type ZooKeeperError } from '../errors.js';
import * as proto from '../jute/proto.js';
import type { Endpoint } from '../session/hosts.js';
import type { RequestPath } from './request-path.js';
import type { CallOptions } from './types.js';
import { raceAbort } from '../util/abort.js';

/** The version the features need, for the error's message. */
export const WATCH_MODES_SINCE = '3.9';

/** What a probe's reply code says: true for a 3.9+ server, false for an older one, undefined when it says neither. */
export function hasWatchModes(err: number): boolean | undefined {
  if (err === ErrorCode.OK || err === ErrorCode.NOWATCHER) return true;
  if (err === ErrorCode.MARSHALLINGERROR || err === ErrorCode.UNIMPLEMENTED) return false;
  return undefined;
}

/**
 * The error for a 3.9 feature on an older server: UnimplementedError (code -6),
 * `UNIMPLEMENTED (createWithStat /a): a create's Stat inside a transaction needs ZooKeeper 3.9 or newer; this server is older`.
 */
export function needs39(op: string, path: string | undefined, what: string, legacy: boolean): ZooKeeperError {
  const where = path === undefined ? op : `${op} ${path}`;
  return fromCode(ErrorCode.UNIMPLEMENTED, { op, path }, `UNIMPLEMENTED (${where}): ${what} needs ZooKeeper ${WATCH_MODES_SINCE} or newer; this server is ${legacy ? '3.4' : 'older'}`);
}

/** @internal What one client knows of its current server's 3.9 features. */
export class ServerFeatures {
  readonly #rp: RequestPath;
  /** The answer for one connection, known by its endpoint (each dial makes its own). */
  #known: { readonly host: Endpoint; readonly has: boolean } | undefined;
  #probe: { readonly host: Endpoint; readonly reply: Promise<boolean> } | undefined;
  #watching = false;

  constructor(rp: RequestPath) {
    this.#rp = rp;
  }

  /**
   * Resolves when the server of the current connection has the 3.9 client features; rejects
   * with an UnimplementedError naming `op` and `what` needs 3.9 when it does not (the caller
   * then sends nothing), or with the probe's own error (ConnectionLoss, ...). The caller sends
   * its request right after, in the same tick, so on the connection that was asked.
   */
  async require(op: string, path: string | undefined, what: string, options: CallOptions): Promise<void> {
    if (!(await this.has(op, path, options))) throw needs39(op, path, what, this.#rp.session.serverGeneration() === 'legacy');
  }

  /** Whether the server of the current connection has the 3.9 client features (asked once per connection). */
  async has(op: string, path: string | undefined, options: CallOptions): Promise<boolean> {
    for (let round = 0; round < 3; round++) {
      const host = this.#rp.session.host;
      if (host !== undefined && this.#known?.host === host) return this.#known.has;
      await this.#ask(host, options);
    }
    // The connection changed under every probe: let the caller's request fail as it would.
    throw fromCode(ErrorCode.CONNECTIONLOSS, { op, path, notSent: true }, `CONNECTIONLOSS (${op}${path ? ` ${path}` : ''}): the connection changed while the server's version was asked`);
  }

  async #ask(host: Endpoint | undefined, options: CallOptions): Promise<void> {
    this.#watchStates();
    let probe = this.#probe;
    if (probe === undefined || probe.host !== host || host === undefined) {
      const write = (w: Parameters<typeof proto.writeCheckWatchesRequest>[0]) => proto.writeCheckWatchesRequest(w, { path: '/', type: WatcherType.Persistent });
      // Shared by the callers of this connection: bounded by the timeout, not by one caller's signal.
      const reply = this.#rp.send(OpCode.checkWatches, 'checkWatches', '/', write, undefined, { timeout: options.timeout }).then((r) => {
        const has = hasWatchModes(r.err);
        if (has === undefined) throw fromCode(r.err, { op: 'checkWatches', path: '/' });
        return has;
      });
      probe = { host: host as Endpoint, reply };
      this.#probe = probe;
      const done = probe;
      reply.then(
        (has) => {
          if (done.host !== undefined && this.#probe === done) this.#known = { host: done.host, has };
        },
        () => undefined,
      ).finally(() => {
        if (this.#probe === done) this.#probe = undefined;
      });
    }
    // Known for the probed connection once this resolves (the then above was attached first).
    await raceAbort(probe.reply, options.signal, undefined, { op: 'checkWatches', path: '/' });
  }

  // A server may be restarted on a newer (or older) version behind the same address: what was
  // learnt is forgotten whenever the session leaves the connected state.
  #watchStates(): void {
    if (this.#watching) return;
    this.#watching = true;
    this.#rp.session.onState((state) => {
      if (state !== 'connected' && state !== 'connectedReadOnly') this.#known = undefined;
    });
  }
}
