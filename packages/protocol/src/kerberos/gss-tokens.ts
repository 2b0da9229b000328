/**
 * GSS-API tokens of the Kerberos mechanism: the framing of context tokens (RFC 2743 §3.1, with
 * RFC 1964 §1.1's 2-byte TOK_ID), the authenticator checksum 0x8003 that carries the context
 * flags (RFC 4121 §4.1.1), and per-message Wrap tokens (RFC 4121 §4.2.6.2), sealed or not, with
 * the RRC rotation undone on receipt. Pure: keys, sequence numbers and direction are inputs.
 */
import { decrypt, encrypt, checksum, verifyChecksum } from './crypto.js';
import { application, decode } from './der.js';
import { IntegrityError, KerberosDecodeError } from './errors.js';
import type { EncryptionKey } from './keys.js';

/** The Kerberos V5 mechanism's OID, 1.2.840.113554.1.2.2, as its DER encoding. */
export const KRB5_MECH_OID = Buffer.from('06092a864886f712010202', 'hex');

/** TOK_ID values of context tokens (RFC 4121 §4.1). */
export const TokId = { AP_REQ: 0x0100, AP_REP: 0x0200, KRB_ERROR: 0x0300, WRAP: 0x0504 } as const;

/** Context flags (RFC 2744 values, carried little-endian in the 0x8003 checksum). */
export const GssFlag = { deleg: 1, mutual: 2, replay: 4, sequence: 8, conf: 16, integ: 32 } as const;

/** The authenticator checksum type of RFC 4121 §4.1.1. */
export const GSS_CHECKSUM_TYPE = 0x8003;

/** The 0x8003 checksum value: Lgth 16, no channel bindings (16 zero bytes), the flags; all little-endian. */
export function gssChecksum(flags: number): Buffer {
  const v = Buffer.alloc(24);
  v.writeUInt32LE(16, 0);
  v.writeUInt32LE(flags, 20);
  return v;
}

/** An initial or reply context token: [APPLICATION 0] { OID, TOK_ID, inner message }. */
export function frameContextToken(tokId: number, inner: Buffer): Buffer {
  const id = Buffer.alloc(2);
  id.writeUInt16BE(tokId, 0);
  return application(0, Buffer.concat([KRB5_MECH_OID, id, inner]));
}

export function unframeContextToken(token: Buffer): { tokId: number; inner: Buffer } {
  const outer = decode(token);
  if (outer.identifier !== 0x60) throw new KerberosDecodeError('GSS token: not an [APPLICATION 0] context token');
  const body = outer.content;
  if (!body.subarray(0, KRB5_MECH_OID.length).equals(KRB5_MECH_OID) || body.length < KRB5_MECH_OID.length + 2) throw new KerberosDecodeError('GSS token: not the Kerberos V5 mechanism');
  return { tokId: body.readUInt16BE(KRB5_MECH_OID.length), inner: body.subarray(KRB5_MECH_OID.length + 2) };
}

/** Wrap token flags (RFC 4121 §4.2.2). */
const SENT_BY_ACCEPTOR = 0x01;
const SEALED = 0x02;
const ACCEPTOR_SUBKEY = 0x04;

/** Key usages of RFC 4121 §2 (KG-USAGE-ACCEPTOR-SEAL, KG-USAGE-INITIATOR-SEAL; the SIGN ones are MIC tokens', not used here). */
const Usage = { acceptorSeal: 22, initiatorSeal: 24 } as const;

export interface WrapKeys {
  readonly key: EncryptionKey;
  /** True when `key` is the acceptor's subkey (the AcceptorSubkey flag). */
  readonly acceptorSubkey: boolean;
}

function header(flags: number, ec: number, rrc: number, seq: bigint): Buffer {
  const h = Buffer.alloc(16);
  h.writeUInt16BE(TokId.WRAP, 0);
  h[2] = flags;
  h[3] = 0xff;
  h.writeUInt16BE(ec, 4);
  h.writeUInt16BE(rrc, 6);
  h.writeBigUInt64BE(seq, 8);
  return h;
}

