/**
 * Evidence that the quorum, not only the server we talk to, still counts the session alive.
 *
 * Why a server's answer is not enough (ZooKeeper 3.8's source; design.md §9): a follower answers
 * pings and reads by itself and only records the touch in a local table
 * (`LearnerSessionTracker.touchSession`); the touches reach the leader inside the follower's
 * replies to the leader's PINGs, sent every tickTime/2 (`Leader.lead`, `Learner.ping`), and only
 * the leader's `SessionTrackerImpl` expires sessions, one timeout after the last touch it received.
 * A follower cut off from the leader keeps answering for syncLimit ticks while the leader expires
 * its clients' sessions.
 *
 * **A committed write** proves something: it needs the leader and a quorum of acks, so an
 * isolated server of either kind cannot commit it. And everything the follower sent the leader
 * before forwarding the write (its ping replies, with their touches) reached the leader before
 * the write did, on the same ordered stream. The leader pings each follower every tickTime/2, so
 * if a request A of ours was answered at least `confirmAfter` (tick/2 plus a margin for ping
 * jitter) before we sent write W, the follower answered a ping between touching A and
 * forwarding W: the leader touched the session after A was sent, and cannot expire it before A's
 * send time plus the timeout. A committed W thus *confirms* every such A: the proof is the
 * newest confirmed send time. Every write of the session counts (err 0 in the reply header: a
 * lock's create and delete, a fenced write, the application's own); when none came for a while,
 * the proof sends its own, a multi of one `check` of the chroot's root with any version: a
 * committed transaction that changes nothing (even a failed check is committed as an error
 * transaction; PrepRequestProcessor), one fsync on a quorum.
 *
 * **A `sync`** travels the same way (a follower forwards it to its leader on the stream that
 * carries its ping replies, and holds the session's later requests until the leader answers) but
 * writes nothing, so it does not prove that the leader still has a quorum. An isolated leader
 * answers syncs until it notices it lost its followers: it counts a follower as synced until
 * syncLimit ticks after that follower's last packet, checked on its tick, so at most
 * (syncLimit + 1) ticks after the cut (`Leader.lead`, `LearnerHandler.tickOfNextAckDeadline`);
 * the followers stop waiting for it syncLimit ticks after its last ping, which came at most half
 * a tick before the cut (`Learner`'s socket timeout), and elect a successor no sooner. A sync the
 * old leader answers therefore comes at most 1.5 ticks after its successor may have started, and
 * a new leader restarts every session's clock when it starts (`SessionTrackerImpl` is built anew
 * with each session's full timeout). So a sync sent at S proves the send time of the requests it
 * confirms, but never more than S - `syncLag` (1.5 ticks plus a margin for a late leader thread):
 * a proof about a tick older than a write's, which costs nothing in the log. It pays when T is
 * many ticks; at T = 2 ticks it proves nothing and the writes are used. A leader answers its own
 * clients' syncs without asking anyone (`CommitProcessor` matches syncs only on followers), so a
 * leader frozen (SIGSTOP, a long GC) past syncLimit ticks answers a sync queued meanwhile after it
 * wakes, long after its successor started; what that sync confirms is still safe, because it
 * confirms only answers that came `confirmAfter` (more than the half tick the woken leader needs
 * to notice it lost its quorum) before the sync was sent, and a frozen server answered nothing
 * while frozen: the confirmed request was sent before the freeze, so before the successor began.
 *
 * One more proof needs no request: a handshake on a read-write server (a new session is created
 * by the leader, a resumed one is revalidated by it: `Learner.validateSession`, REVALIDATE, which
 * touches the session), dated by the handshake's send time.
 *
 * Assumptions, stated in the README: the server's tick is at most `serverTickTime` (default T/2,
 * which the server's default minimum session timeout of 2 ticks guarantees); the leader's pings
 * reach the follower at least every `confirmAfter`; global sessions (`localSessionsEnabled`
 * false, the default); client and server clocks advance at the same rate.
 */
import { MAX_PING_INTERVAL } from '../connection/liveness.js';
import { InvalidArgumentError } from '../errors.js';

