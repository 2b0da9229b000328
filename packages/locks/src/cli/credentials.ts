/**
 * How zk-lock reaches a secured ensemble: TLS and credentials from environment variables and
 * files only, never from the command line (a command line is visible to every user in `ps`),
 * and `--acl` for the nodes it creates. Errors name the variable and the file, never what a
 * file holds.
 *
 *     ZK_TLS=1                      TLS, the server checked against the system's CAs
 *     ZK_TLS_CA=<pem file>          TLS, the server checked against this CA only (pinned)
 *     ZK_TLS_CERT, ZK_TLS_KEY       a client certificate and its key (PEM files; x509 identity)
 *     ZK_TLS_PFX                    or both in one PKCS#12 file (a Java keystore)
 *     ZK_TLS_KEY_PASSPHRASE_FILE    a file holding the key's (or the PKCS#12 file's) passphrase
 *     ZK_TLS_SERVERNAME             the name the server's certificate must carry (default: the host)
 *     ZK_DIGEST_FILE                a file holding `user:password` (digest authentication)
 *     ZK_SASL_USER, ZK_SASL_PASSWORD_FILE   SASL DIGEST-MD5
 *     ZK_SASL_MECHANISM=GSSAPI      SASL Kerberos, with:
 *       ZK_KRB5_PRINCIPAL, ZK_KRB5_KEYTAB   the principal and a keytab holding its keys, or
 *       KRB5CCNAME                  a kinit ccache (FILE:path or a path; default /tmp/krb5cc_<uid>),
 *                                   renewed at the KDC while the ticket allows; then run kinit again
 *       KRB5_CONFIG                 krb5.conf (default /etc/krb5.conf): realm, KDCs, canonicalisation
 */
import { readFileSync } from 'node:fs';
import { tlsFromFiles, type ClientOptions, type GssapiOptions } from '@zk/protocol';
import { UsageError } from './args.js';

/** What the environment asks for: connect options, and a line saying what (no secret in it). */
export interface Security {
  readonly options: Pick<ClientOptions, 'tls' | 'auth' | 'sasl'>;
  /** `TLS (CA pinned, client certificate), digest user alice`: for --verbose and errors. */
  readonly summary: string;
}

