/**
 * Evidence that the quorum, not only the server we talk to, still counts the session alive.
 *
 * Why a server's answer is not enough (ZooKeeper 3.8's source; design.md §9): a follower answers
 * pings and reads by itself and only records the touch in a local table
 * (`LearnerSessionTracker.touchSession`); the touches reach the leader inside the follower's
 * replies to the leader's PINGs, sent every tickTime/2 (`Leader.lead`, `Learner.ping`), and only
 * the leader's `SessionTrackerImpl` expires sessions, one timeout after the last touch it received.
 * A follower cut off from the leader keeps answering for syncLimit ticks while the leader expires
 * its clients' sessions. An isolated leader answers pings, reads and even `sync` until it notices
 * it lost its quorum, up to a tick after its successor may have started.
 *
 * What does prove something: a write that commits. It needs the leader and a quorum of acks, so
 * an isolated server of either kind cannot commit it. And everything the follower sent the
 * leader before forwarding the write (its ping replies, with their touches) reached the leader
 * before the write did, on the same ordered stream. The leader pings each follower every
 * tickTime/2, so if a request A of ours was answered at least {@link QuorumProofTiming.confirmAfter}
 * (tick/2 plus a margin for ping jitter) before we sent write W, the follower answered a ping
 * between touching A and forwarding W: the leader touched the session after A was sent, and
 * cannot expire it before A's send time plus the timeout. A committed W thus *confirms* every
 * such A: the proof is the newest confirmed send time. The write is a multi of one `check` of the
 * chroot's root with any version: a committed transaction that changes nothing (even a failed
 * check is committed as an error transaction; PrepRequestProcessor), one fsync on a quorum.
 *
 * One more proof needs no write: a handshake on a read-write server (a new session is created by
 * the leader, a resumed one is revalidated by it: `Learner.validateSession`, REVALIDATE, which
 * touches the session), dated by the handshake's send time.
 *
 * Assumptions, stated in the README: the server's tick is at most `serverTickTime` (default T/2,
 * which the server's default minimum session timeout of 2 ticks guarantees); the leader's pings
 * reach the follower at least every `confirmAfter`; global sessions (`localSessionsEnabled`
 * false, the default); client and server clocks advance at the same rate.
 */

/** The proof's clock and timing, from the negotiated timeout T. */
export interface QuorumProofTiming {
  /** How long before a write the confirmed requests must have been answered, ms. */
  readonly confirmAfter: number;
  /** How often a proof write is sent while the proof is held, ms. */
  readonly every: number;
}

/**
 * The timing for timeout `t` and a server tick of at most `serverTickTime` (default t/2): a
 * confirmation gap of tick/2 plus max(25 ms, tick/10) for the leader's ping jitter, and a write
 * every max(gap/2, t/6). The proof is then at most gap + every + 2 round trips old.
 */
export function proofTiming(t: number, serverTickTime?: number): QuorumProofTiming {
  const tick = Math.min(serverTickTime ?? Infinity, t / 2);
  const confirmAfter = Math.ceil(tick / 2 + Math.max(25, tick / 10));
  return { confirmAfter, every: Math.ceil(Math.max(confirmAfter / 2, t / 6)) };
}

/** What the proof needs from its session. */
export interface QuorumProofHost {
  /** The negotiated timeout, ms. */
  timeout(): number;
  /** Whether a read-write server is serving the session now. */
  connected(): boolean;
  /**
   * On the current connection: the send time of the newest request its server answered, and when
   * that reply arrived; undefined before its first reply. Only the current connection's: a write
   * on it confirms what its own server forwarded to the leader, not what an earlier one did.
   */
  heard(): { readonly sentAt: number; readonly at: number } | undefined;
  /**
   * Sends the proof write; resolves with its send time once it committed (any reply whose header
   * error is 0), rejects when it did not (connection loss, session gone).
   */
  write(): Promise<number>;
}

/**
 * A sample of {@link QuorumProofHost.heard}, waiting for a write that confirms it: `value` the
 * answered request's send time, `at` when its answer came (the server touched the session before
 * answering, so its ping reply to the leader carrying the touch is due confirmAfter after `at`).
 */
interface Sample {
  readonly at: number;
  readonly value: number;
}

/** Most proof writes in flight at once: a server that stops answering does not get a pile. */
const MAX_IN_FLIGHT = 4;

/**
 * One session's quorum proof: {@link proven} and the write loop that advances it while held
 * ({@link hold}). Writes go every `every` ms without waiting for each other (a slow round trip
 * must not stretch the cadence), and the newest answer (its request's send time, and when it
 * came) is sampled on the same grid, `confirmAfter` ahead of each write, so each write confirms
 * the freshest sample it can. No write goes while nobody holds it (after a linger); the sampling
 * goes on whenever connected (a timer, no request), so that a hold's first write confirms an
 * answer from before the hold began.
 *
 * A server that cannot commit the write stops answering this session altogether: it holds every
 * later request of the session, pings included, behind the pending write (`CommitProcessor`), so
 * the connection's liveness rule drops it after 2T/3 and the session's `lost` is then dated by
 * {@link proven}.
 */
