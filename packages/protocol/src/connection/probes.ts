/**
 * What a connection learns about its server before it relies on it, and the requests it holds
 * meanwhile: the generation probe (3.4 or 3.5+, see generation.ts) and the multiRead probe
 * (`coalesceReads: 'probe'`, see coalesce.ts). Requests made while either is out are held, in
 * order, and leave once it is answered; on a 3.4 server the operations it lacks are answered here
 * with Unimplemented (or sent as their 3.4 substitutes), never sent.
 */
import { OpCode } from '../constants.js';
import { ConnectionLossError, ErrorCode, SessionClosedRequireSaslAuthError } from '../errors.js';
import type { JuteReader } from '../jute/reader.js';
import type { JuteWriter } from '../jute/writer.js';
import { readReadBatch, writeReadBatch, type QueuedRead } from './coalesce.js';
import { generationOf, LEGACY_SUBSTITUTES, rememberedGeneration, rememberGeneration, SINCE_VERSION, writeGenerationProbe, type ServerGeneration } from './generation.js';
import type { ConnectionOptions, RequestOptions } from './options.js';
import type { Reply } from './pending.js';

/** A request made while the multiRead or the generation probe is out, sent once it is answered. */
interface HeldRequest {
  type: number;
  write: ((w: JuteWriter) => void) | undefined;
  read: ((r: JuteReader) => unknown) | undefined;
  options: RequestOptions | undefined;
  resolve: (reply: Reply<unknown>) => void;
  reject: (err: unknown) => void;
}

/** What the probes need of their connection. */
export interface ProbedConnection {
  /** Sends one request now (Connection's #send). */
  send(type: number, write: (w: JuteWriter) => void, read: ((r: JuteReader) => unknown) | undefined, resolve: (reply: Reply<unknown>) => void, reject: (err: unknown) => void): void;
  /** Makes a request through Connection.request (a held one, released). */
  request(type: number, write: ((w: JuteWriter) => void) | undefined, read: ((r: JuteReader) => unknown) | undefined, options: RequestOptions | undefined): Promise<Reply<unknown>>;
  /** Sends the reads queued this tick (Connection's #sendReads). */
  sendReads(): void;
  /** Requests waiting for their reply. */
  pendingSize(): number;
  closed(): boolean;
  /** The server lastZxid stands at (the zxid of a reply answered here). */
  lastZxid(): bigint;
  /** Fails the connection. */
  fail(reason: Error): void;
  /** The server refused the multiRead probe (ConnectionEvents.noMultiRead). */
  noMultiRead(): void;
}

const noop = (): void => {};
const writeEmptyBatch = (w: JuteWriter): void => writeReadBatch(w, []);
const readEmptyBatch = (r: JuteReader): unknown => readReadBatch(r, []);
const answeredEmpty = (reply: Reply<unknown>): boolean => reply.err === 0;
const COALESCE = { coalesce: true } as const;

/** One connection's probes and held requests. */
export class Probes {
  readonly #conn: ProbedConnection;
  readonly #where: string;
  /** `address:port`: the key of this server's generation in the process (generation.ts). */
  readonly #server: string;
  /** Whether reads marked `coalesce` are batched. */
  #coalesce: boolean;
  /**
   * coalesceReads 'probe': `'wanted'` until the first tick with two reads to batch; `'draining'`
   * while the requests already sent are answered; `'sent'` while the probe is out.
   */
  #probe: 'wanted' | 'draining' | 'sent' | undefined;
  /** The server's generation; undefined while the generation probe is out. */
  #generation: ServerGeneration | undefined;
  /** Resolves with the generation once known. */
  readonly #generationKnown: Promise<ServerGeneration>;
  #onGeneration: { resolve: (g: ServerGeneration) => void; reject: (err: unknown) => void } | undefined;
  #generationProbed = false;
  /**
   * Requests made from the first batch on until the multiRead probe is answered, or from the
   * first operation a 3.4 server lacks until the generation probe is, in order (see {@link hold}).
   */
  #held: HeldRequest[] | undefined;

  constructor(conn: ProbedConnection, opts: Pick<ConnectionOptions, 'coalesceReads' | 'probeGeneration'>, server: string, where: string) {
    this.#conn = conn;
    this.#where = where;
    this.#server = server;
    this.#coalesce = opts.coalesceReads === true;
    // Learnt by an earlier connection to this server in this process: no probe.
    this.#generation = opts.probeGeneration ? rememberedGeneration(server) : 'modern';
    // A 3.4 server never gets the multiRead probe (see #generationAnswered).
    this.#probe = opts.coalesceReads === 'probe' && this.#generation !== 'legacy' ? 'wanted' : undefined;
    this.#generationKnown = this.#generation ? Promise.resolve(this.#generation) : new Promise((resolve, reject) => (this.#onGeneration = { resolve, reject }));
    this.#generationKnown.catch(noop); // observed only by those who ask
  }

  /** The server's generation; undefined until the probe is answered. */
  get generation(): ServerGeneration | undefined {
    return this.#generation;
  }

  /** Resolves with the server's generation once known; rejects with ConnectionLoss if the connection ends first. */
  generationKnown(): Promise<ServerGeneration> {
    return this.#generationKnown;
  }

  /** Whether reads marked `coalesce` are batched on this connection. */
  get coalescing(): boolean {
    return this.#coalesce;
  }

  /** Whether a read marked `coalesce` waits for the end of its tick: to be batched, or to start the multiRead probe. */
  get batching(): boolean {
    return this.#coalesce || this.#probe === 'wanted';
  }

  /** See Connection.mayHold. */
  mayHold(coalesce: boolean): boolean {
    return this.#held !== undefined || this.#generation === undefined || (coalesce && this.#probe === 'wanted');
  }

