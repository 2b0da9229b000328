/**
 * The failures of an initial connect, kept small. The connect retries every server in rounds
 * until `connectTimeout` has passed, so a refused port gives the same error a dozen times or more
 * (and a long `connectTimeout` could give millions): only the distinct ones are kept, with a count.
 */
import { ConnectionLossError } from '../errors.js';
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
  #attempts = 0;
  #dropped = 0;

  constructor(hosts: readonly HostAddress[]) {
    this.#hosts = hosts;
  }

  /** The number of failed attempts recorded. */
  get attempts(): number {
    return this.#attempts;
  }

  /** Records the errors of failed attempts (one each). */
  add(errors: readonly unknown[]): void {
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
   */
  error(): ConnectionLossError {
    const hosts = this.#hosts.map((h) => `${h.host}:${h.port}`).join(', ');
    const distinct = [...this.#distinct.values()];
    const shown = distinct.slice(0, MAX_QUOTED);
    const quoted = shown.map(({ error, count }) => `${messageOf(error)}${distinct.length > 1 && count > 1 ? ` (x${count})` : ''}`);
    const rest = this.#attempts - shown.reduce((n, d) => n + d.count, 0);
    const more = rest > 0 ? `; and ${plural(rest, 'other failed attempt')}` : '';
    const attempts = plural(this.#attempts, 'attempt');
    const summary = distinct.length === 0 ? 'no attempt was made' : `${quoted.join('; ')}${more}`;
    const hints = whatToCheck(distinct.map((d) => d.error), hosts);
    return new ConnectionLossError(`could not connect to ${hosts} (${attempts}): ${summary}${hints.length > 0 ? `. ${hints.join(' ')}` : ''}`, {
      op: 'connect',
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
    hints.push(`Nothing accepted the connection: is ZooKeeper running at ${hosts}? (In a checkout of this project, \`npm run zk -- start\` starts one on 127.0.0.1:2181.)`);
  }
  if (said(/no handshake reply within/)) {
    hints.push('A server accepted the connection but never answered the ZooKeeper handshake: is that a ZooKeeper client port (clientPort or secureClientPort, not a quorum, election or admin port), and plain or TLS as the server expects?');
  }
  if (codes.has('ENOTFOUND') || codes.has('EAI_AGAIN') || said(/\b(ENOTFOUND|EAI_AGAIN)\b/)) {
    hints.push('A host name did not resolve: check its spelling and this machine\'s DNS.');
  }
  return hints;
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