/**
 * How a session keeps the quorum's word that it is alive while leases rest on it:
 * - `'auto'`: syncs where a known `serverTickTime` lets them go no more often than the idle pings
 *   (every T/3; a tick of at most about T/4.7), writes otherwise: the fewest transactions that
 *   touch the session no more often than Curator's pings do;
 * - `'write'`: committed writes (the session's own, or a no-op multi when none came);
 * - `'sync'`: syncs (needs `serverTickTime`); writes when the negotiated timeout leaves a sync no room;
 * - `'off'`: no proof: a lease trusts its server's answers, as Curator does.
 */
export type LeaseProofMode = 'auto' | 'write' | 'sync' | 'off';

/** The proof's timing, from the negotiated timeout T. */
export interface QuorumProofTiming {
  /** How long before a write or sync the requests it confirms must have been answered, ms. */
  readonly confirmAfter: number;
  /** How far before its send time a sync proves at most, ms (see the file comment). */
  readonly syncLag: number;
  /** What the proof sends when the session sent nothing that proves; undefined when off. */
  readonly kind: 'write' | 'sync' | undefined;
  /** The longest the proof lets pass between two requests that prove, ms. */
  readonly every: number;
  /**
   * Whether any period keeps a lease's proof ahead of its at-risk line: false when the tick is
   * so much of T (a `serverTickTime` from about 0.9 T) that even back-to-back writes confirm
   * answers too old (always true when off).
   */
  readonly possible: boolean;
}

/**
 * The timing for timeout `t`, `mode` and a server tick of at most `serverTickTime` (default t/2).
 *
 * The leases call the session at risk when its proof is 5T/6 old (internal/proof.ts in
 * @zk/locks). A proof request sent every E confirms the answer to the one before it (when
 * E >= confirmAfter plus a round trip; else one k periods back), so just before the next one
 * commits the proof is E + max(kE, lag) old, lag being 0 for a write and `syncLag` for a sync.
 * E is the largest period keeping that, plus a round-trip allowance `A` = T/20 twice, under
 * 5T/6 - T/13 (a thirteenth of T left for slower round trips and late timers).
 *
 * Why a thirteenth: with the tick unknown (taken as T/2) a write confirms the answer one period
 * back (k = 1) only when E >= 0.35 T, and that fits under the line only with a slack below T/12.
 * At T/10 it took k = 2, a write every 0.23 T: 50% more writes, and a touch more often than the
 * pings (see below). The slack guards liveness only: a lease is told at risk at 5T/6 whatever
 * the period, so a late renewal loses a lease and never keeps one too long.
 *
 * Why as large as that: every request touches the session, and a session's expiry comes T after
 * its last touch. A proof sent more often than the idle pings (T/3) makes a crashed holder's
 * session expire later than a client that only pings (Curator's), by half the difference on
 * average: the next holder waits that much longer. With the tick known the period comes out at
 * about T/3, where the proof replaces the pings instead of adding touches.
 */
export function proofTiming(t: number, mode: LeaseProofMode = 'write', serverTickTime?: number): QuorumProofTiming {
  const tick = serverTickTime ?? t / 2;
  const confirmAfter = Math.ceil(tick / 2 + Math.max(25, tick / 10));
  const syncLag = Math.ceil(1.5 * tick + Math.max(50, tick / 4));
  const writeEvery = period(t, confirmAfter, 0);
  const syncEvery = period(t, confirmAfter, syncLag);
  // 'auto' syncs only where the syncs go no more often than the idle pings (see above): where T
  // is 3.3 to 4.7 ticks a sync fits only at a shorter period (0.27 T at 4 ticks), which would
  // make a crashed holder's session expire later than Curator's, so it writes there.
  const sync = mode === 'sync' ? syncEvery > 0 : mode === 'auto' && syncEvery >= Math.min(t / 3, MAX_PING_INTERVAL);
  const kind = mode === 'off' ? undefined : sync ? 'sync' : 'write';
  // No period keeps the proof young enough when the tick is most of T (a server whose
  // minSessionTimeout was lowered below 2 ticks): leases are then at risk from birth, and the
  // writes go at the round-trip allowance, not in a loop.
  const every = Math.max(kind === 'sync' ? syncEvery : writeEvery, allowanceFor(t));
  return { confirmAfter, syncLag, kind, every: Math.floor(every), possible: kind === undefined || writeEvery > 0 };
}

/**
 * Why no lease can be kept on a session of timeout `t` told `serverTickTime` (a
 * {@link QuorumProofTiming.possible} false), naming the smallest timeout that would do; the
 * error leases and waits on the proof fail with at once, instead of leases lost at birth.
 */
