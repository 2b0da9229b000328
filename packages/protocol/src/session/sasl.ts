/**
 * SASL DIGEST-MD5 (RFC 2831) as ZooKeeper's server speaks it with a JAAS `DigestLoginModule`:
 * the client sends an empty initial token, answers the server's challenge, then checks the
 * server's `rspauth`. Pure: the session does the round trips (op `sasl`, GetSASLRequest /
 * SetSASLResponse) and calls {@link DigestMd5Client.step} with each server token.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { GssapiOptions } from '../kerberos/gssapi-login.js';

/** SASL credentials (the JAAS `Client` section of a Java application): DIGEST-MD5, or GSSAPI (Kerberos). */
export type SaslOptions = DigestMd5Options | GssapiOptions;

/** SASL DIGEST-MD5 credentials (a JAAS `DigestLoginModule` user on the server). */
export interface DigestMd5Options {
  mechanism: 'DIGEST-MD5';
  username: string;
  password: string;
  /** The SASL protocol (Java's `zookeeper.sasl.client.username`, default `zookeeper`). */
  protocol?: string;
  /** The server name (Java's `zookeeper.sasl.client.canonicalize...`; `zk-sasl-md5` for DIGEST-MD5). */
  serverName?: string;
}

/** A SASL mechanism failed: bad challenge, wrong server proof. */
export class SaslError extends Error {
  override name = 'SaslError';
}

function md5(...parts: Array<string | Buffer>): Buffer {
  const h = createHash('md5');
  for (const p of parts) h.update(p);
  return h.digest();
}

const hex = (b: Buffer): string => b.toString('hex');

/** Parses `key=value,key="quoted, value"` directives. */
export function parseDirectives(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /\s*([a-zA-Z0-9-]+)\s*=\s*("((?:[^"\\]|\\.)*)"|[^,]*)\s*,?/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    if (m[0] === '') break;
    const key = (m[1] as string).toLowerCase();
    const value = m[3] !== undefined ? m[3].replace(/\\(.)/g, '$1') : (m[2] as string).trim();
    if (!out.has(key)) out.set(key, value);
  }
  return out;
}

const quote = (s: string) => `"${s.replace(/(["\\])/g, '\\$1')}"`;

/** The DIGEST-MD5 client state machine. */
export class DigestMd5Client {
  readonly #options: Required<DigestMd5Options>;
  readonly #cnonce: string;
  #expectedRspauth: string | undefined;
  #complete = false;

  constructor(options: DigestMd5Options, cnonce: string = randomBytes(16).toString('base64')) {
    this.#options = { protocol: 'zookeeper', serverName: 'zk-sasl-md5', ...options };
    this.#cnonce = cnonce;
  }

  /** True once the server proved it knows the password too. */
  get complete(): boolean {
    return this.#complete;
  }

  /** The first token: DIGEST-MD5 has no initial response, so an empty one. */
  initial(): Buffer {
    return Buffer.alloc(0);
  }

  /**
   * The answer to a server token: the digest response to the challenge, then `undefined` after
   * checking `rspauth` (nothing more to send).
   */
  step(serverToken: Buffer): Buffer | undefined {
    const directives = parseDirectives(serverToken.toString('utf8'));
    if (this.#expectedRspauth !== undefined) {
      if (directives.get('rspauth') !== this.#expectedRspauth) throw new SaslError('DIGEST-MD5: the server did not prove knowledge of the password (rspauth mismatch)');
      this.#complete = true;
      return undefined;
    }
    const nonce = directives.get('nonce');
    if (!nonce) throw new SaslError('DIGEST-MD5: challenge without nonce');
    const qops = (directives.get('qop') ?? 'auth').split(',').map((q) => q.trim());
    if (!qops.includes('auth')) throw new SaslError(`DIGEST-MD5: server offers qop ${qops.join(',')}, only auth is supported`);
    const realm = directives.get('realm') ?? '';
    const { username, password, protocol, serverName } = this.#options;
    const digestUri = `${protocol}/${serverName}`;
    const nc = '00000001';
    const utf8 = directives.get('charset')?.toLowerCase() === 'utf-8';
    const enc = (s: string) => Buffer.from(s, utf8 && !/^[\u0000-\u00ff]*$/.test(s) ? 'utf8' : 'latin1');
    const a1 = Buffer.concat([md5(enc(username), ':', enc(realm), ':', enc(password)), Buffer.from(`:${nonce}:${this.#cnonce}`)]);
    const ha1 = hex(md5(a1));
    const kd = (ha2: string) => hex(md5(`${ha1}:${nonce}:${nc}:${this.#cnonce}:auth:${ha2}`));
    const response = kd(hex(md5(`AUTHENTICATE:${digestUri}`)));
    this.#expectedRspauth = kd(hex(md5(`:${digestUri}`)));
    const fields = [
      `username=${quote(username)}`,
      ...(directives.has('realm') ? [`realm=${quote(realm)}`] : []),
      `nonce=${quote(nonce)}`,
      `nc=${nc}`,
      `cnonce=${quote(this.#cnonce)}`,
      `digest-uri=${quote(digestUri)}`,
      'maxbuf=65536',
      `response=${response}`,
      'qop=auth',
      ...(utf8 ? ['charset=utf-8'] : []),
    ];
    return Buffer.from(fields.join(','), utf8 ? 'utf8' : 'latin1');
  }
}
