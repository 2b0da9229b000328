/**
 * The client the recipes are given may come from another copy of `@zk/protocol` than the one
 * this package imports (npm installs two when the app and `@zk/locks` ask for different version
 * ranges). Nothing here compares it by identity: errors are recognised by their brand (see
 * `@zk/protocol`'s errors), and per-client state is keyed by the client object itself. What a
 * client from an older version cannot do is offer the methods the recipes call; such a client is
 * refused before any request is sent, with the reason, rather than failing halfway through an
 * acquire (after its node was created) with "is not a function".
 */
import { InvalidArgumentError, type ZooKeeper } from '@zk/protocol';

/** The client methods the recipes call. */
const METHODS = [
  'create',
  'createWithStat',
  'delete',
  'exists',
  'getData',
  'getChildren',
  'setData',
  'transaction',
  'removeWatches',
  'removeLocalWatch',
  'onStateChange',
  // the quorum proof a lease rests on (issue 21; missing from older versions)
  'holdQuorumProof',
  'awaitQuorumDeadline',
] as const;

/** The numeric properties the recipes read. */
const NUMBERS = ['sessionTimeout', 'expiryDeadline', 'quorumDeadline', 'quorumRenewedBy'] as const;

/** Clients already found complete: the check runs once per client. */
const checked = new WeakSet<object>();

/**
 * Throws {@link InvalidArgumentError} (argument `zk`) unless `zk` has every method and property
 * the recipes use. Cheap after the first call for a client.
 */
export function checkClient(zk: ZooKeeper): void {
  if (checked.has(zk)) return;
  if (typeof zk !== 'object' || zk === null) throw new InvalidArgumentError('zk', `must be a ZooKeeper client of @zk/protocol, got ${zk === null ? 'null' : typeof zk}`);
  const client = zk as unknown as Record<string, unknown>;
  const missing = [...METHODS.filter((m) => typeof client[m] !== 'function').map((m) => `${m}()`), ...NUMBERS.filter((p) => typeof client[p] !== 'number')];
  if (missing.length > 0) {
    throw new InvalidArgumentError(
      'zk',
      `this client lacks ${missing.join(', ')}: it is not a ZooKeeper of the @zk/protocol version @zk/locks depends on. ` +
        'Most likely a second, older copy of @zk/protocol is installed (see `npm ls @zk/protocol`); create the client with the version @zk/locks requires.',
    );
  }
  checked.add(zk);
}