  /** Sends the generation probe, once (see Connection.startGenerationProbe). */
  startGenerationProbe(): void {
    if (this.#generation !== undefined || this.#generationProbed || this.#conn.closed()) return;
    this.#generationProbed = true;
    this.#conn.send(OpCode.exists, writeGenerationProbe, undefined, (reply) => this.#generationAnswered(generationOf(reply.err)), noop);
  }

  /**
   * A request that must not leave now: behind the held ones, or an operation a 3.4 server lacks
   * (answered here on one, held until the generation is known otherwise). Returns its reply, or
   * undefined when it may be sent.
   */
  hold<T>(type: number, write: ((w: JuteWriter) => void) | undefined, read: ((r: JuteReader) => T) | undefined, options: RequestOptions | undefined): Promise<Reply<T>> | undefined {
    const held = this.#held;
    if (held !== undefined) {
      return new Promise<Reply<T>>((resolve, reject) => held.push({ type, write, read, options, resolve: resolve as (reply: Reply<unknown>) => void, reject }));
    }
    if (this.#generation !== 'modern' && SINCE_VERSION.has(type)) {
      // Never sent to a 3.4 server, which would answer Unimplemented and close the connection.
      if (this.#generation === 'legacy') {
        const instead = LEGACY_SUBSTITUTES.get(type);
        if (instead) return this.#conn.request(instead.type, write, instead.read, options) as Promise<Reply<T>>;
        return Promise.resolve({ zxid: this.#conn.lastZxid(), err: ErrorCode.UNIMPLEMENTED, body: undefined });
      }
      return new Promise<Reply<T>>((resolve, reject) => (this.#held = [{ type, write, read, options, resolve: resolve as (reply: Reply<unknown>) => void, reject }]));
    }
    return undefined;
  }

  /**
   * Several reads of one tick before the server's multiRead is known: they are held (with every
   * request after them) and the probe starts. True when that happened.
   */
  holdForMultiRead(reads: readonly QueuedRead[]): boolean {
    if (this.#coalesce || this.#probe !== 'wanted') return false;
    this.#held = reads.map((q) => ({ type: q.type, write: q.write, read: q.read, options: q.trace === undefined ? COALESCE : { coalesce: true, trace: q.trace }, resolve: q.resolve, reject: q.reject }));
    this.#probe = 'draining';
    this.#probeWhenIdle();
    return true;
  }

  /** A request was answered (or failed as too large): the multiRead probe may leave now. */
  answered(): void {
    if (this.#probe === 'draining') this.#probeWhenIdle();
  }

  /** The server refused an operation it should have: it is not what was remembered (replaced by an older one at the same address). The next connection probes it again. */
  forgetGeneration(): void {
    rememberGeneration(this.#server, undefined);
  }

  // The probe leaves once nothing is outstanding: a 3.5 server answers an unknown op at once,
  // outside its request pipeline, and closes, which could lose the replies still in it.
  // It also waits for the generation: a 3.4 server never gets it.
  #probeWhenIdle(): void {
    if (this.#probe !== 'draining' || this.#conn.pendingSize() > 0 || this.#conn.closed() || this.#generation === undefined) return;
    this.#probe = 'sent';
    this.#conn.send(OpCode.multiRead, writeEmptyBatch, readEmptyBatch, (reply) => this.#probed(answeredEmpty(reply)), noop);
  }

  #probed(hasMultiRead: boolean): void {
    this.#probe = undefined;
    if (!hasMultiRead) {
      // The held requests fail as never sent (#shutdown).
      this.#conn.noMultiRead();
      this.#conn.fail(new ConnectionLossError(`${this.#where} has no multiRead (it refused the probe)`));
      return;
    }
    this.#coalesce = true;
    const held = this.#held ?? [];
    this.#held = undefined;
    for (const h of held) this.#conn.request(h.type, h.write, h.read, h.options).then(h.resolve, h.reject);
    this.#conn.sendReads();
  }

  // The generation probe's answer. A 3.4 server never gets the multiRead probe. Requests held
  // for the generation leave in order (request() answers those a 3.4 server lacks itself);
  // those held for a multiRead probe that may now leave wait for its answer.
  #generationAnswered(generation: ServerGeneration): void {
    this.#generation = generation;
    rememberGeneration(this.#server, generation);
    this.#onGeneration?.resolve(generation);
    this.#onGeneration = undefined;
    if (generation === 'legacy') this.#probe = undefined;
    if (this.#probe === 'draining') return this.#probeWhenIdle();
    const held = this.#held;
    this.#held = undefined;
    for (const h of held ?? []) this.#conn.request(h.type, h.write, h.read, h.options).then(h.resolve, h.reject);
  }

  /**
   * The connection ended (`reason` undefined: a requested close): the probes end, the generation's
   * waiters get `lossError()`, and the held requests fail as never sent.
   */
  shutdown(reason: Error | undefined, lossError: () => Error): void {
    // A connection dropped with the probe unanswered counts as a refusal: a server that closes
    // on multiRead without a word must not be probed (and dropped) on every connection.
    // (Not a server that requires SASL: it answers any first request so, multiRead or not.)
    if (this.#probe === 'sent' && reason !== undefined && !(reason instanceof SessionClosedRequireSaslAuthError)) this.#conn.noMultiRead();
    this.#probe = undefined;
    this.#onGeneration?.reject(lossError());
    this.#onGeneration = undefined;
    const held = this.#held;
    this.#held = undefined;
    if (held !== undefined && held.length > 0) {
      const unsent = new ConnectionLossError(`connection to ${this.#where} closed before the request was sent${reason ? `: ${reason.message}` : ''}`, { cause: reason, notSent: true });
      for (const h of held) h.reject(unsent);
    }
  }
}
