/**
 * The initiator side of a Kerberos GSS-API security context (RFC 4121): the AP-REQ initial
 * token with a fresh subkey, mutual flags and a sequence number; the AP-REP check (mutual
 * authentication: the server proves it could read the ticket); then Wrap / Unwrap with the
 * context's key and sequence numbers. Never prints its keys.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { inspect } from 'node:util';
import { decodeApRep, decodeEncApRepPart, encodeApReq, encodeAuthenticator, MUTUAL_REQUIRED } from './ap-messages.js';
import { decrypt, encrypt, enctype } from './crypto.js';
import type { Credential } from './credential.js';
import { decode } from './der.js';
import { IntegrityError, KerberosError } from './errors.js';
import { frameContextToken, GSS_CHECKSUM_TYPE, gssChecksum, GssFlag, TokId, unframeContextToken, unwrap, wrap, type WrapKeys } from './gss-tokens.js';
import { krbErrorToException } from './kdc-errors.js';
import { EncryptionKey, REDACTED_TEXT } from './keys.js';
import { decodeKrbError, KeyUsage } from './messages.js';
import { principalText } from './principal.js';

/** The flags asked for by default: mutual authentication, integrity, confidentiality, sequencing. */
export const DEFAULT_GSS_FLAGS = GssFlag.mutual | GssFlag.integ | GssFlag.conf | GssFlag.sequence | GssFlag.replay;

export class GssInitiator {
  readonly #ticket: Credential;
  readonly #subkey: EncryptionKey;
  readonly #now: () => Date;
  #sent: { ctime: Date; cusec: number } | undefined;
  #wrapKeys: WrapKeys | undefined;
  #sendSeq: bigint;
  #recvSeq = 0n;

  constructor(serviceTicket: Credential, options: { flags?: number; now?: () => Date } = {}) {
    this.#ticket = serviceTicket;
    this.flags = options.flags ?? DEFAULT_GSS_FLAGS;
    this.#now = options.now ?? (() => new Date());
    const session = serviceTicket.sessionKey();
    this.#subkey = new EncryptionKey(session.enctype, randomBytes(enctype(session.enctype).keySize));
    this.#sendSeq = BigInt(randomInt(0, 0x3fffffff));
  }

  readonly flags: number;

  /** True once the AP-REP was checked (or at once without mutual authentication). */
  get established(): boolean {
    return this.#wrapKeys !== undefined;
  }

  /** The first context token: the framed AP-REQ. */
  initialToken(): Buffer {
    const key = this.#ticket.sessionKey();
    const now = this.#now();
    const cusec = (now.getTime() % 1000) * 1000 + randomInt(0, 1000);
    this.#sent = { ctime: now, cusec };
    const authenticator = encodeAuthenticator({
      client: this.#ticket.client,
      checksum: { type: GSS_CHECKSUM_TYPE, value: gssChecksum(this.flags) },
      cusec,
      ctime: now,
      subkey: this.#subkey,
      seqNumber: Number(this.#sendSeq),
    });
    const mutual = (this.flags & GssFlag.mutual) !== 0;
    const apReq = encodeApReq(mutual ? MUTUAL_REQUIRED : 0, this.#ticket.ticket(), {
      etype: key.enctype,
      kvno: undefined,
      cipher: encrypt(key, KeyUsage.AP_REQ_AUTHENTICATOR, authenticator),
    });
    if (!mutual) this.#wrapKeys = { key: this.#subkey, acceptorSubkey: false };
    return frameContextToken(TokId.AP_REQ, apReq);
  }

  /** Checks the acceptor's reply token (AP-REP, or a KRB-ERROR thrown as its typed error). */
  acceptReply(token: Buffer): void {
    if (this.#sent === undefined) throw new KerberosError('GSS: a reply before the initial token');
    const { tokId, inner } = unframeContextToken(token);
    const server = this.#ticket.server;
    if (tokId === TokId.KRB_ERROR) throw krbErrorToException(decodeKrbError(decode(inner)), { client: this.#ticket.client, server });
    if (tokId !== TokId.AP_REP) throw new KerberosError(`GSS: expected an AP-REP token from ${principalText(server)}, got TOK_ID 0x${tokId.toString(16)}`);
    const encPart = decodeApRep(decode(inner));
    let part;
    try {
      part = decodeEncApRepPart(decrypt(this.#ticket.sessionKey(), KeyUsage.AP_REP_ENC_PART, encPart.cipher));
    } catch (err) {
      if (err instanceof IntegrityError) throw new IntegrityError(`mutual authentication failed: ${principalText(server)} did not prove it holds the service key`, { cause: err });
      throw err;
    }
    if (part.ctime.getTime() !== Math.floor(this.#sent.ctime.getTime() / 1000) * 1000 || part.cusec !== this.#sent.cusec) {
      throw new IntegrityError(`mutual authentication failed: the AP-REP from ${principalText(server)} answers another authenticator`);
    }
    this.#recvSeq = BigInt(part.seqNumber ?? 0);
    this.#wrapKeys = part.subkey ? { key: part.subkey, acceptorSubkey: true } : { key: this.#subkey, acceptorSubkey: false };
  }

  /** A Wrap token for `message` (sealed when `confidential`). */
  wrap(message: Buffer, confidential: boolean): Buffer {
    const token = wrap(this.#keys(), false, this.#sendSeq, message, confidential);
    this.#sendSeq = (this.#sendSeq + 1n) & 0xffffffffffffffffn;
    return token;
  }

  /** Opens a Wrap token from the acceptor; its sequence number must be the next one expected. */
  unwrap(token: Buffer): { message: Buffer; confidential: boolean } {
    const { message, seq, confidential } = unwrap(this.#keys(), true, token);
    if (seq !== this.#recvSeq) throw new IntegrityError(`GSS: out-of-sequence token from the acceptor (got ${seq}, expected ${this.#recvSeq}): replayed or lost`);
    this.#recvSeq = (this.#recvSeq + 1n) & 0xffffffffffffffffn;
    return { message, confidential };
  }

  #keys(): WrapKeys {
    if (!this.#wrapKeys) throw new KerberosError('GSS: the security context is not established yet');
    return this.#wrapKeys;
  }

  toString(): string {
    return `GssInitiator(${principalText(this.#ticket.client)} → ${principalText(this.#ticket.server)}, ${this.established ? 'established' : 'pending'}, keys ${REDACTED_TEXT})`;
  }

  toJSON(): string {
    return this.toString();
  }

  [inspect.custom](): string {
    return this.toString();
  }
}