export function impossibleProof(t: number, serverTickTime: number | undefined): InvalidArgumentError {
  let enough = t;
  while (!proofTiming(enough, 'write', serverTickTime).possible && enough < 1e9) enough = Math.ceil(enough * 1.05);
  return new InvalidArgumentError(
    'serverTickTime',
    `${serverTickTime} ms is too much of the negotiated session timeout (${t} ms) for the quorum proof: it can confirm nothing recent enough to keep a lease. Tell the servers' real tickTime, ask for a session timeout of at least ${enough} ms, or set leaseProof: 'off'`,
  );
}

/** The round-trip allowance the proof's timing leaves a request at timeout `t`, ms. */
function allowanceFor(t: number): number {
  return Math.max(25, t / 20);
}

/** See {@link proofTiming}: the largest E over k with E + A + max(kE, lag) <= budget and kE >= confirmAfter + A; 0 when none. */
function period(t: number, confirmAfter: number, lag: number): number {
  const allowance = allowanceFor(t);
  const budget = (5 * t) / 6 - t / 13;
  let best = 0;
  for (let k = 1; k <= 16; k++) {
    const e = Math.min((budget - allowance) / (k + 1), budget - allowance - lag);
    if (e * k >= confirmAfter + allowance && e > best) best = e;
  }
  return best;
}

/** What the proof needs from its session. */
export interface QuorumProofHost {
  /** The negotiated timeout, ms. */
  timeout(): number;
  /** Whether a read-write server is serving the session now. */
  connected(): boolean;
  /**
   * On the current connection: the send time of the newest request its server had answered by
   * `t` (performance.now()), -Infinity when none. Only the current connection's: a write on it
   * confirms what its own server forwarded to the leader, not what an earlier one did.
   */
  heardBy(t: number): number;
  /**
   * On the current connection: when the oldest reply to a request sent after `sentAfter` arrived
   * (never earlier than it did), Infinity when none.
   */
  answeredAfter(sentAfter: number): number;
  /**
   * Sends a proof request of `kind`. The session reports it, as every write and sync of its own,
   * through {@link QuorumProof.committed} once answered with err 0; the promise only settles.
   */
  send(kind: 'write' | 'sync'): Promise<unknown>;
}

/** Most proof requests in flight at once: a server that stops answering does not get a pile. */
const MAX_IN_FLIGHT = 4;

/**
 * One session's quorum proof: {@link proven}, advanced by every committed write or sync of the
 * session ({@link committed}), and, while held ({@link hold}), a request of its own whenever
 * none came for {@link QuorumProofTiming.every}. Nothing is sent while nobody holds it.
 *
 * A server that cannot commit the write stops answering this session altogether: it holds every
 * later request of the session, pings included, behind the pending write or sync
 * (`CommitProcessor`), so the connection's liveness rule drops it after 2T/3 and the session's
 * `lost` is then dated by {@link proven}.
 */
export class QuorumProof {
  readonly #host: QuorumProofHost;
  readonly #mode: LeaseProofMode;
  readonly #serverTickTime: number | undefined;
  /** The leader counted the session alive at or after this moment (performance.now()). */
  #proven = -Infinity;
  #holders = 0;
  /** Send time of the newest write or sync committed on the current connection (or of its handshake). */
  #lastSent = -Infinity;
  /** Send time of the proof's own newest request on the current connection. */
  #lastAsked = -Infinity;
  #timer: NodeJS.Timeout | undefined;
  /** When {@link #timer} fires, for the plan's timer (Infinity for a wait's). */
  #timerAt = Infinity;
  #inFlight = 0;
  /** {@link waitProven}'s callers. */
  #waiters: Array<{ done: () => boolean; settle: (err?: Error) => void }> = [];
  #ended: (() => Error) | undefined;
  #timing: { t: number; timing: QuorumProofTiming } | undefined;

  constructor(host: QuorumProofHost, serverTickTime?: number, mode: LeaseProofMode = 'auto') {
    this.#host = host;
    this.#serverTickTime = serverTickTime;
    this.#mode = mode;
  }