/** Builds a Wrap token (RRC 0, EC 0 when sealed: CTS needs no padding). */
export function wrap(keys: WrapKeys, fromAcceptor: boolean, seq: bigint, message: Buffer, confidential: boolean): Buffer {
  const flags = (fromAcceptor ? SENT_BY_ACCEPTOR : 0) | (confidential ? SEALED : 0) | (keys.acceptorSubkey ? ACCEPTOR_SUBKEY : 0);
  if (confidential) {
    const h = header(flags, 0, 0, seq);
    const usage = fromAcceptor ? Usage.acceptorSeal : Usage.initiatorSeal;
    return Buffer.concat([h, encrypt(keys.key, usage, Buffer.concat([message, h]))]);
  }
  // Wrap tokens use the SEAL usages whether sealed or not; SIGN is for MIC tokens (RFC 4121 §2).
  const usage = fromAcceptor ? Usage.acceptorSeal : Usage.initiatorSeal;
  const sum = checksum(keys.key, usage, Buffer.concat([message, header(flags, 0, 0, seq)])).value;
  return Buffer.concat([header(flags, sum.length, 0, seq), message, sum]);
}

/** Rotates `data` left by `rrc` bytes (undoing the sender's right rotation). */
function unrotate(data: Buffer, rrc: number): Buffer {
  if (data.length === 0) return data;
  const r = rrc % data.length;
  return r === 0 ? data : Buffer.concat([data.subarray(r), data.subarray(0, r)]);
}

/** Checks and opens a Wrap token from the peer; returns the message, its sequence number and whether it was sealed. */
export function unwrap(keys: WrapKeys, fromAcceptor: boolean, token: Buffer): { message: Buffer; seq: bigint; confidential: boolean } {
  if (token.length < 16 || token.readUInt16BE(0) !== TokId.WRAP || token[3] !== 0xff) throw new KerberosDecodeError('GSS Wrap token: bad header (TOK_ID 05 04, filler FF expected)');
  const flags = token[2] as number;
  if (((flags & SENT_BY_ACCEPTOR) !== 0) !== fromAcceptor) throw new IntegrityError('GSS Wrap token: the direction flag is wrong (a reflected token?)');
  if ((flags & ACCEPTOR_SUBKEY) !== 0 && !keys.acceptorSubkey) throw new IntegrityError('GSS Wrap token: sealed with an acceptor subkey this context does not have');
  const ec = token.readUInt16BE(4);
  const rrc = token.readUInt16BE(6);
  const seq = token.readBigUInt64BE(8);
  const body = unrotate(token.subarray(16), rrc);
  if ((flags & SEALED) !== 0) {
    const plain = decrypt(keys.key, fromAcceptor ? Usage.acceptorSeal : Usage.initiatorSeal, body);
    if (plain.length < 16 + ec) throw new KerberosDecodeError('GSS Wrap token: sealed data shorter than its header copy');
    const inner = plain.subarray(plain.length - 16);
    // The encrypted header copy has RRC 0; everything else must match what was sent in clear.
    if (!inner.equals(header(flags, ec, 0, seq))) throw new IntegrityError('GSS Wrap token: the encrypted header does not match the clear one');
    return { message: plain.subarray(0, plain.length - 16 - ec), seq, confidential: true };
  }
  if (body.length < ec) throw new KerberosDecodeError('GSS Wrap token: shorter than its checksum');
  const message = body.subarray(0, body.length - ec);
  verifyChecksum(keys.key, fromAcceptor ? Usage.acceptorSeal : Usage.initiatorSeal, Buffer.concat([message, header(flags, 0, 0, seq)]), body.subarray(body.length - ec));
  return { message, seq, confidential: false };
}
