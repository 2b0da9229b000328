/**
 * The TGS exchange (RFC 4120 §3.3): a service ticket (zookeeper/host@REALM) from a TGT. The
 * request carries PA-TGS-REQ: an AP-REQ with the TGT whose authenticator checksums the request
 * body (key usages 6 and 7); the reply's enc-part is under the TGT's session key (usage 8).
 */
import { randomInt } from 'node:crypto';
import { kdcRoundTrip } from './as-exchange.js';
import { checksum, decrypt, encrypt, SUPPORTED_ENCTYPES } from './crypto.js';
import { Credential } from './credential.js';
import { encodeApReq, encodeAuthenticator } from './ap-messages.js';
import { KerberosError, PrincipalUnknownError } from './errors.js';
import { krbErrorToException } from './kdc-errors.js';
import { decodeEncKdcRepPart, encodeKdcReq, encodeKdcReqBody, flagsForTgs } from './kdc-messages.js';
import type { KdcAddress, KdcSendOptions } from './kdc-transport.js';
import { KeyUsage, MsgType, PaType } from './messages.js';
import { principalText, samePrincipal, type Principal } from './principal.js';

export interface TgsRequest {
  readonly tgt: Credential;
  readonly service: Principal;
  readonly kdcs: readonly KdcAddress[];
  readonly lifetime?: number;
  readonly enctypes?: readonly number[];
  readonly transport?: KdcSendOptions;
  readonly now?: () => Date;
}

/** Gets a ticket for `req.service` with the TGT. */
export async function requestServiceTicket(req: TgsRequest): Promise<Credential> {
  const now = req.now ?? (() => new Date());
  const t = now();
  const nonce = randomInt(1, 0x7fffffff);
  const tgtKey = req.tgt.sessionKey();
  const body = encodeKdcReqBody({
    options: flagsForTgs,
    cname: undefined,
    realm: req.service.realm,
    sname: req.service,
    till: new Date(t.getTime() + (req.lifetime ?? 86_400_000)),
    rtime: undefined,
    nonce,
    etypes: req.enctypes ?? SUPPORTED_ENCTYPES,
  });
  const authenticator = encodeAuthenticator({
    client: req.tgt.client,
    checksum: checksum(tgtKey, KeyUsage.TGS_REQ_AUTH_CKSUM, body),
    cusec: (t.getTime() % 1000) * 1000,
    ctime: t,
    subkey: undefined,
    seqNumber: undefined,
  });
  const apReq = encodeApReq(0, req.tgt.ticket(), { etype: tgtKey.enctype, kvno: undefined, cipher: encrypt(tgtKey, KeyUsage.TGS_REQ_AUTHENTICATOR, authenticator) });
  const reply = await kdcRoundTrip(req.kdcs, encodeKdcReq(MsgType.TGS_REQ, [{ type: PaType.TGS_REQ, value: apReq }], body), MsgType.TGS_REP, req.transport);
  if (reply.kind === 'error') throw krbErrorToException(reply.error, { client: req.tgt.client, server: req.service });
  const rep = reply.rep;
  const part = decodeEncKdcRepPart(decrypt(tgtKey, KeyUsage.TGS_REP_ENC_PART_SESSION, rep.encPart.cipher));
  if (part.nonce !== nonce) throw new KerberosError(`the TGS-REP for ${principalText(req.service)} answers another request (nonce mismatch)`);
  // A referral (krbtgt/OTHER@REALM) would need another hop; this client asks in the service's realm only.
  if (!samePrincipal(part.sname, req.service) && part.sname.components[0] === 'krbtgt') {
    throw new PrincipalUnknownError(`the KDC referred ${principalText(req.service)} to ${principalText(part.sname)}: cross-realm referrals are not supported; name the service's realm`);
  }
  return new Credential(rep.cname, part.sname, rep.ticket, part.key, { authtime: part.authtime, starttime: part.starttime, endtime: part.endtime, renewTill: part.renewTill }, part.flags);
}