  /** The send time of the newest request the quorum is known to have counted (-Infinity before any). */
  get proven(): number {
    return this.#proven;
  }
  /** Whether someone holds the proof. */
  get active(): boolean {
    return this.#holders > 0;
  }
  /** The mode asked for. */
  get mode(): LeaseProofMode {
    return this.#mode;
  }
  /** Throws {@link impossibleProof}'s error when no lease can be kept at the current timeout. */
  assertPossible(): void {
    if (!this.timing.possible) throw impossibleProof(this.#host.timeout(), this.#serverTickTime);
  }
  /** The timing for the current timeout. */
  get timing(): QuorumProofTiming {
    const t = this.#host.timeout();
    if (this.#timing?.t !== t) this.#timing = { t, timing: proofTiming(t, this.#mode, this.#serverTickTime) };
    return this.#timing.timing;
  }

  /**
   * The earliest moment a proof request sent could move {@link proven}, by what the server has
   * answered so far: `confirmAfter` after the first reply to a request sent after the proof (a
   * sync, besides, no sooner than `syncLag` after the proof); when no such reply came yet, a
   * request must go and come back first: now plus `confirmAfter` and the round-trip allowance.
   * Infinity in mode off.
   */
  get renewableAt(): number {
    const timing = this.timing;
    if (timing.kind === undefined) return Infinity;
    const answered = this.#host.answeredAfter(this.#proven);
    const at = answered < Infinity ? answered + timing.confirmAfter : performance.now() + timing.confirmAfter + allowanceFor(this.#host.timeout());
    return timing.kind === 'sync' ? Math.max(at, this.#proven + timing.syncLag + 1) : at;
  }

  /**
   * When a proof request sent now, or at {@link renewableAt} if that is later, has committed, if
   * its round trip takes no longer than the timing's allowance (T/20). Infinity in mode off.
   */
  get renewedBy(): number {
    return Math.max(performance.now(), this.renewableAt) + allowanceFor(this.#host.timeout());
  }

  /**
   * A write (err 0 in its reply header: committed) or a sync of the session, sent at `sentAt` on
   * the current connection, was answered.
   */
  committed(sentAt: number, kind: 'write' | 'sync'): void {
    const timing = this.timing;
    const confirmed = this.#host.heardBy(sentAt - timing.confirmAfter);
    this.#advance(kind === 'write' ? confirmed : Math.min(confirmed, sentAt - timing.syncLag));
    // A sync stands in for the proof's own request only where the proof sends syncs: in write
    // mode its evidence is a tick and a half older than the write the period assumes.
    if ((kind === 'write' || timing.kind === 'sync') && sentAt > this.#lastSent) this.#lastSent = sentAt;
    if (this.#waiters.length > 0) this.#kickSoon();
    else this.#replan();
  }

  /**
   * Resolves once `done()` says the proof is recent enough (checked now and at each advance),
   * holding the proof meanwhile (a request goes at once); rejects on abort or when the proof
   * stops for good (session closed or expired: `ended()`'s error).
   */
  waitProven(done: () => boolean, ended: () => Error, signal?: AbortSignal): Promise<void> {
    if (done()) return Promise.resolve();
    signal?.throwIfAborted();
    const release = this.hold();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => waiter.settle(signal?.reason as Error);
      const waiter = {
        done,
        settle: (err?: Error) => {
          release();
          signal?.removeEventListener('abort', onAbort);
          this.#waiters = this.#waiters.filter((w) => w !== waiter);
          if (err) reject(err);
          else resolve();
        },
      };
      this.#ended = ended;
      this.#waiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#clear();
      this.#send();
      this.#schedule();
    });
  }

  /** A handshake on a read-write server, dialed at `dialedAt`, proved the session to the leader. */
  noteHandshake(dialedAt: number): void {
    this.#advance(dialedAt);
    if (dialedAt > this.#lastSent) this.#lastSent = dialedAt;
  }

  /**
   * Keeps the proof advancing until the returned function is called (counted; nothing is sent
   * once the last holder left: the timer, if set, then finds no holder and stops, so a hold taken
   * again before it fires costs no timer).
   */
  hold(): () => void {
    if (this.#holders++ === 0) this.#schedule();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holders--;
    };
  }

  /** The session (re)connected or disconnected: what the old connection sent proves nothing more. */
  onConnectionChange(): void {
    this.#clear();
    this.#lastSent = this.#lastAsked = -Infinity;
    this.#schedule();
  }

  /** Stops everything (session closed or expired). */
  stop(): void {
    for (const w of [...this.#waiters]) w.settle(this.#ended?.() ?? new Error('session ended'));
    this.#holders = 0;
    this.#clear();
  }

  #clear(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** While held and connected: the timer for {@link nextSend}, unless one is set. */
  #schedule(): void {
    if (this.#timer !== undefined || this.#holders === 0 || !this.#host.connected()) return;
    const at = this.#nextSend();
    if (at === undefined) return;
    const due = at - performance.now();
    this.#timerAt = at;
    this.#timer = setTimeout(() => this.#due(), due > 0 ? Math.ceil(due) : 0);
    this.#timer.unref();
  }

  /**
   * Plans again from what is known now (an answer came); not while a wait drives the timer. A
   * timer already set for no later than the new plan stays (it plans again when it fires), so a
   * session writing often while it holds the proof does not reset a timer at every write.
   */
  #replan(): void {
    if (this.#waiters.length > 0 || this.#holders === 0) return;
    if (this.#timer !== undefined) {
      const at = this.#nextSend();
      if (at !== undefined && this.#timerAt <= at) return;
    }
    this.#clear();
    this.#schedule();
  }

  #due(): void {
    this.#timer = undefined;
    if (this.#holders === 0 || !this.#host.connected()) return;
    // Unless a write or sync of the session's own since the timer was set moved the plan.
    const at = this.#nextSend();
    if (at !== undefined && at <= performance.now() + 1) this.#send();
    this.#schedule();
  }

  /**
   * When the proof must send next, or undefined to wait for an answer (which plans again).
   *
   * The cadence: `every` after the newest request that proved or that the proof sent (its own
   * requests do not wait for each other's answers: a slow round trip must not stretch it). Once
   * running it keeps the proof young (see {@link proofTiming}). But a hold may begin on an old
   * proof (a first lease on a session that only pinged, the handshake long past): the cadence's
   * next request may then come too late, or prove nothing newer, before the leases' at-risk line
   * (the proof T/6 from running out). When the cadence would send after the last moment a
   * request can still commit before that line (less the round-trip allowance), the proof sends
   * as soon as a request proves something newer ({@link renewableAt}), and when nothing newer
   * was answered yet, a request now for the next one to confirm.
   */
  #nextSend(): number | undefined {
    const t = this.#host.timeout();
    const { kind, every } = this.timing;
    if (kind === undefined) return undefined; // mode off: nothing to send, ever
    const cadence = Math.max(this.#lastSent, this.#lastAsked) + every;
    if (cadence <= this.#proven + t - t / 6 - allowanceFor(t)) return cadence;
    // At most MAX_IN_FLIGHT: an answer (or failure) plans again.
    if (this.#inFlight >= MAX_IN_FLIGHT) return undefined;
    const answered = this.#host.answeredAfter(this.#proven);
    if (answered === Infinity) {
      // Nothing newer than the proof was answered: one request of the proof's own on its way
      // after the proof is enough (its answer plans again).
      return this.#inFlight > 0 && this.#lastAsked > this.#proven ? undefined : performance.now();
    }
    const at = this.renewableAt;
    // Sent at or after that moment and still out: its commit moves the proof. Not out any more
    // (it failed): again, no sooner than an allowance after it.
    if (this.#lastAsked >= at) return this.#inFlight > 0 ? undefined : this.#lastAsked + allowanceFor(t);
    return at;
  }

  /** Sends a proof request now (when connected, the mode sends any, and not too many are out). */
  #send(): void {
    const { kind } = this.timing;
    if (kind === undefined || !this.#host.connected() || this.#inFlight >= MAX_IN_FLIGHT) return;
    this.#inFlight++;
    this.#lastAsked = performance.now();
    const done = () => {
      this.#inFlight--;
      this.#replan();
    };
    // A failure (connection loss, session gone) proves nothing; the session calls
    // onConnectionChange when it is connected again.
    this.#host.send(kind).then(done, done);
  }

  /**
   * A wait is not satisfied yet: the answer just noted becomes confirmable `confirmAfter` from
   * now, so send again then (a waiter right after a reconnect, or on an idle session).
   */
  #kickSoon(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timerAt = Infinity;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#waiters.length > 0) this.#send();
      this.#schedule();
    }, this.timing.confirmAfter);
    this.#timer.unref();
  }

  #advance(to: number): void {
    if (to > this.#proven) this.#proven = to;
    for (const w of [...this.#waiters]) if (w.done()) w.settle();
  }
}
