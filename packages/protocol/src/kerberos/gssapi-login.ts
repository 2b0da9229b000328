/**
 * Kerberos for a ZooKeeper client: the options, where the client's TGT comes from (a keytab, a
 * password, or a kinit ccache), the service principal for a server (`zookeeper/<host>@REALM`,
 * the host canonicalised as the Java client's zookeeper.sasl.client.canonicalize.hostname does),
 * and a fresh SASL GSSAPI mechanism per connection. The TGT is kept and got again (keytab,
 * password) before it expires; a ccache TGT that has expired is a TicketExpiredError.
 */
import { lookup, lookupService } from 'node:dns/promises';
import { requestTgt } from './as-exchange.js';
import { cachedTgt, ccachePath, readCcache } from './ccache.js';
import { keytabKeys, passwordKeys, type Credential, type LongTermKeys } from './credential.js';
import { KerberosError } from './errors.js';
import { GssInitiator } from './gss-initiator.js';
import { keysFor, readKeytab } from './keytab.js';
import { loadKrb5Conf, parseKdcEntry, type Krb5Config } from './krb5-conf.js';
import type { KdcAddress } from './kdc-transport.js';
import { parsePrincipal, type Principal } from './principal.js';
import { GssapiSaslClient } from './sasl-gssapi.js';
import { requestServiceTicket } from './tgs-exchange.js';

/** SASL GSSAPI (Kerberos) credentials: a keytab, a password, or (with neither) a kinit ccache. */
export interface GssapiOptions {
  mechanism: 'GSSAPI';
  /** The client principal, `name` or `name@REALM`; default: the ccache's default principal. */
  principal?: string;
  /** Path of a keytab holding the principal's keys. */
  keytab?: string;
  /** The principal's password (string-to-key with the KDC's salt). */
  password?: string;
  /** A FILE: ccache (KRB5CCNAME syntax) used when there is no keytab or password; default KRB5CCNAME. */
  ccache?: string;
  /** krb5.conf paths, colon-separated; default KRB5_CONFIG, else /etc/krb5.conf. */
  krb5Conf?: string;
  /** KDCs (`host[:port]`) overriding the realm's list in krb5.conf. */
  kdcs?: string[];
  /** The service's primary (Java's zookeeper.sasl.client.username), default `zookeeper`. */
  serviceName?: string;
  /** The host part of the service principal, overriding the server's (canonicalised) name. */
  serviceHost?: string;
  /** The realm of the service, default the client's. */
  serviceRealm?: string;
  /** Canonicalise the server's name by forward and reverse lookup (Java's default, true). */
  canonicalizeHostname?: boolean;
  /** Enctype numbers to ask for, in preference order (krb5.conf's permitted_enctypes); default 20, 19, 18, 17. */
  enctypes?: number[];
}

/** Re-acquire a TGT this long before it ends (MIT's kinit renewers use minutes too). */
const REFRESH_MARGIN_MS = 5 * 60_000;

/** One client's Kerberos identity: its configuration, its TGT, and service tickets on demand. */
export class KerberosLogin {
  #config: Promise<{ conf: Krb5Config; client: Principal; keys: LongTermKeys | undefined; kdcs: KdcAddress[] }> | undefined;
  #tgt: Credential | undefined;

  constructor(private readonly options: GssapiOptions) {}

  #setup() {
    this.#config ??= (async () => {
      const o = this.options;
      const conf = await loadKrb5Conf(o.krb5Conf ?? process.env.KRB5_CONFIG ?? '/etc/krb5.conf');
      let principalText = o.principal;
      if (principalText === undefined && o.keytab === undefined && o.password === undefined) principalText = await readCcache(ccachePath(o.ccache)).then((c) => `${c.defaultPrincipal.components.join('/')}@${c.defaultPrincipal.realm}`);
      if (principalText === undefined) throw new KerberosError('GSSAPI: no principal given (principal option), and no ccache to take it from');
      const client = parsePrincipal(principalText, conf.defaultRealm);
      const keys = o.keytab !== undefined ? keytabKeys(keysFor(await readKeytab(o.keytab), client, o.keytab)) : o.password !== undefined ? passwordKeys(o.password, client) : undefined;
      const kdcs = o.kdcs ? o.kdcs.flatMap((k) => parseKdcEntry(k) ?? []) : [...(conf.realms.get(client.realm)?.kdcs ?? [])];
      return { conf, client, keys, kdcs };
    })();
    return this.#config;
  }

  /** A TGT valid for a few more minutes: the kept one, a new one, or the ccache's. */
  async tgt(): Promise<Credential> {
    const { client, keys, kdcs } = await this.#setup();
    if (this.#tgt && !this.#tgt.expiresWithin(REFRESH_MARGIN_MS)) return this.#tgt;
    if (keys) this.#tgt = await requestTgt({ client, keys, kdcs, ...(this.options.enctypes ? { enctypes: this.options.enctypes } : {}) });
    else this.#tgt = cachedTgt(await readCcache(ccachePath(this.options.ccache)));
    return this.#tgt;
  }

  /** The service principal for a server reached at `host` (`address` is what it resolved to). */
  async servicePrincipal(host: string, address: string): Promise<Principal> {
    const { client } = await this.#setup();
    const o = this.options;
    const name = o.serviceHost ?? (o.canonicalizeHostname === false ? host : await canonicalHostname(host, address));
    return { nameType: 3, components: [o.serviceName ?? 'zookeeper', name.toLowerCase()], realm: o.serviceRealm ?? client.realm };
  }

  /** A SASL GSSAPI client for one connection to `host`. */
  async mechanism(host: string, address: string): Promise<GssapiSaslClient> {
    const { kdcs } = await this.#setup();
    const tgt = await this.tgt();
    const service = await this.servicePrincipal(host, address);
    const ticket = await requestServiceTicket({ tgt, service, kdcs, ...(this.options.enctypes ? { enctypes: this.options.enctypes } : {}) });
    return new GssapiSaslClient(new GssInitiator(ticket));
  }
}

const isIP = (s: string): boolean => /^\d{1,3}(\.\d{1,3}){3}$/.test(s) || s.includes(':');

/** Java's InetAddress.getCanonicalHostName: the name the address reverse-resolves to, else the address. */
async function canonicalHostname(host: string, address: string): Promise<string> {
  try {
    const ip = isIP(address) ? address : isIP(host) ? host : (await lookup(host)).address;
    return (await lookupService(ip, 0)).hostname;
  } catch {
    return host;
  }
}

const logins = new WeakMap<GssapiOptions, KerberosLogin>();

/** The KerberosLogin of an options object (one per client: the TGT is shared by its connections). */
export function loginFor(options: GssapiOptions): KerberosLogin {
  let login = logins.get(options);
  if (!login) logins.set(options, (login = new KerberosLogin(options)));
  return login;
}
