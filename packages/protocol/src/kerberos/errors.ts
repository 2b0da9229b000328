/**
 * Kerberos failures as typed errors, each naming what to check. No message ever carries a key, a
 * password or a ticket: only principal names, realms, hosts, enctype numbers and KDC error codes.
 */

/** The base of every Kerberos failure. `code` is the KDC's error-code (RFC 4120 §7.5.9) when one answered. */
export class KerberosError extends Error {
  override name = 'KerberosError';
  readonly code: number | undefined;
  constructor(message: string, options?: { cause?: unknown; code?: number }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = options?.code;
  }
}

/** Bytes that are not the DER (or the file format) they should be. */
export class KerberosDecodeError extends KerberosError {
  override name = 'KerberosDecodeError';
}

/** No KDC of the realm answered, over TCP or UDP. */
export class KdcUnreachableError extends KerberosError {
  override name = 'KdcUnreachableError';
}

/**
 * The password or keytab is wrong: KDC_ERR_PREAUTH_FAILED (24), an AS-REP our key cannot decrypt,
 * or a keytab with no key for the principal. A keytab's keys go stale when the principal's keys
 * change (`kadmin cpw -randkey`, or `ktadd` without `-norandkey`, raises the kvno): the message
 * says to compare `klist -kt` with `kadmin getprinc`.
 */
export class PreauthFailedError extends KerberosError {
  override name = 'PreauthFailedError';
}

/** KDC_ERR_C_PRINCIPAL_UNKNOWN (6) or KDC_ERR_S_PRINCIPAL_UNKNOWN (7). */
export class PrincipalUnknownError extends KerberosError {
  override name = 'PrincipalUnknownError';
}

/** KRB_AP_ERR_SKEW (37): this host's clock and the KDC's (or the server's) differ too much. */
export class ClockSkewError extends KerberosError {
  override name = 'ClockSkewError';
}

/** KDC_ERR_ETYPE_NOSUPP (14), or no key of ours matches an enctype the other side offers. */
export class NoUsableEnctypeError extends KerberosError {
  override name = 'NoUsableEnctypeError';
}

/** A ticket (from a ccache) has expired and there is no password or keytab to get a new one. */
export class TicketExpiredError extends KerberosError {
  override name = 'TicketExpiredError';
}

/** A checksum or an integrity tag did not verify: wrong key, or tampered bytes. */
export class IntegrityError extends KerberosError {
  override name = 'IntegrityError';
}

/**
 * The configuration does not say what the client needs: no KDC known for the client's realm
 * (krb5.conf has no `[realms]` entry with a `kdc` for it, and no `kdcs` option was given).
 */
export class KerberosConfigError extends KerberosError {
  override name = 'KerberosConfigError';
}

/**
 * The service is in another realm than the client's TGT, and the client's KDC gives no ticket for
 * it. Without a cross-realm trust (`krbtgt/SERVICE.REALM@CLIENT.REALM`) no client gets one; with
 * one, this client still does not: it asks the client realm's KDC in the service realm's name and
 * follows no cross-realm path (MIT answers both KRB_ERR_GENERIC "GET_LOCAL_TGT"). Use a principal
 * of the service's realm.
 */
export class CrossRealmError extends KerberosError {
  override name = 'CrossRealmError';
}
