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
 * Two more proofs need no write: a handshake on a read-write server (a new session is created by
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
 * every max(gap/2, t/6), which keeps the proof at most about t/2 old.
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
  /** The send time of the newest request a server answered (Session.lastHeard). */
  lastHeard(): number;
  /**
   * Sends the proof write; resolves with its send time once it committed (any reply whose header
   * error is 0), rejects when it did not (connection loss, session gone).
   */
  write(): Promise<number>;
  /** The proof is older than T - T/6 while connected: the server cannot reach the quorum for us. */
  unproven(why: string): void;
}

/** A sample of {@link QuorumProofHost.lastHeard}, waiting for a write that confirms it. */
interface Sample {
  readonly at: number;
  readonly value: number;
}

/**
 * One session's quorum proof: {@link proven} and the write loop that advances it while held
 * ({@link hold}). One timer; nothing runs while nobody holds it (after a linger).
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
  #timer: NodeJS.Timeout | undefined;
  #inFlight = false;
  #lastWrite = -Infinity;
  #guard: NodeJS.Timeout | undefined;
  /** {@link waitProven}'s callers. */
  #waiters: Array<{ after: number; settle: (err?: Error) => void }> = [];

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
   * Resolves once {@link proven} is later than `after`, holding the proof meanwhile; rejects
   * on abort or when the proof stops for good (session closed or expired: `ended()`'s error).
   */
  waitProven(after: number, ended: () => Error, signal?: AbortSignal): Promise<void> {
    if (this.#proven > after) return Promise.resolve();
    signal?.throwIfAborted();
    const release = this.hold();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => waiter.settle(signal?.reason as Error);
      const waiter = {
        after,
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
  #ended: (() => Error) | undefined;

  /** A handshake on a read-write server, dialed at `dialedAt`, proved the session to the leader. */
  noteHandshake(dialedAt: number): void {
    this.#advance(dialedAt);
    this.#samples = [];
  }

  /**
   * Keeps the proof advancing until the returned function is called (counted; the writes go
   * on for a linger of max(60 s, 10 T) after the last holder left).
   */
  hold(): () => void {
    this.#holders++;
    this.#schedule();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#holders === 0) this.#lingerUntil = performance.now() + Math.max(60_000, 10 * this.#host.timeout());
    };
  }

  /** The session (re)connected or disconnected: start or pause the loop. */
  onConnectionChange(): void {
    this.#samples = [];
    this.#schedule();
  }

  /** Stops everything (session closed or expired). */
  stop(): void {
    for (const w of [...this.#waiters]) w.settle(this.#ended?.() ?? new Error('session ended'));
    this.#holders = 0;
    this.#lingerUntil = 0;
    this.#clear();
  }

  #clear(): void {
    if (this.#timer) clearTimeout(this.#timer);
    if (this.#guard) clearTimeout(this.#guard);
    this.#timer = this.#guard = undefined;
  }

  #schedule(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (!this.active || !this.#host.connected()) return this.#clear();
    this.#armGuard();
    if (this.#inFlight) return;
    const { every, confirmAfter } = this.timing;
    const now = performance.now();
    let at = this.#lastWrite + every;
    // A sample nobody confirmed yet: confirm it as soon as it allows rather than on the grid.
    const oldest = this.#samples[0];
    if (oldest !== undefined && this.#proven + this.#host.timeout() - now < this.#host.timeout() / 3) at = Math.min(at, oldest.at + confirmAfter);
    if (this.#samples.length === 0 && at > now) this.#samples.push({ at: now, value: this.#host.lastHeard() });
    this.#timer = setTimeout(() => this.#send(), Math.max(0, Math.ceil(at - now)));
    this.#timer.unref();
  }

  #send(): void {
    this.#timer = undefined;
    if (!this.active || !this.#host.connected()) return this.#clear();
    this.#inFlight = true;
    this.#lastWrite = performance.now();
    this.#host.write().then(
      (sentAt) => {
        this.#inFlight = false;
        const { confirmAfter } = this.timing;
        let confirmed = -Infinity;
        while (this.#samples.length > 0 && this.#samples[0]!.at <= sentAt - confirmAfter) confirmed = Math.max(confirmed, this.#samples.shift()!.value);
        this.#advance(confirmed);
        this.#samples.push({ at: performance.now(), value: this.#host.lastHeard() });
        this.#schedule();
      },
      () => {
        // Not committed (the connection dropped, the session ended): nothing proven. The
        // session calls onConnectionChange when it is connected again.
        this.#inFlight = false;
        this.#schedule();
      },
    );
  }

  #advance(to: number): void {
    if (to > this.#proven) this.#proven = to;
    for (const w of [...this.#waiters]) if (this.#proven > w.after) w.settle();
    this.#armGuard();
  }

  /** While connected and held: tell the host once the proof is older than T - T/6. */
  #armGuard(): void {
    if (this.#guard) clearTimeout(this.#guard);
    this.#guard = undefined;
    if (!this.active || !this.#host.connected() || this.#proven === -Infinity) return;
    const t = this.#host.timeout();
    const left = this.#proven + t - t / 6 - performance.now();
    const fire = () => {
      this.#guard = undefined;
      if (this.active && this.#host.connected() && this.#proven + t - t / 6 <= performance.now()) {
        this.#host.unproven(`no write committed through the quorum confirmed the session for ${Math.round(performance.now() - this.#proven)} ms (timeout ${t} ms): the server may be cut off from the leader`);
      } else this.#armGuard();
    };
    if (left <= 0) return fire();
    this.#guard = setTimeout(fire, Math.ceil(left));
    this.#guard.unref();
  }
}