/** The connect options the environment asks for; UsageError naming the variable when a file cannot be read. */
export function securityFromEnv(env: Readonly<Record<string, string | undefined>> = process.env, read: (path: string) => Buffer = (p) => readFileSync(p)): Security {
  const file = (name: string): Buffer | undefined => {
    const path = env[name];
    if (path === undefined || path === '') return undefined;
    try {
      return read(path);
    } catch (err) {
      throw new UsageError(`${name}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  };
  const text = (name: string): string | undefined => file(name)?.toString('utf8').replace(/\r?\n$/, '');
  const said: string[] = [];
  const options: { -readonly [K in keyof Security['options']]: Security['options'][K] } = {};

  const ca = file('ZK_TLS_CA');
  const cert = file('ZK_TLS_CERT');
  const key = file('ZK_TLS_KEY');
  const pfx = file('ZK_TLS_PFX');
  if ((cert === undefined) !== (key === undefined)) throw new UsageError('ZK_TLS_CERT and ZK_TLS_KEY go together: a client certificate needs its key');
  if (pfx && cert) throw new UsageError('ZK_TLS_PFX and ZK_TLS_CERT/ZK_TLS_KEY exclude each other: one client certificate');
  const on = env.ZK_TLS !== undefined && !['', '0', 'false', 'no'].includes(env.ZK_TLS.toLowerCase());
  if (on || ca || cert || pfx) {
    text('ZK_TLS_KEY_PASSPHRASE_FILE'); // readable now: a usage error at once, not at the first connect
    const servername = env.ZK_TLS_SERVERNAME || undefined;
    const extra = servername ? { servername } : {};
    // Read again at every connection attempt: a --leader run lasts, and certificates rotate.
    const files = { ca: env.ZK_TLS_CA || undefined, cert: env.ZK_TLS_CERT || undefined, key: env.ZK_TLS_KEY || undefined, pfx: env.ZK_TLS_PFX || undefined, passphrase: env.ZK_TLS_KEY_PASSPHRASE_FILE || undefined };
    const named = Object.fromEntries(Object.entries(files).filter(([, v]) => v !== undefined));
    options.tls = Object.keys(named).length > 0 ? tlsFromFiles(named, extra) : extra;
    said.push(`TLS (${[ca ? 'CA pinned' : 'system CAs', (cert || pfx) && 'client certificate', servername && `server name ${servername}`].filter(Boolean).join(', ')})`);
  }

  const digest = text('ZK_DIGEST_FILE');
  if (digest !== undefined) {
    const colon = digest.indexOf(':');
    if (colon <= 0) throw new UsageError(`ZK_DIGEST_FILE: ${env.ZK_DIGEST_FILE} must hold user:password on one line`);
    options.auth = [{ scheme: 'digest', auth: digest }];
    said.push(`digest user ${digest.slice(0, colon)}`);
  }

  const saslUser = env.ZK_SASL_USER;
  const saslPassword = text('ZK_SASL_PASSWORD_FILE');
  if ((saslUser === undefined || saslUser === '') !== (saslPassword === undefined)) throw new UsageError('ZK_SASL_USER and ZK_SASL_PASSWORD_FILE go together');
  if (saslUser && saslPassword !== undefined) {
    options.sasl = { mechanism: 'DIGEST-MD5', username: saslUser, password: saslPassword };
    said.push(`SASL user ${saslUser}`);
  }
  const kerberos = kerberosFromEnv(env, read);
  if (kerberos) {
    if (options.sasl) throw new UsageError('ZK_SASL_MECHANISM=GSSAPI and ZK_SASL_USER exclude each other: one SASL identity');
    options.sasl = kerberos.sasl;
    said.push(kerberos.summary);
  }
  return { options, summary: said.length > 0 ? said.join(', ') : 'plain, no credentials' };
}

/**
 * SASL GSSAPI from ZK_SASL_MECHANISM=GSSAPI: a principal and its keytab, or a kinit ccache
 * (KRB5CCNAME). The file is checked readable here, so a missing keytab or `kinit` is a usage error
 * at once; the library reads it again at every login. Paths and the principal are not secrets;
 * what the files hold never leaves the library.
 */
function kerberosFromEnv(env: Readonly<Record<string, string | undefined>>, read: (path: string) => Buffer): { sasl: GssapiOptions; summary: string } | undefined {
  const mechanism = env.ZK_SASL_MECHANISM;
  const principal = env.ZK_KRB5_PRINCIPAL || undefined;
  const keytab = env.ZK_KRB5_KEYTAB || undefined;
  if (mechanism === undefined || mechanism === '') {
    if (principal || keytab) throw new UsageError(`${keytab ? 'ZK_KRB5_KEYTAB' : 'ZK_KRB5_PRINCIPAL'} is for Kerberos: set ZK_SASL_MECHANISM=GSSAPI too`);
    return undefined;
  }
  if (mechanism.toUpperCase() !== 'GSSAPI') throw new UsageError(`ZK_SASL_MECHANISM: ${mechanism} is not GSSAPI (DIGEST-MD5 is chosen by ZK_SASL_USER and ZK_SASL_PASSWORD_FILE)`);
  const readable = (variable: string, path: string, hint: string): void => {
    try {
      read(path);
    } catch (err) {
      throw new UsageError(`${variable}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})${hint}`);
    }
  };
  const krb5Conf = env.KRB5_CONFIG ? { krb5Conf: env.KRB5_CONFIG } : {};
  if (keytab || principal) {
    if (!keytab || !principal) throw new UsageError('ZK_KRB5_PRINCIPAL and ZK_KRB5_KEYTAB go together (with a kinit ccache, set neither: the principal is the ccache’s)');
    readable('ZK_KRB5_KEYTAB', keytab, '');
    return { sasl: { mechanism: 'GSSAPI', principal, keytab, ...krb5Conf }, summary: `Kerberos ${principal} (keytab ${keytab})` };
  }
  // A ccache, as MIT names it: FILE:path or a path in KRB5CCNAME, else the default file.
  const name = env.KRB5CCNAME || undefined;
  const type = name === undefined ? undefined : /^([A-Za-z]+):/.exec(name)?.[1];
  if (type !== undefined && type.toUpperCase() !== 'FILE') throw new UsageError(`KRB5CCNAME: a ${type}: cache cannot be read; use a FILE: cache (kinit -c FILE:/path)`);
  const path = name === undefined ? `/tmp/krb5cc_${process.getuid?.() ?? 0}` : type !== undefined ? name.slice(type.length + 1) : name;
  readable(name === undefined ? 'KRB5CCNAME (unset, the default ccache)' : 'KRB5CCNAME', path, ': run kinit, or set ZK_KRB5_PRINCIPAL and ZK_KRB5_KEYTAB');
  return { sasl: { mechanism: 'GSSAPI', ccache: `FILE:${path}`, ...krb5Conf }, summary: `Kerberos (ccache ${path})` };
}
