/**
 * The AS exchange (RFC 4120 §3.1): a TGT for a client from its password or keytab. The first
 * AS-REQ goes without pre-authentication; a KDC that answers KDC_ERR_PREAUTH_REQUIRED names the
 * enctype, salt and iteration count it wants (PA-ETYPE-INFO2, RFC 4120 §5.2.7.5), and the second
 * AS-REQ carries PA-ENC-TIMESTAMP (§5.2.7.2) encrypted with the key made from them.
 */
import { randomInt } from 'node:crypto';
import { decrypt, encrypt, SUPPORTED_ENCTYPES } from './crypto.js';
import { decode } from './der.js';
import { IntegrityError, KerberosDecodeError, KerberosError, NoUsableEnctypeError, PreauthFailedError } from './errors.js';
import { Credential, wrongKeysHint, type LongTermKeys } from './credential.js';
import { krbErrorToException, KrbErrorCode } from './kdc-errors.js';
import { decodeEncKdcRepPart, decodeKdcRep, DEFAULT_KDC_OPTIONS, encodeKdcReq, encodeKdcReqBody, encodePaEncTsEnc, type KdcRep } from './kdc-messages.js';
import { sendToKdc, type KdcAddress, type KdcSendOptions } from './kdc-transport.js';
import type { EncryptionKey } from './keys.js';
import { decodeEtypeInfo2, decodeKrbError, decodePaDataList, encodeEncryptedData, KeyUsage, MsgType, PaType, type EtypeInfo2, type KrbError, type PaData } from './messages.js';
import { principalText, samePrincipal, tgsPrincipal, type Principal } from './principal.js';

export interface AsRequest {
  readonly client: Principal;
  readonly keys: LongTermKeys;
  readonly kdcs: readonly KdcAddress[];
  /** Requested lifetime, ms (default 24 h; the KDC caps it at the principal's and realm's max_life). */
  readonly lifetime?: number;
  /** Requested renewable lifetime, ms (default 7 days; 0 asks for no renewable ticket). */
  readonly renewLifetime?: number;
  /** Our enctype preference (default: all supported, strongest first). */
  readonly enctypes?: readonly number[];
  readonly transport?: KdcSendOptions;
  /** The clock (tests). */
  readonly now?: () => Date;
}

/** A reply from a KDC: a KDC-REP or a KRB-ERROR. */
export type KdcReply = { kind: 'rep'; rep: KdcRep } | { kind: 'error'; error: KrbError };

/** Sends a KDC-REQ and decodes what comes back. */
export async function kdcRoundTrip(kdcs: readonly KdcAddress[], request: Buffer, repType: typeof MsgType.AS_REP | typeof MsgType.TGS_REP, transport?: KdcSendOptions): Promise<KdcReply> {
  const reply = decode(await sendToKdc(kdcs, request, transport));
  if (reply.identifier === (0x60 | MsgType.KRB_ERROR)) return { kind: 'error', error: decodeKrbError(reply) };
  return { kind: 'rep', rep: decodeKdcRep(reply, repType) };
}

