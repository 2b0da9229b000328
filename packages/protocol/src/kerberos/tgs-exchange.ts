/**
 * The TGS exchange (RFC 4120 §3.3): a service ticket (zookeeper/host@REALM) from a TGT. The
 * request carries PA-TGS-REQ: an AP-REQ with the TGT whose authenticator checksums the request
 * body (key usages 6 and 7); the reply's enc-part is under the TGT's session key (usage 8).
 * The same exchange with the RENEW option (§3.3.3) and the TGT as both the ticket presented and
 * the one asked for renews a renewable TGT: a new one, same session realm, ending later.
 */
import { randomInt } from 'node:crypto';
import { kdcRoundTrip } from './as-exchange.js';
import { checksum, decrypt, encrypt, SUPPORTED_ENCTYPES } from './crypto.js';
import { Credential } from './credential.js';
import { encodeApReq, encodeAuthenticator } from './ap-messages.js';
import { KerberosError, PrincipalUnknownError } from './errors.js';
import { krbErrorToException } from './kdc-errors.js';
import { decodeEncKdcRepPart, encodeKdcReq, encodeKdcReqBody, flagsForTgs, KdcOption, TicketFlag } from './kdc-messages.js';
import type { KdcAddress, KdcSendOptions } from './kdc-transport.js';
import { KeyUsage, MsgType, PaType } from './messages.js';
import { principalText, samePrincipal, tgsPrincipal, type Principal } from './principal.js';
import { flagBits } from './der.js';

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
  const t = (req.now ?? (() => new Date()))();
  return tgsExchange(req, { options: flagsForTgs, till: new Date(t.getTime() + (req.lifetime ?? 86_400_000)) });
}

/**
 * The renew options: RENEW, and RENEWABLE with the TGT's renew-till as rtime, as MIT's
 * krb5_get_renewed_creds sends them (the ticket's common flags as options): a KDC that computes
 * the new ticket's renewable life from the request (MIT 1.18+ kdc_get_ticket_renewtime) issues a
 * ticket that is no longer renewable otherwise.
 */
const RENEW_OPTIONS = flagBits(KdcOption.renew, KdcOption.renewable);

/**
 * Renews a renewable TGT (RFC 4120 §3.3.3): a new TGT with the same session key's successor,
 * ending at most the old lifetime later and never after renew-till. The KDC refuses a ticket that
 * has already ended (MIT: "TGT EXPIRED") or whose renew-till has passed.
 */
export async function renewTgt(req: Omit<TgsRequest, 'service' | 'lifetime'>): Promise<Credential> {
  const service = tgsPrincipal(req.tgt.server.realm);
  const forwardable = req.tgt.flags & flagBits(TicketFlag.forwardable) ? flagBits(KdcOption.forwardable) : 0;
  const renewTill = req.tgt.times.renewTill ?? req.tgt.times.endtime;
  return tgsExchange({ ...req, service }, { options: (RENEW_OPTIONS | forwardable) >>> 0, till: renewTill, rtime: renewTill });
}

async function tgsExchange(req: TgsRequest, what: { options: number; till: Date; rtime?: Date }): Promise<Credential> {
  const t = (req.now ?? (() => new Date()))();
  const nonce = randomInt(1, 0x7fffffff);
  const tgtKey = req.tgt.sessionKey();
  const body = encodeKdcReqBody({
    options: what.options,
    cname: undefined,
    realm: req.service.realm,
    sname: req.service,
    till: what.till,
    rtime: what.rtime,
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
