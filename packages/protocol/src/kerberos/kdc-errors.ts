/**
 * A KRB-ERROR from a KDC (or a server) as the typed error that says what to check. Error-code
 * names are RFC 4120 §7.5.9's.
 */
import { wrongKeysHint, type LongTermKeys } from './credential.js';
import { ClockSkewError, CrossRealmError, KerberosError, NoUsableEnctypeError, PreauthFailedError, PrincipalUnknownError, TicketExpiredError } from './errors.js';
import type { KrbError } from './messages.js';
import { principalText, type Principal } from './principal.js';

/** error-code values the client acts on. */
export const KrbErrorCode = {
  KDC_ERR_C_PRINCIPAL_UNKNOWN: 6,
  KDC_ERR_S_PRINCIPAL_UNKNOWN: 7,
  KDC_ERR_ETYPE_NOSUPP: 14,
  KDC_ERR_CLIENT_REVOKED: 18,
  KDC_ERR_KEY_EXPIRED: 23,
  KDC_ERR_PREAUTH_FAILED: 24,
  KDC_ERR_PREAUTH_REQUIRED: 25,
  KRB_AP_ERR_BAD_INTEGRITY: 31,
  KRB_AP_ERR_TKT_EXPIRED: 32,
  KRB_AP_ERR_SKEW: 37,
  KRB_ERR_RESPONSE_TOO_BIG: 52,
  KRB_ERR_GENERIC: 60,
  KDC_ERR_WRONG_REALM: 68,
} as const;

/**
 * What a KDC answers for a service of a realm it has no path to: MIT says S_PRINCIPAL_UNKNOWN
 * without a krbtgt/SERVICE.REALM@ITS.REALM, or KRB_ERR_GENERIC "GET_LOCAL_TGT" to a request in
 * the other realm's name (what this client sends: the service's realm, RFC 4120 §5.4.1).
 */
const NO_PATH_TO_REALM: ReadonlySet<number> = new Set([KrbErrorCode.KDC_ERR_S_PRINCIPAL_UNKNOWN, KrbErrorCode.KRB_ERR_GENERIC, KrbErrorCode.KDC_ERR_WRONG_REALM]);

/**
 * The typed error for a KRB-ERROR answering a request for `client` to `server`; `keys`, the
 * client's long-term keys in an AS exchange (a refused key then names the password or keytab).
 */
export function krbErrorToException(e: KrbError, context: { client: Principal; server: Principal; kdc?: string; keys?: LongTermKeys }): KerberosError {
  const client = principalText(context.client);
  const server = principalText(context.server);
  const from = context.kdc ? ` (from ${context.kdc})` : '';
  const detail = e.text ? `: ${e.text}` : '';
  const opts = { code: e.code };
  if (context.server.realm !== context.client.realm && NO_PATH_TO_REALM.has(e.code)) {
    return new CrossRealmError(
      `the KDC of realm ${context.client.realm}${from} gives ${client} no ticket for ${server} (error ${e.code}${detail}): the service is in realm ${context.server.realm}, and this client follows no cross-realm path (krbtgt/${context.server.realm}@${context.client.realm}), trusted or not; use a principal of realm ${context.server.realm} (its kdc in krb5.conf), or check the serviceRealm option`,
      opts,
    );
  }
  switch (e.code) {
    case KrbErrorCode.KDC_ERR_C_PRINCIPAL_UNKNOWN:
      return new PrincipalUnknownError(`the KDC does not know the client principal ${client}${from}: check the principal name and realm (default_realm in krb5.conf)`, opts);
    case KrbErrorCode.KDC_ERR_S_PRINCIPAL_UNKNOWN:
      return new PrincipalUnknownError(
        `the KDC does not know the service principal ${server}${from}: check the server's host name (canonicalisation), the service name, and that the principal exists in realm ${context.server.realm}`,
        opts,
      );
    case KrbErrorCode.KDC_ERR_ETYPE_NOSUPP:
      return new NoUsableEnctypeError(`no encryption type in common with the KDC for ${client} → ${server}${from}: this client speaks aes256/aes128 (RFC 3962, RFC 8009); check the principal's keys and permitted_enctypes`, opts);
    case KrbErrorCode.KDC_ERR_PREAUTH_FAILED:
    case KrbErrorCode.KRB_AP_ERR_BAD_INTEGRITY:
      return new PreauthFailedError(`pre-authentication failed for ${client}${from}: ${context.keys ? wrongKeysHint(context.keys, context.client) : "wrong password, or a keytab whose keys (kvno) are not the principal's current ones"}`, opts);
    case KrbErrorCode.KRB_AP_ERR_SKEW:
      return new ClockSkewError(`clock skew too great between this host and ${context.kdc ?? 'the KDC'} (its time: ${e.serverTime.toISOString()}, ours: ${new Date().toISOString()}): synchronise the clocks (NTP)`, opts);
    case KrbErrorCode.KRB_AP_ERR_TKT_EXPIRED:
      return new TicketExpiredError(`the ticket for ${server} has expired${from}: get a new one (kinit, or give a keytab or password so the client can)`, opts);
    case KrbErrorCode.KDC_ERR_CLIENT_REVOKED:
      return new KerberosError(`the KDC has revoked ${client}${from} (locked out or disabled): check the principal's status with the realm's administrator`, opts);
    case KrbErrorCode.KDC_ERR_KEY_EXPIRED:
      return new KerberosError(`the password of ${client} has expired${from}: change it (kpasswd)`, opts);
    default:
      return new KerberosError(`the KDC refused ${client} → ${server}${from} with error ${e.code}${detail}`, opts);
  }
}
