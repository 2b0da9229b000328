/**
 * The KDC exchange messages (RFC 4120 §5.4): KDC-REQ and its body out (AS-REQ, TGS-REQ), KDC-REP
 * (AS-REP, TGS-REP) and the EncKDCRepPart inside it in, and PA-ENC-TS-ENC for pre-authentication.
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
import { decodeEncryptedData, decodeEncryptionKey, decodePaDataList, decodeTicket, encodePaData, MsgType, type EncryptedData, type PaData, type TicketInfo } from './messages.js';
import { decodePrincipalName, encodePrincipalName, type Principal } from './principal.js';

/** KDCOptions bits (RFC 4120 §5.4.1) as a uint32 (bit 0 most significant). */
export const KdcOption = { forwardable: 1, proxiable: 3, renewable: 8, canonicalize: 15, renewableOk: 27, renew: 30 } as const;

/** The options a client asks for by default: forwardable, renewable, canonicalize, renewable-ok (as kinit). */
export const DEFAULT_KDC_OPTIONS = flagBits(KdcOption.forwardable, KdcOption.renewable, KdcOption.canonicalize, KdcOption.renewableOk);

/** TicketFlags bits (RFC 4120 §5.3). */
export const TicketFlag = { forwardable: 1, forwarded: 2, proxiable: 3, renewable: 8, initial: 9, preAuthent: 10, okAsDelegate: 13 } as const;

export interface KdcReqBody {
  readonly options: number;
  /** The client (AS-REQ only). */
  readonly cname: Principal | undefined;
  /** The realm of the server (and of the client in an AS-REQ). */
  readonly realm: string;
  readonly sname: Principal;
  readonly till: Date;
  readonly rtime: Date | undefined;
  readonly nonce: number;
  readonly etypes: readonly number[];
}

/** KDC-REQ-BODY ::= SEQUENCE { kdc-options [0], cname [1], realm [2], sname [3], from [4], till [5], rtime [6], nonce [7], etype [8], ... } */
export function encodeKdcReqBody(b: KdcReqBody): Buffer {
  return sequence([
    explicit(0, kerberosFlags(b.options)),
    explicit(1, b.cname && encodePrincipalName(b.cname)),
    explicit(2, generalString(b.realm)),
    explicit(3, encodePrincipalName(b.sname)),
    explicit(5, kerberosTime(b.till)),
    explicit(6, b.rtime && kerberosTime(b.rtime)),
    explicit(7, integer(b.nonce)),
    explicit(8, sequence(b.etypes.map((e) => integer(e)))),
  ]);
}

/** AS-REQ ::= [APPLICATION 10] KDC-REQ; TGS-REQ ::= [APPLICATION 12] KDC-REQ. `body` is the encoded KDC-REQ-BODY. */
export function encodeKdcReq(msgType: typeof MsgType.AS_REQ | typeof MsgType.TGS_REQ, padata: readonly PaData[], body: Buffer): Buffer {
  const kdcReq = sequence([
    explicit(1, integer(5)),
    explicit(2, integer(msgType)),
    explicit(3, padata.length > 0 ? sequence(padata.map(encodePaData)) : undefined),
    explicit(4, body),
  ]);
  return application(msgType, kdcReq);
}

/** PA-ENC-TS-ENC ::= SEQUENCE { patimestamp [0] KerberosTime, pausec [1] Microseconds OPTIONAL } */
export function encodePaEncTsEnc(now: Date): Buffer {
  return sequence([explicit(0, kerberosTime(now)), explicit(1, integer((now.getTime() % 1000) * 1000))]);
}

/** An AS-REP or TGS-REP before its enc-part is decrypted. */
export interface KdcRep {
  readonly msgType: number;
  readonly padata: PaData[];
  readonly crealm: string;
  readonly cname: Principal;
  readonly ticket: TicketInfo;
  readonly encPart: EncryptedData;
}

/** KDC-REP ::= SEQUENCE { pvno [0], msg-type [1], padata [2] OPTIONAL, crealm [3], cname [4], ticket [5], enc-part [6] } */
export function decodeKdcRep(t: Tlv, msgType: typeof MsgType.AS_REP | typeof MsgType.TGS_REP): KdcRep {
  const what = msgType === MsgType.AS_REP ? 'AS-REP' : 'TGS-REP';
  const f = fields(unwrapApplication(t, msgType, what), what);
  if (asInteger(f.required(1, 'msg-type')) !== msgType) throw new KerberosDecodeError(`${what}: wrong msg-type`);
  const padata = f.optional(2);
  const crealm = asGeneralString(f.required(3, 'crealm'));
  return {
    msgType,
    padata: padata ? decodePaDataList(padata) : [],
    crealm,
    cname: decodePrincipalName(f.required(4, 'cname'), crealm),
    ticket: decodeTicket(f.required(5, 'ticket')),
    encPart: decodeEncryptedData(f.required(6, 'enc-part')),
  };
}

/** The decrypted EncKDCRepPart: the session key and the ticket's times and flags. */
export interface EncKdcRepPart {
  readonly key: EncryptionKey;
  readonly nonce: number;
  readonly flags: number;
  readonly authtime: Date;
  readonly starttime: Date | undefined;
  readonly endtime: Date;
  readonly renewTill: Date | undefined;
  readonly srealm: string;
  readonly sname: Principal;
}

/**
 * EncASRepPart ::= [APPLICATION 25], EncTGSRepPart ::= [APPLICATION 26] EncKDCRepPart. MIT's
 * KDC answers an AS-REQ with tag 26 too (RFC 4120 §5.4.2 asks clients to accept either).
 */
export function decodeEncKdcRepPart(plain: Buffer): EncKdcRepPart {
  const outer = decode(plain);
  const tag = outer.tagNumber === 25 ? 25 : 26;
  const f = fields(unwrapApplication(outer, tag, 'EncKDCRepPart'), 'EncKDCRepPart');
  const starttime = f.optional(6);
  const renewTill = f.optional(8);
  const srealm = asGeneralString(f.required(9, 'srealm'));
  return {
    key: decodeEncryptionKey(f.required(0, 'key')),
    nonce: asInteger(f.required(2, 'nonce')),
    flags: asKerberosFlags(f.required(4, 'flags')),
    authtime: asKerberosTime(f.required(5, 'authtime')),
    starttime: starttime && asKerberosTime(starttime),
    endtime: asKerberosTime(f.required(7, 'endtime')),
    renewTill: renewTill && asKerberosTime(renewTill),
    srealm,
    sname: decodePrincipalName(f.required(10, 'sname'), srealm),
  };
}

/** The options of a TGS-REQ for a service ticket: forwardable and canonicalize. */
export const flagsForTgs = flagBits(KdcOption.forwardable, KdcOption.canonicalize);
