/**
 * The SASL GSSAPI mechanism, client side (RFC 4752 §3.1), as ZooKeeper's server runs it through
 * Java's SaslServer: the AP-REQ context token first, the AP-REP checked, an empty response once
 * the context is established, then the server's wrapped offer of security layers and maximum
 * buffer, answered with a wrapped choice of "no security layer" (ZooKeeper's qop is auth) and
 * an optional authorization identity. Pure once given the GSS context: the session does the round trips.
 */
import { inspect } from 'node:util';
import { KerberosError } from './errors.js';
import type { GssInitiator } from './gss-initiator.js';

/** Security-layer bits of RFC 4752 §3.3. */
export const SecurityLayer = { none: 1, integrity: 2, confidentiality: 4 } as const;

type State = 'start' | 'context' | 'negotiate' | 'final' | 'complete';

export class GssapiSaslClient {
  readonly #context: GssInitiator;
  readonly #authzid: string;
  #state: State = 'start';

  constructor(context: GssInitiator, options: { authzid?: string } = {}) {
    this.#context = context;
    this.#authzid = options.authzid ?? '';
  }

  get complete(): boolean {
    return this.#state === 'complete';
  }

  /** The initial response: the GSS initial context token (GSSAPI has one, RFC 4752 §3.1). */
  initial(): Buffer {
    if (this.#state !== 'start') throw new KerberosError('SASL GSSAPI: initial() called twice');
    this.#state = 'context';
    return this.#context.initialToken();
  }

  /** The answer to a server token; `undefined` when nothing more is sent (authentication complete). */
  step(serverToken: Buffer): Buffer | undefined {
    switch (this.#state) {
      case 'start':
        throw new KerberosError('SASL GSSAPI: a server token before the initial response');
      case 'context':
        // With mutual authentication the server's first token is the AP-REP; once it checks, the
        // context is complete and has no token to send, so the response is empty.
        this.#context.acceptReply(serverToken);
        this.#state = 'negotiate';
        return Buffer.alloc(0);
      case 'negotiate': {
        const { message } = this.#context.unwrap(serverToken);
        if (message.length !== 4) throw new KerberosError(`SASL GSSAPI: the server's security-layer offer is ${message.length} bytes, not 4`);
        const offered = message[0] as number;
        if ((offered & SecurityLayer.none) === 0) throw new KerberosError(`SASL GSSAPI: the server requires a security layer (offer 0x${offered.toString(16)}); this client authenticates only (set the server's qop to auth)`);
        this.#state = 'final';
        // "No security layer" with a maximum buffer of 0, then the authorization identity.
        return this.#context.wrap(Buffer.concat([Buffer.from([SecurityLayer.none, 0, 0, 0]), Buffer.from(this.#authzid, 'utf8')]), false);
      }
      case 'final':
        if (serverToken.length > 0) throw new KerberosError('SASL GSSAPI: unexpected data from the server after the security-layer choice');
        this.#state = 'complete';
        return undefined;
      case 'complete':
        throw new KerberosError('SASL GSSAPI: a server token after completion');
    }
  }

  toString(): string {
    return `GssapiSaslClient(${this.#state}, ${inspect(this.#context)})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}
