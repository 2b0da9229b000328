/**
 * The session's proof of life, watched for the leases it holds while it is connected: one timer
 * per session however many leases. {@link leaseDeadline} is the earliest moment the ensemble may
 * expire the session: by the quorum proof (`zk.quorumDeadline`, evidence that passed through the
 * leader, which the monitor keeps advancing while it has subscribers), and never later than one
 * timeout after the newest request any server answered (`zk.expiryDeadline`). A connection can
 * stay up while that moment comes near: a follower cut off from its leader keeps answering for
 * syncLimit ticks while the leader no longer hears of the session, and a server working through a
 * deep backlog answers only requests sent long ago. Every lease is told when the deadline is less
 * than a sixth of the timeout away while connected, as it is while suspended (lease.ts), so its
 * signal aborts before any other client can take the lock.
 */
import type { ZooKeeper } from '@zk/protocol';

/** Told once the session's proof has grown too old, with why. */
type AtRisk = (why: string) => void;

interface Monitor {
  readonly subscribers: Set<AtRisk>;
  timer: NodeJS.Timeout | undefined;
  off: () => void;
  /** Releases the session's quorum proof. */
  unhold: () => void;
}

/**
 * The earliest moment the ensemble may expire `zk`'s session, by what we can prove: the quorum
 * proof, capped by the newest answer of any server.
 */
export function leaseDeadline(zk: ZooKeeper): number {
  // leaseProof 'off': the server's answers alone, as Curator (the proof is not kept).
  return zk.leaseProof === 'off' ? zk.expiryDeadline : Math.min(zk.quorumDeadline, zk.expiryDeadline);
}

/**
 * Before a lease is handed out: waits (within `signal`) until {@link proofIsFresh}, so no lease is
 * born at risk or bound to become so. Immediate when the session's proof is fresh (a recent
 * handshake, the proof loop running for earlier leases, or a first lease on a session whose
 * pings the next proof request can confirm in time); else one proof cycle, or two.
 */
export async function freshProof(zk: ZooKeeper, signal: AbortSignal): Promise<void> {
  if (zk.leaseProof === 'off') return;
  while (!proofIsFresh(zk)) {
    signal.throwIfAborted();
    const t = zk.sessionTimeout;
    const now = performance.now();
    const target = Math.max(now + t / 4, zk.quorumRenewedBy + t / 6);
    // What is short is the answers' own deadline (no reply since the handshake), which a proof
    // request would not wait for: handed out, as the monitor watches both.
    if (zk.quorumDeadline > target) return;
    await zk.awaitQuorumDeadline(target, { signal });
  }
}

/**
 * Whether a lease handed out now is born safe, so {@link freshProof} need not wait: its proof has
 * at least a quarter of the timeout to run (it is at risk below a sixth), and the session's next
 * proof request can renew it before that sixth (`zk.quorumRenewedBy`: it proves something newer
 * only from half a tick after the first answer newer than the proof, and then needs a round
 * trip). A lease granted without that room, on a session that only pinged since an
 * old proof, could find no request to renew it in time and be lost seconds after it was granted.
 */
export function proofIsFresh(zk: ZooKeeper): boolean {
  const t = zk.sessionTimeout;
  const now = performance.now();
  const deadline = leaseDeadline(zk);
  if (deadline <= now + t / 4) return false;
  return zk.leaseProof === 'off' || zk.quorumRenewedBy < deadline - t / 6;
}

const monitors = new WeakMap<ZooKeeper, Monitor>();

/**
 * Calls `atRisk` when, while `zk` is connected, its {@link leaseDeadline} comes within a sixth of
 * the session timeout (a lease also calls it for every other reason it is lost: the caller must be
 * idempotent). Returns the unsubscribe function.
 */
export function watchProof(zk: ZooKeeper, atRisk: AtRisk): () => void {
  let monitor = monitors.get(zk);
  if (monitor === undefined) {
    const m: Monitor = { subscribers: new Set(), timer: undefined, off: () => {}, unhold: NOTHING_HELD };
    m.off = zk.onStateChange(() => arm(zk, m));
    monitors.set(zk, (monitor = m));
  }
  const m = monitor;
  if (m.unhold === NOTHING_HELD && zk.leaseProof !== 'off') m.unhold = zk.holdQuorumProof();
  m.subscribers.add(atRisk);
  if (m.timer === undefined) arm(zk, m);
  // The last subscriber gone, the proof is let go at once (the session sends nothing more for
  // it), while the timer and the state listener stay until the timer fires with no subscriber
  // (arm() then removes the monitor): a lease taken right after the last one ended finds them
  // set, and holding the proof again costs a counter.
  return () => {
    if (!m.subscribers.delete(atRisk) || m.subscribers.size > 0) return;
    m.unhold();
    m.unhold = NOTHING_HELD;
    // No timer will come to retire the monitor (not connected, or the proof ran out): now.
    if (m.timer === undefined) arm(zk, m);
  };
}

const NOTHING_HELD = (): void => {};

function arm(zk: ZooKeeper, m: Monitor): void {
  if (m.timer !== undefined) clearTimeout(m.timer);
  m.timer = undefined;
  if (m.subscribers.size === 0) {
    m.off();
    m.unhold();
    m.unhold = NOTHING_HELD;
    if (monitors.get(zk) === m) monitors.delete(zk);
    return;
  }
  if (zk.state !== 'connected' && zk.state !== 'connectedReadOnly') return;
  const margin = Math.floor(zk.sessionTimeout / 6);
  const left = leaseDeadline(zk) - margin - performance.now();
  if (left > 0) {
    m.timer = setTimeout(() => arm(zk, m), Math.ceil(left));
    m.timer.unref();
    return;
  }
  const quorum = zk.quorumDeadline <= zk.expiryDeadline;
  const what = quorum ? 'no write committed through the quorum confirmed the session' : 'no reply dated';
  const why = `${what} within ${Math.round(zk.sessionTimeout - margin)} ms while connected${quorum ? ' (the server may be cut off from the leader)' : ' (the server is answering only old requests)'}; the ensemble may expire the session in ${Math.max(0, Math.round(leaseDeadline(zk) - performance.now()))} ms`;
  for (const s of [...m.subscribers]) s(why);
}
