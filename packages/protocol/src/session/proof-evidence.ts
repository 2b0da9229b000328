/**
 * What the session gives the quorum proof (quorum-proof.ts): which requests' answers are
 * evidence, and the proof's own request, a committed no-op write or a sync, published on zk:proof.
 */
import type { Reply } from '../connection/connection.js';
import { OpCode } from '../constants.js';
import { proofChannel } from '../diagnostics.js';
import { writeMultiRequest } from '../jute/multi.js';
import { writeSyncRequest } from '../jute/proto.js';
import type { JuteWriter } from '../jute/writer.js';

/**
 * The requests whose answer is evidence for the quorum proof: the writes (committed when their
 * reply header says 0; a multi's header says 0 even when an op failed, and it is committed then
 * too, as an error transaction) and sync.
 */
export const PROVES: Partial<Record<number, 'write' | 'sync'>> = {
  [OpCode.create]: 'write',
  [OpCode.create2]: 'write',
  [OpCode.createContainer]: 'write',
  [OpCode.createTTL]: 'write',
  [OpCode.delete]: 'write',
  [OpCode.deleteContainer]: 'write',
  [OpCode.setData]: 'write',
  [OpCode.setACL]: 'write',
  [OpCode.multi]: 'write',
  [OpCode.reconfig]: 'write',
  [OpCode.sync]: 'sync',
};

/** The session as a proof request sees it: its request path (which reports the answer to the proof), its root, and what it publishes. */
export interface ProofSender {
  request(type: number, write: (w: JuteWriter) => void): Promise<Reply<unknown>>;
  readonly chroot: string;
  sessionId(): bigint;
  /** The proof's `proven`, read once the proof has taken the answer in. */
  proven(): number;
}

/**
 * A proof request: a multi of one check of the root (chroot), committed even when the check
 * fails, or a sync of the root. Sent through the session's request path, which reports it to the proof.
 * Resolves with its reply header's err (0: committed); the fenced reads check it (read-fence.ts).
 */
export async function sendProofRequest(session: ProofSender, kind: 'write' | 'sync'): Promise<number> {
  const path = session.chroot === '' ? '/' : session.chroot;
  const sentAt = performance.now();
  // On a channel of its own (zk:proof): operators and the bench see the proof's cost, and counts
  // of the application's requests (zk:request:*) stay what the application sent.
  let err = -4;
  try {
    const reply =
      kind === 'write'
        ? await session.request(OpCode.multi, (w) => writeMultiRequest(w, [{ type: OpCode.check, path, version: -1 }]))
        : await session.request(OpCode.sync, (w) => writeSyncRequest(w, { path }));
    err = reply.err;
    return err;
  } finally {
    // `proven` is read after the proof has taken this answer in (a microtask later).
    if (proofChannel.hasSubscribers) queueMicrotask(() => proofChannel.publish({ sessionId: session.sessionId(), kind, err, durationMs: performance.now() - sentAt, proven: session.proven() }));
  }
}