/** Gets a TGT (krbtgt/REALM@REALM) for `req.client`. */
export async function requestTgt(req: AsRequest): Promise<Credential> {
  const now = req.now ?? (() => new Date());
  const server = tgsPrincipal(req.client.realm);
  const etypes = req.keys.enctypes(req.enctypes ?? SUPPORTED_ENCTYPES);
  const context = { client: req.client, server, keys: req.keys };
  if (etypes.length === 0) throw new NoUsableEnctypeError(`the ${req.keys.source} for ${principalText(req.client)} has no key of a supported enctype (${SUPPORTED_ENCTYPES.join(', ')}): make a keytab with aes keys (ktadd -e aes256-cts-hmac-sha1-96:normal ...)`);
  const send = async (padata: PaData[]) => {
    const nonce = randomInt(1, 0x7fffffff);
    const t = now().getTime();
    const renew = req.renewLifetime ?? 7 * 86_400_000;
    const body = encodeKdcReqBody({
      options: DEFAULT_KDC_OPTIONS,
      cname: req.client,
      realm: req.client.realm,
      sname: server,
      till: new Date(t + (req.lifetime ?? 86_400_000)),
      rtime: renew > 0 ? new Date(t + renew) : undefined,
      nonce,
      etypes,
    });
    return { nonce, reply: await kdcRoundTrip(req.kdcs, encodeKdcReq(MsgType.AS_REQ, padata, body), MsgType.AS_REP, req.transport) };
  };

  let attempt = await send([]);
  let chosen: { key: EncryptionKey; info: EtypeInfo2 } | undefined;
  if (attempt.reply.kind === 'error' && attempt.reply.error.code === KrbErrorCode.KDC_ERR_PREAUTH_REQUIRED) {
    const hints = etypeInfo(attempt.reply.error.data ? decodePaDataList(decode(attempt.reply.error.data)) : []);
    chosen = pickKey(req.keys, etypes, hints);
    if (!chosen) throw new NoUsableEnctypeError(`the KDC offers enctypes ${hints.map((h) => h.etype).join(', ') || 'none'} for ${principalText(req.client)}, and the ${req.keys.source} has none of them`);
    const ts = encodePaEncTsEnc(now());
    const encTs = encodeEncryptedData({ etype: chosen.key.enctype, kvno: undefined, cipher: encrypt(chosen.key, KeyUsage.PA_ENC_TIMESTAMP, ts) });
    attempt = await send([{ type: PaType.ENC_TIMESTAMP, value: encTs }]);
  }
  if (attempt.reply.kind === 'error') throw krbErrorToException(attempt.reply.error, context);
  const rep = attempt.reply.rep;
  // The AS-REP names the salt it used (PA-ETYPE-INFO2 in its padata) when it differs from ours.
  const repHints = etypeInfo(rep.padata).filter((h) => h.etype === rep.encPart.etype);
  const key = chosen?.key.enctype === rep.encPart.etype && repHints.length === 0 ? chosen.key : req.keys.key(rep.encPart.etype, repHints[0]?.salt ?? chosen?.info.salt, repHints[0]?.s2kparams ?? chosen?.info.s2kparams);
  if (!key) throw new NoUsableEnctypeError(`the AS-REP for ${principalText(req.client)} is encrypted with enctype ${rep.encPart.etype}, for which the ${req.keys.source} has no key`);
  let plain: Buffer;
  try {
    plain = decrypt(key, KeyUsage.AS_REP_ENC_PART, rep.encPart.cipher);
  } catch (err) {
    if (err instanceof IntegrityError) {
      throw new PreauthFailedError(`the AS-REP for ${principalText(req.client)} does not decrypt with the ${req.keys.source}'s key: ${wrongKeysHint(req.keys, req.client)}`, { cause: err });
    }
    throw err;
  }
  const part = decodeEncKdcRepPart(plain);
  if (part.nonce !== attempt.nonce) throw new KerberosError(`the AS-REP for ${principalText(req.client)} answers another request (nonce mismatch)`);
  if (!samePrincipal(part.sname, server)) throw new KerberosDecodeError(`the AS-REP is for ${principalText(part.sname)}, not ${principalText(server)}`);
  return new Credential(rep.cname, part.sname, rep.ticket, part.key, { authtime: part.authtime, starttime: part.starttime, endtime: part.endtime, renewTill: part.renewTill }, part.flags);
}

function etypeInfo(padata: readonly PaData[]): EtypeInfo2[] {
  const entry = padata.find((p) => p.type === PaType.ETYPE_INFO2);
  return entry ? decodeEtypeInfo2(entry.value) : [];
}

/** The first ETYPE-INFO2 entry (the KDC's order) we have a key for; without entries, our first enctype with the default salt. */
function pickKey(keys: LongTermKeys, etypes: readonly number[], hints: readonly EtypeInfo2[]): { key: EncryptionKey; info: EtypeInfo2 } | undefined {
  const candidates = hints.length > 0 ? hints.filter((h) => etypes.includes(h.etype)) : etypes.map((etype) => ({ etype, salt: undefined, s2kparams: undefined }));
  for (const info of candidates) {
    const key = keys.key(info.etype, info.salt, info.s2kparams);
    if (key) return { key, info };
  }
  return undefined;
}
