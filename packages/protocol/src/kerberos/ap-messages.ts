/**
 * The client/server exchange's messages (RFC 4120 §5.5): AP-REQ with its Authenticator out,
 * AP-REP with its EncAPRepPart in; and, for tests that play the server, EncTicketPart in and
 * AP-REP out.
 */
import {
  application,
  asGeneralString,
  asInteger,
  asKerberosFlags,
  asKerberosTime,
  decode,
  explicit,
  fields,
  flagBits,
  generalString,
  integer,
  kerberosFlags,
  kerberosTime,
  sequence,
  unwrapApplication,
  type Tlv,
} from './der.js';
import { KerberosDecodeError } from './errors.js';
import type { EncryptionKey } from './keys.js';
import { decodeChecksum, decodeEncryptedData, decodeEncryptionKey, decodeTicket, encodeChecksum, encodeEncryptedData, encodeEncryptionKey, MsgType, type EncryptedData, type TicketInfo } from './messages.js';
import { decodePrincipalName, encodePrincipalName, type Principal } from './principal.js';

/** APOptions bits (RFC 4120 §5.5.1). */
export const ApOption = { useSessionKey: 1, mutualRequired: 2 } as const;

export interface Authenticator {
  readonly client: Principal;
  readonly checksum: { type: number; value: Buffer } | undefined;
  /** Microseconds within ctime's second. */
  readonly cusec: number;
  readonly ctime: Date;
  readonly subkey: EncryptionKey | undefined;
  readonly seqNumber: number | undefined;
}

/** Authenticator ::= [APPLICATION 2] SEQUENCE { authenticator-vno [0], crealm [1], cname [2], cksum [3], cusec [4], ctime [5], subkey [6], seq-number [7] } */
export function encodeAuthenticator(a: Authenticator): Buffer {
  return application(
    2,
    sequence([
      explicit(0, integer(5)),
      explicit(1, generalString(a.client.realm)),
      explicit(2, encodePrincipalName(a.client)),
      explicit(3, a.checksum && encodeChecksum(a.checksum.type, a.checksum.value)),
      explicit(4, integer(a.cusec)),
      explicit(5, kerberosTime(a.ctime)),
      explicit(6, a.subkey && encodeEncryptionKey(a.subkey)),
      explicit(7, a.seqNumber === undefined ? undefined : integer(a.seqNumber)),
    ]),
  );
}

export function decodeAuthenticator(plain: Buffer): Authenticator {
  const f = fields(unwrapApplication(decode(plain), 2, 'Authenticator'), 'Authenticator');
  const realm = asGeneralString(f.required(1, 'crealm'));
  const cksum = f.optional(3);
  const subkey = f.optional(6);
  const seq = f.optional(7);
  return {
    client: decodePrincipalName(f.required(2, 'cname'), realm),
    checksum: cksum && decodeChecksum(cksum),
    cusec: asInteger(f.required(4, 'cusec')),
    ctime: asKerberosTime(f.required(5, 'ctime')),
    subkey: subkey && decodeEncryptionKey(subkey),
    seqNumber: seq && asInteger(seq),
  };
}

/** AP-REQ ::= [APPLICATION 14] SEQUENCE { pvno [0], msg-type [1], ap-options [2], ticket [3], authenticator [4] } */
export function encodeApReq(options: number, ticket: TicketInfo, authenticator: EncryptedData): Buffer {
  return application(
    MsgType.AP_REQ,
    sequence([explicit(0, integer(5)), explicit(1, integer(MsgType.AP_REQ)), explicit(2, kerberosFlags(options)), explicit(3, ticket.raw), explicit(4, encodeEncryptedData(authenticator))]),
  );
}

export function decodeApReq(t: Tlv): { options: number; ticket: TicketInfo; authenticator: EncryptedData } {
  const f = fields(unwrapApplication(t, MsgType.AP_REQ, 'AP-REQ'), 'AP-REQ');
  return { options: asKerberosFlags(f.required(2, 'ap-options')), ticket: decodeTicket(f.required(3, 'ticket')), authenticator: decodeEncryptedData(f.required(4, 'authenticator')) };
}

export const MUTUAL_REQUIRED = flagBits(ApOption.mutualRequired);

/** AP-REP ::= [APPLICATION 15] SEQUENCE { pvno [0], msg-type [1], enc-part [2] } */
export function decodeApRep(t: Tlv): EncryptedData {
  const f = fields(unwrapApplication(t, MsgType.AP_REP, 'AP-REP'), 'AP-REP');
  if (asInteger(f.required(1, 'msg-type')) !== MsgType.AP_REP) throw new KerberosDecodeError('AP-REP: wrong msg-type');
  return decodeEncryptedData(f.required(2, 'enc-part'));
}

export function encodeApRep(encPart: EncryptedData): Buffer {
  return application(MsgType.AP_REP, sequence([explicit(0, integer(5)), explicit(1, integer(MsgType.AP_REP)), explicit(2, encodeEncryptedData(encPart))]));
}

export interface EncApRepPart {
  readonly ctime: Date;
  readonly cusec: number;
  readonly subkey: EncryptionKey | undefined;
  readonly seqNumber: number | undefined;
}

/** EncAPRepPart ::= [APPLICATION 27] SEQUENCE { ctime [0], cusec [1], subkey [2] OPTIONAL, seq-number [3] OPTIONAL } */
export function decodeEncApRepPart(plain: Buffer): EncApRepPart {
  const f = fields(unwrapApplication(decode(plain), 27, 'EncAPRepPart'), 'EncAPRepPart');
  const subkey = f.optional(2);
  const seq = f.optional(3);
  return { ctime: asKerberosTime(f.required(0, 'ctime')), cusec: asInteger(f.required(1, 'cusec')), subkey: subkey && decodeEncryptionKey(subkey), seqNumber: seq && asInteger(seq) };
}

export function encodeEncApRepPart(p: EncApRepPart): Buffer {
  return application(
    27,
    sequence([
      explicit(0, kerberosTime(p.ctime)),
      explicit(1, integer(p.cusec)),
      explicit(2, p.subkey && encodeEncryptionKey(p.subkey)),
      explicit(3, p.seqNumber === undefined ? undefined : integer(p.seqNumber)),
    ]),
  );
}

/** What a service reads from its ticket: EncTicketPart ::= [APPLICATION 3] SEQUENCE { flags [0], key [1], crealm [2], cname [3], ..., endtime [7] } */
export function decodeEncTicketPart(plain: Buffer): { flags: number; key: EncryptionKey; client: Principal; endtime: Date } {
  const f = fields(unwrapApplication(decode(plain), 3, 'EncTicketPart'), 'EncTicketPart');
  const crealm = asGeneralString(f.required(2, 'crealm'));
  return {
    flags: asKerberosFlags(f.required(0, 'flags')),
    key: decodeEncryptionKey(f.required(1, 'key')),
    client: decodePrincipalName(f.required(3, 'cname'), crealm),
    endtime: asKerberosTime(f.required(7, 'endtime')),
  };
}
