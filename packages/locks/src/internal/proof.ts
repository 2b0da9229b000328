/**
 * The session's proof of life, watched for the leases it holds while it is connected: one timer
 * per session however many leases. `zk.expiryDeadline` is the earliest moment the ensemble may
 * expire the session (one timeout after the send time of the newest request a server answered).
 * A connection can stay up while that moment comes near: a server working through a deep
 * backlog of the session's requests keeps answering, but only requests sent long ago (the
 * protocol keeps such a connection, see its liveness rule). Every lease is told when the
 * deadline is less than a sixth of the timeout away while connected, as it is while suspended
 * (lease.ts), so its signal still aborts before any other client can take the lock.
 */
import type { ZooKeeper } from '@zk/protocol';

/** Told once the session's proof has grown too old, with why. */
type AtRisk = (why: string) => void;

interface Monitor {
  readonly subscribers: Set<AtRisk>;
  timer: NodeJS.Timeout | undefined;
  off: () => void;
}

const monitors = new WeakMap<ZooKeeper, Monitor>();

/**
 * Calls `atRisk` when, while `zk` is connected, its expiry deadline comes within a sixth of the
 * session timeout (a lease also calls it for every other reason it is lost: the caller must be
 * idempotent). Returns the unsubscribe function.
 */
export function watchProof(zk: ZooKeeper, atRisk: AtRisk): () => void {
  let monitor = monitors.get(zk);
  if (monitor === undefined) {
    const m: Monitor = { subscribers: new Set(), timer: undefined, off: () => {} };
    m.off = zk.onStateChange(() => arm(zk, m));
    monitors.set(zk, (monitor = m));
  }
  const m = monitor;
  m.subscribers.add(atRisk);
  if (m.timer === undefined) arm(zk, m);
  return () => {
    m.subscribers.delete(atRisk);
    if (m.subscribers.size > 0) return;
    if (m.timer !== undefined) clearTimeout(m.timer);
    m.timer = undefined;
    m.off();
    monitors.delete(zk);
  };
}

function arm(zk: ZooKeeper, m: Monitor): void {
  if (m.timer !== undefined) clearTimeout(m.timer);
  m.timer = undefined;
  if (m.subscribers.size === 0 || (zk.state !== 'connected' && zk.state !== 'connectedReadOnly')) return;
  const margin = Math.floor(zk.sessionTimeout / 6);
  const left = zk.expiryDeadline - margin - performance.now();
  if (left > 0) {
    m.timer = setTimeout(() => arm(zk, m), Math.ceil(left));
    m.timer.unref();
    return;
  }
  const why = `no reply dated within ${Math.round(zk.sessionTimeout - margin)} ms while connected (the server is answering only old requests); it may expire the session in ${Math.max(0, Math.round(zk.expiryDeadline - performance.now()))} ms`;
  for (const s of [...m.subscribers]) s(why);
}