export class QuorumProof {
  readonly #host: QuorumProofHost;
  readonly #serverTickTime: number | undefined;
  /** The leader counted the session alive at or after this moment (performance.now()). */
  #proven = -Infinity;
  #holders = 0;
  /** While not held: keep proving until then, so the next lease finds a fresh proof. */
  #lingerUntil = 0;
  #samples: Sample[] = [];
  #writeTimer: NodeJS.Timeout | undefined;
  #sampleTimer: NodeJS.Timeout | undefined;
  #inFlight = 0;
  /** {@link waitProven}'s callers. */
  #waiters: Array<{ done: () => boolean; settle: (err?: Error) => void }> = [];
  #ended: (() => Error) | undefined;

  constructor(host: QuorumProofHost, serverTickTime?: number) {
    this.#host = host;
    this.#serverTickTime = serverTickTime;
  }

  /** The send time of the newest request the quorum is known to have counted (-Infinity before any). */
  get proven(): number {
    return this.#proven;
  }
  /** Whether someone holds the proof (or it lingers after the last holder). */
  get active(): boolean {
    return this.#holders > 0 || performance.now() < this.#lingerUntil;
  }
  /** The timing for the current timeout. */
  get timing(): QuorumProofTiming {
    return proofTiming(this.#host.timeout(), this.#serverTickTime);
  }

  /**
   * Resolves once `done()` says the proof is recent enough (checked now and at each advance),
   * holding the proof meanwhile; rejects on abort or when the proof stops for good (session
   * closed or expired: `ended()`'s error).
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
    });
  }

  /** A handshake on a read-write server, dialed at `dialedAt`, proved the session to the leader. */
  noteHandshake(dialedAt: number): void {
    this.#advance(dialedAt);
  }

  /**
   * Keeps the proof advancing until the returned function is called (counted; the writes go
   * on for a linger of max(60 s, 10 T) after the last holder left).
   */
  hold(): () => void {
    this.#holders++;
    this.#start();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#holders === 0) this.#lingerUntil = performance.now() + Math.max(60_000, 10 * this.#host.timeout());
    };
  }

  /** The session (re)connected or disconnected: start or stop the loop. */
  onConnectionChange(): void {
    this.#clear();
    this.#samples = [];
    this.#start();
  }

  /** Stops everything (session closed or expired). */
  stop(): void {
    for (const w of [...this.#waiters]) w.settle(this.#ended?.() ?? new Error('session ended'));
    this.#holders = 0;
    this.#lingerUntil = 0;
    this.#clear();
  }

  #clear(): void {
    if (this.#writeTimer) clearTimeout(this.#writeTimer);
    if (this.#sampleTimer) clearTimeout(this.#sampleTimer);
    this.#writeTimer = this.#sampleTimer = undefined;
  }

  /** Starts both grids if they are not running: the first write now, samples confirmAfter ahead of each write. */
  #start(): void {
    this.#startSampling();
    if (this.#writeTimer !== undefined || !this.active || !this.#host.connected()) return;
    this.#writeTimer = setTimeout(() => this.#write(), 0);
    this.#writeTimer.unref();
  }

  /**
   * Starts the sample grid if it is not running: whenever connected, held or not (a timer and no
   * request), so that the first write of a hold confirms an answer from before it, one round trip
   * after it starts, instead of waiting confirmAfter for an answer to age.
   */
  #startSampling(): void {
    if (this.#sampleTimer !== undefined || !this.#host.connected()) return;
    const { every, confirmAfter } = this.timing;
    this.#sample();
    const phase = (every - (confirmAfter % every)) % every;
    this.#sampleTimer = setTimeout(() => this.#sampleTick(), phase);
    this.#sampleTimer.unref();
  }

  #sample(): void {
    const heard = this.#host.heard();
    const newest = this.#samples[this.#samples.length - 1];
    if (heard !== undefined && (newest === undefined || heard.sentAt > newest.value)) this.#samples.push({ at: heard.at, value: heard.sentAt });
    // A sample can only be confirmed while younger than the timeout; older ones are useless.
    const horizon = performance.now() - this.#host.timeout();
    while (this.#samples.length > 0 && this.#samples[0]!.at < horizon) this.#samples.shift();
  }

  #sampleTick(): void {
    this.#sampleTimer = undefined;
    if (!this.#host.connected()) return;
    this.#sample();
    this.#sampleTimer = setTimeout(() => this.#sampleTick(), this.timing.every);
    this.#sampleTimer.unref();
  }

  #write(): void {
    this.#writeTimer = undefined;
    if (!this.active || !this.#host.connected()) return;
    this.#writeTimer = setTimeout(() => this.#write(), this.timing.every);
    this.#writeTimer.unref();
    if (this.#inFlight >= MAX_IN_FLIGHT) return;
    this.#inFlight++;
    this.#host.write().then(
      (sentAt) => {
        this.#inFlight--;
        const { confirmAfter } = this.timing;
        let confirmed = -Infinity;
        while (this.#samples.length > 0 && this.#samples[0]!.at <= sentAt - confirmAfter) confirmed = Math.max(confirmed, this.#samples.shift()!.value);
        this.#advance(confirmed);
      },
      () => {
        // Not committed (the connection dropped, the session ended): nothing proven. The
        // session calls onConnectionChange when it is connected again.
        this.#inFlight--;
      },
    );
  }

  #advance(to: number): void {
    if (to > this.#proven) this.#proven = to;
    for (const w of [...this.#waiters]) if (w.done()) w.settle();
  }
}
