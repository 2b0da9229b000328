/**
 * The records every Kerberos exchange shares (RFC 4120 §5.2, §5.9.1, §5.2.7): EncryptedData,
 * EncryptionKey, Checksum, Ticket, PA-DATA and ETYPE-INFO2, and KRB-ERROR. Message type and
 * pre-authentication numbers carry their RFC names.
 */
import {
  asGeneralString,
  asInteger,
  asKerberosTime,
  asOctetString,
  decode,
  explicit,
  fields,
  integer,
  octetString,
  sequence,
  sequenceOf,
  unwrapApplication,
  type Tlv,
} from './der.js';
import { KerberosDecodeError } from './errors.js';
import { EncryptionKey } from './keys.js';
import { decodePrincipalName, type Principal } from './principal.js';

/** msg-type values (RFC 4120 §5.10 [APPLICATION n] numbers). */
export const MsgType = { AS_REQ: 10, AS_REP: 11, TGS_REQ: 12, TGS_REP: 13, AP_REQ: 14, AP_REP: 15, KRB_ERROR: 30 } as const;

/** padata-type values (RFC 4120 §7.5.2, RFC 6113). */
export const PaType = { TGS_REQ: 1, ENC_TIMESTAMP: 2, ETYPE_INFO: 11, ETYPE_INFO2: 19, FX_FAST: 136 } as const;

/** Key usage numbers (RFC 4120 §7.5.1). */
export const KeyUsage = {
  PA_ENC_TIMESTAMP: 1,
  TICKET: 2,
  AS_REP_ENC_PART: 3,
  TGS_REQ_AUTH_CKSUM: 6,
  TGS_REQ_AUTHENTICATOR: 7,
  TGS_REP_ENC_PART_SESSION: 8,
  TGS_REP_ENC_PART_SUBKEY: 9,
  AP_REQ_AUTHENTICATOR: 11,
  AP_REP_ENC_PART: 12,
} as const;

export interface EncryptedData {
  readonly etype: number;
  readonly kvno: number | undefined;
  readonly cipher: Buffer;
}

/** EncryptedData ::= SEQUENCE { etype [0] Int32, kvno [1] UInt32 OPTIONAL, cipher [2] OCTET STRING } */
export function encodeEncryptedData(d: EncryptedData): Buffer {
  return sequence([explicit(0, integer(d.etype)), explicit(1, d.kvno === undefined ? undefined : integer(d.kvno)), explicit(2, octetString(d.cipher))]);
}

export function decodeEncryptedData(t: Tlv): EncryptedData {
  const f = fields(t, 'EncryptedData');
  const kvno = f.optional(1);
  return { etype: asInteger(f.required(0, 'etype')), kvno: kvno && asInteger(kvno), cipher: asOctetString(f.required(2, 'cipher')) };
}

/** EncryptionKey ::= SEQUENCE { keytype [0] Int32, keyvalue [1] OCTET STRING } */
export function encodeEncryptionKey(k: EncryptionKey): Buffer {
  return sequence([explicit(0, integer(k.enctype)), explicit(1, octetString(k.material()))]);
}

export function decodeEncryptionKey(t: Tlv): EncryptionKey {
  const f = fields(t, 'EncryptionKey');
  return new EncryptionKey(asInteger(f.required(0, 'keytype')), asOctetString(f.required(1, 'keyvalue')));
}

/** Checksum ::= SEQUENCE { cksumtype [0] Int32, checksum [1] OCTET STRING } */
export function encodeChecksum(type: number, value: Buffer): Buffer {
  return sequence([explicit(0, integer(type)), explicit(1, octetString(value))]);
}

export function decodeChecksum(t: Tlv): { type: number; value: Buffer } {
  const f = fields(t, 'Checksum');
  return { type: asInteger(f.required(0, 'cksumtype')), value: asOctetString(f.required(1, 'checksum')) };
}

/** A Ticket as received: its encoding kept whole (it is sent back unchanged), with its outer fields. */
export interface TicketInfo {
  readonly raw: Buffer;
  readonly realm: string;
  readonly sname: Principal;
  readonly encPart: EncryptedData;
}

/** Ticket ::= [APPLICATION 1] SEQUENCE { tkt-vno [0], realm [1], sname [2], enc-part [3] } */
export function decodeTicket(t: Tlv): TicketInfo {
  const f = fields(unwrapApplication(t, 1, 'Ticket'), 'Ticket');
  if (asInteger(f.required(0, 'tkt-vno')) !== 5) throw new KerberosDecodeError('Ticket: tkt-vno is not 5');
  const realm = asGeneralString(f.required(1, 'realm'));
  return { raw: Buffer.from(t.raw), realm, sname: decodePrincipalName(f.required(2, 'sname'), realm), encPart: decodeEncryptedData(f.required(3, 'enc-part')) };
}

export interface PaData {
  readonly type: number;
  readonly value: Buffer;
}

/** PA-DATA ::= SEQUENCE { padata-type [1] Int32, padata-value [2] OCTET STRING } */
export function encodePaData(p: PaData): Buffer {
  return sequence([explicit(1, integer(p.type)), explicit(2, octetString(p.value))]);
}

export function decodePaDataList(t: Tlv): PaData[] {
  return sequenceOf(t, 'METHOD-DATA').map((e) => {
    const f = fields(e, 'PA-DATA');
    return { type: asInteger(f.required(1, 'padata-type')), value: asOctetString(f.required(2, 'padata-value')) };
  });
}

/** One ETYPE-INFO2-ENTRY: how the KDC wants the key made (salt and iteration parameters). */
export interface EtypeInfo2 {
  readonly etype: number;
  readonly salt: string | undefined;
  readonly s2kparams: Buffer | undefined;
}

export function decodeEtypeInfo2(value: Buffer): EtypeInfo2[] {
  return sequenceOf(decode(value), 'ETYPE-INFO2').map((e) => {
    const f = fields(e, 'ETYPE-INFO2-ENTRY');
    const salt = f.optional(1);
    const params = f.optional(2);
    return { etype: asInteger(f.required(0, 'etype')), salt: salt && asGeneralString(salt), s2kparams: params && asOctetString(params) };
  });
}

/** A decoded KRB-ERROR (only what the client acts on or reports). */
export interface KrbError {
  readonly code: number;
  readonly serverTime: Date;
  readonly realm: string;
  readonly sname: Principal | undefined;
  readonly text: string | undefined;
  readonly data: Buffer | undefined;
}

/** KRB-ERROR ::= [APPLICATION 30] SEQUENCE { ..., stime [4], susec [5], error-code [6], ..., realm [9], sname [10], e-text [11], e-data [12] } */
export function decodeKrbError(t: Tlv): KrbError {
  const f = fields(unwrapApplication(t, 30, 'KRB-ERROR'), 'KRB-ERROR');
  const realm = asGeneralString(f.required(9, 'realm'));
  const sname = f.optional(10);
  const text = f.optional(11);
  const data = f.optional(12);
  return {
    code: asInteger(f.required(6, 'error-code')),
    serverTime: asKerberosTime(f.required(4, 'stime')),
    realm,
    sname: sname && decodePrincipalName(sname, realm),
    text: text && asGeneralString(text),
    data: data && asOctetString(data),
  };
}
