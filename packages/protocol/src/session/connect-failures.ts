/**
 * The failures of an initial connect, kept small. The connect retries every server in rounds
 * until `connectTimeout` has passed, so a refused port gives the same error a dozen times or more
 * (and a long `connectTimeout` could give millions): only the distinct ones are kept, with a count.
 *
 * Some failures are definitive: a host whose name does not exist (ENOTFOUND), or a port that
 * another kind of server answers ("not a ZooKeeper server": HTTP, SSH, TLS, a text banner).
 * Trying again cannot change them, so once every host has failed that way the connect stops
 * (within one round) and its error is not retryable. A refused or silent port is not
 * definitive: ZooKeeper may be starting or restarting there.
 */
import { NOT_ZOOKEEPER } from '../connection/foreign.js';
import { ConnectionLossError, DecodeError } from '../errors.js';
import type { HostAddress } from './hosts.js';

/** Distinct errors kept in the final error's `cause`. */
const MAX_KEPT = 10;
/** Distinct errors quoted in the final error's message. */
const MAX_QUOTED = 3;

/** @internal Failed connection attempts, deduplicated by message. */
export class ConnectFailures {
  readonly #hosts: readonly HostAddress[];
  /** First error of each distinct message, with how often it came. */
  readonly #distinct = new Map<string, { error: unknown; count: number }>();
  /** The hosts (as `host:port`) whose latest attempt failed definitively. */
  readonly #definitive = new Set<string>();
  #attempts = 0;
  #dropped = 0;

  constructor(hosts: readonly HostAddress[]) {
    this.#hosts = hosts;
  }

  /** The number of failed attempts recorded. */
  get attempts(): number {
    return this.#attempts;
  }

  /**
   * True once every host of `hosts` (the list the session dials now, which a re-asked SRV record
   * may have changed; by default the one it started with) failed definitively at its latest
   * attempt (see above): rounds more would fail the same way. False for an empty list.
   */
  definitive(hosts: readonly HostAddress[] = this.#hosts): boolean {
    return hosts.length > 0 && hosts.every((h) => this.#definitive.has(labelOf(h)));
  }

  /**
   * Records the errors of failed attempts (one each); with `host`, they are that host's latest
   * attempt (one error per address it resolved to, or its resolver's error).
   */
  add(errors: readonly unknown[], host?: HostAddress): void {
    if (host) {
      if (errors.length > 0 && errors.every(isDefinitive)) this.#definitive.add(labelOf(host));
      else this.#definitive.delete(labelOf(host));
    }
    for (const error of errors) {
      this.#attempts++;
      const key = keyOf(error);
      const seen = this.#distinct.get(key);
      if (seen) seen.count++;
      else if (this.#distinct.size < MAX_KEPT) this.#distinct.set(key, { error, count: 1 });
      else this.#dropped++;
    }
  }

  /**
   * The error the connect fails with: `could not connect to 127.0.0.1:1 (3 attempts): connect
   * ECONNREFUSED 127.0.0.1:1`, its `cause` an AggregateError of the distinct errors (at most 10).
   * `hosts` as for {@link definitive}. When every one failed definitively, it says so and
   * `isRetryable` is false.
   */
  error(hosts: readonly HostAddress[] = this.#hosts): ConnectionLossError {
    // Named as the connect string lists them (the session dials them shuffled).
    const listed = this.#hosts.map(labelOf).join(', ');
    const distinct = [...this.#distinct.values()];
    const shown = distinct.slice(0, MAX_QUOTED);
    const quoted = shown.map(({ error, count }) => `${messageOf(error)}${distinct.length > 1 && count > 1 ? ` (x${count})` : ''}`);
    const rest = this.#attempts - shown.reduce((n, d) => n + d.count, 0);
    const more = rest > 0 ? `; and ${plural(rest, 'other failed attempt')}` : '';
    const attempts = plural(this.#attempts, 'attempt');
    const summary = distinct.length === 0 ? 'no attempt was made' : `${quoted.join('; ')}${more}`;
    const hints = whatToCheck(distinct.map((d) => d.error), listed);
    const definitive = this.definitive(hosts);
    if (definitive) hints.push(`Not retried: ${hosts.length === 1 ? 'the host' : 'every host'} failed in a way that trying again cannot change.`);
    return new ConnectionLossError(`could not connect to ${listed} (${attempts}): ${summary}${hints.length > 0 ? `. ${hints.join(' ')}` : ''}`, {
      op: 'connect',
      ...(definitive ? { retryable: false } : {}),
      cause: new AggregateError(
        distinct.map((d) => d.error),
        `${attempts} failed with ${this.#dropped > 0 ? `more than ${distinct.length} distinct errors` : plural(distinct.length, 'distinct error')}`,
      ),
    });
  }
}

/**
 * What to check, from what the attempts ran into: nothing listening (ECONNREFUSED), a port that
 * accepts but never answers the handshake (not a ZooKeeper client port), a name that does not
 * resolve. Empty when nothing is known.
 */
function whatToCheck(errors: readonly unknown[], hosts: string): string[] {
  const codes = new Set<string>();
  const texts: string[] = [];
  for (const error of errors) {
    for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
      const code = (e as NodeJS.ErrnoException).code;
      if (typeof code === 'string') codes.add(code);
      texts.push(e.message);
    }
  }
  const said = (pattern: RegExp) => texts.some((t) => pattern.test(t));
  const hints: string[] = [];
  if (codes.has('ECONNREFUSED') || said(/\bECONNREFUSED\b/)) {
    hints.push(`Nothing accepted the connection: is ZooKeeper running at ${hosts}?`);
  }
  if (said(/no handshake reply within/)) {
    hints.push('A server accepted the connection but never answered the ZooKeeper handshake: is that a ZooKeeper client port (clientPort or secureClientPort, not a quorum, election or admin port), and plain or TLS as the server expects?');
  }
  if (codes.has('ENOTFOUND') || codes.has('EAI_AGAIN') || said(/\b(ENOTFOUND|EAI_AGAIN)\b/)) {
    hints.push('A host name did not resolve: check its spelling and this machine\'s DNS.');
  }
  return hints;
}

/**
 * Whether an attempt's error is one that trying again cannot change: the host's name does not
 * exist (ENOTFOUND; not EAI_AGAIN, a resolver that did not answer), or the port answered as
 * another kind of server (handshake.ts's "not a ZooKeeper server").
 */
function isDefinitive(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if ((e as NodeJS.ErrnoException).code === 'ENOTFOUND') return true;
    if (e instanceof DecodeError && e.message.startsWith(NOT_ZOOKEEPER)) return true;
  }
  return false;
}

function labelOf(h: HostAddress): string {
  return `${h.host}:${h.port}`;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

// Durations in messages ("no handshake reply within 9873 ms") vary from one attempt to the next
// without saying anything new.
function keyOf(error: unknown): string {
  const name = error instanceof Error ? error.name : typeof error;
  return `${name}: ${messageOf(error).replace(/\d+(?:\.\d+)? ms\b/g, '# ms')}`;
}
