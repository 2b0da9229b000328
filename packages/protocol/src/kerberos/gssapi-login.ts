/**
 * Kerberos for a ZooKeeper client: the options, where the client's TGT comes from (a keytab, a
 * password, or a kinit ccache), the service principal for a server (`zookeeper/<host>@REALM`,
 * the host canonicalised as the Java client's zookeeper.sasl.client.canonicalize.hostname does),
 * and a fresh SASL GSSAPI mechanism per connection. The TGT is kept and got again at 80% of its
 * lifetime (renewal.ts), checked at every connection: from the keytab or password (an AS
 * exchange), or, with only a ccache, renewed at the KDC while its renew-till allows (a TGS
 * exchange with RENEW), and in the background while a session holds the login, so a connection
 * that stays up past the TGT's end can still be replaced. Once a ccache TGT has ended with no
 * means to renew it, a TicketExpiredError says to run kinit again.
 */
import { requestTgt } from './as-exchange.js';
import { ccachePath, readCcache, tgtOf } from './ccache.js';
import { keytabKeys, passwordKeys, type Credential, type LongTermKeys } from './credential.js';
import { KerberosConfigError, KerberosError, PrincipalUnknownError, TicketExpiredError } from './errors.js';
import { GssInitiator } from './gss-initiator.js';
import { keysFor, readKeytab } from './keytab.js';
import { loadKrb5Conf, parseKdcEntry, type Krb5Config } from './krb5-conf.js';
import type { KdcAddress, KdcSendOptions } from './kdc-transport.js';
import { NameType, parsePrincipal, tgsPrincipal, type Principal } from './principal.js';
import { traceStep } from './trace.js';
import { canonicalizePolicy, serviceHosts, systemResolver, type HostResolver } from './service-host.js';
import { ccachePlan, expiredTicketError, refreshAt } from './renewal.js';
import { GssapiSaslClient } from './sasl-gssapi.js';
import { renewTgt, requestServiceTicket } from './tgs-exchange.js';

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
  /**
   * Canonicalise the server's name as the Java client's `zookeeper.sasl.client.canonicalize.hostname`:
   * `true`, the name its address reverse-resolves to (the name as given when it has none); `false`,
   * the name as given. Unset: krb5.conf's `dns_canonicalize_hostname` (true, false or fallback) and
   * `rdns` decide, as for MIT tools (both default true: much as Java, the forward canonical name when the address has no name).
   */
  canonicalizeHostname?: boolean;
  /** Enctype numbers to ask for, in preference order (krb5.conf's permitted_enctypes); default 20, 19, 18, 17. */
  enctypes?: number[];
}

/** A background renewal that failed is tried again after a quarter of what is left, within these bounds. */
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 60_000;

/** One client's Kerberos identity: its configuration, its TGT, and service tickets on demand. */
export class KerberosLogin {
  #config: Promise<{ conf: Krb5Config; client: Principal; keys: LongTermKeys | undefined; kdcs: KdcAddress[]; transport: KdcSendOptions }> | undefined;
  #tgt: Credential | undefined;
  /** The refresh under way, so a reconnect and the timer share one exchange. */
  #refreshing: Promise<Credential> | undefined;
  /** Sessions holding the login (hold()): the background renewal runs while there are any. */
  #holders = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly options: GssapiOptions,
    /** The lookups of host canonicalisation (service-host.ts). */
    private readonly resolver: HostResolver = systemResolver(),
  ) {}

  #setup() {
    this.#config ??= (async () => {
      const o = this.options;
      const conf = await loadKrb5Conf(o.krb5Conf ?? process.env.KRB5_CONFIG ?? '/etc/krb5.conf');
      let principalText = o.principal;
      if (principalText === undefined && o.keytab === undefined && o.password === undefined) principalText = await readCcache(ccachePath(o.ccache)).then((c) => `${c.defaultPrincipal.components.join('/')}@${c.defaultPrincipal.realm}`);
      if (principalText === undefined) throw new KerberosError('GSSAPI: no principal given (principal option), and no ccache to take it from');
      const client = parsePrincipal(principalText, conf.defaultRealm);
      const keys = o.keytab !== undefined ? keytabKeys(keysFor(await readKeytab(o.keytab), client, o.keytab), o.keytab) : o.password !== undefined ? passwordKeys(o.password, client) : undefined;
      const kdcs = o.kdcs ? o.kdcs.flatMap((k) => parseKdcEntry(k) ?? []) : [...(conf.realms.get(client.realm)?.kdcs ?? [])];
      if (kdcs.length === 0) throw noKdcFor(client.realm, conf, o.krb5Conf ?? process.env.KRB5_CONFIG ?? '/etc/krb5.conf');
      // krb5.conf's udp_preference_limit: a message over it goes by TCP first (1 for TCP always first).
      const transport: KdcSendOptions = conf.udpPreferenceLimit !== undefined ? { udpPreferenceLimit: conf.udpPreferenceLimit } : {};
      return { conf, client, keys, kdcs, transport };
    })();
    return this.#config;
  }

  /** A TGT short of its refresh time: the kept one, or a new or renewed one (checked at every connection). */
  async tgt(): Promise<Credential> {
    await this.#setup();
    if (this.#tgt && Date.now() < refreshAt(this.#tgt)) return this.#tgt;
    this.#refreshing ??= this.#refresh().finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }

  async #refresh(): Promise<Credential> {
    const { client, keys, kdcs, transport } = await this.#setup();
    const enctypes = this.options.enctypes ? { enctypes: this.options.enctypes } : {};
    const tgt = keys ? await traceStep('as', client, tgsPrincipal(client.realm), () => requestTgt({ client, keys, kdcs, transport, ...enctypes })) : await this.#fromCcache(kdcs, transport);
    this.#tgt = tgt;
    this.#schedule();
    return tgt;
  }

  /**
   * With only a ccache: the newer of the kept TGT and the file's (a `kinit` since is taken up),
   * renewed when past its refresh time and renewable, else used to its end.
   */
  async #fromCcache(kdcs: readonly KdcAddress[], transport: KdcSendOptions): Promise<Credential> {
    const kept = this.#tgt;
    const path = ccachePath(this.options.ccache);
    // Once a TGT is kept, an unreadable file is no failure: the kept one is renewed.
    const file = await readCcache(path).then(tgtOf, (err: unknown) => {
      if (kept) return undefined;
      throw err;
    });
    const newest = kept && (!file || kept.times.endtime >= file.times.endtime) ? kept : file;
    if (!newest) throw new TicketExpiredError(`the credential cache ${path} holds no TGT for its default principal: run kinit`);
    const now = Date.now();
    const plan = ccachePlan(newest, now);
    // The end, or the file's TGT taken up: each on the diagnostics channel.
    if (plan === 'expired') return traceStep('ccache', newest.client, newest.server, () => Promise.reject(expiredTicketError(newest, now)));
    if (newest !== kept) await traceStep('ccache', newest.client, newest.server, async () => newest);
    switch (plan) {
      case 'use':
      case 'use-to-end':
        return newest;
      case 'renew':
        try {
          return await traceStep('renew', newest.client, newest.server, () => renewTgt({ tgt: newest, kdcs, transport }));
        } catch (err) {
          // Still valid: used, and renewal tried again (timer, next connection) while it lasts.
          if (newest.times.endtime.getTime() > Date.now()) return newest;
          throw err;
        }
    }
  }

  /**
   * Keeps a ccache-only TGT renewed in the background until the returned function is called (a
   * session holds its login from connect to close): a connection may stay up past the TGT's
   * end, and the next one needs a TGT the KDC still renews. The timer does not keep Node alive.
   */
  hold(): () => void {
    this.#holders++;
    this.#schedule();
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      if (--this.#holders === 0) this.#schedule();
    };
  }

  /** The next background refresh: at the TGT's refresh time, or, past it (a renewal failed), after a quarter of what is left. */
  #schedule(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const tgt = this.#tgt;
    const o = this.options;
    if (this.#holders === 0 || !tgt || o.keytab !== undefined || o.password !== undefined) return;
    const now = Date.now();
    const plan = ccachePlan(tgt, now);
    if (plan === 'expired' || plan === 'use-to-end') return;
    const left = tgt.times.endtime.getTime() - now;
    const delay = plan === 'renew' ? Math.min(RETRY_MAX_MS, Math.max(RETRY_MIN_MS, left / 4)) : Math.max(0, refreshAt(tgt) - now);
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.tgt().then(
        () => this.#schedule(),
        () => this.#schedule(),
      );
    }, Math.min(delay, 2 ** 31 - 1));
    this.#timer.unref?.();
  }

  /**
   * The service principals for a server reached at `host` (`address` is what it resolved to), in
   * the order to try them: one, or two for krb5.conf's `dns_canonicalize_hostname = fallback`
   * (service-host.ts).
   */
  async servicePrincipals(host: string, address: string): Promise<Principal[]> {
    const { client, conf } = await this.#setup();
    const o = this.options;
    const names = o.serviceHost !== undefined ? [o.serviceHost.toLowerCase()] : await serviceHosts(host, address, canonicalizePolicy(o.canonicalizeHostname, conf), this.resolver);
    return names.map((name) => ({ nameType: NameType.SRV_HST, components: [o.serviceName ?? 'zookeeper', name], realm: o.serviceRealm ?? client.realm }));
  }

  /** A SASL GSSAPI client for one connection to `host`. */
  async mechanism(host: string, address: string): Promise<GssapiSaslClient> {
    const { kdcs, transport } = await this.#setup();
    const tgt = await this.tgt();
    const services = await this.servicePrincipals(host, address);
    const enctypes = this.options.enctypes ? { enctypes: this.options.enctypes } : {};
    for (let i = 0; ; i++) {
      try {
        const service = services[i] as Principal;
        const ticket = await traceStep('tgs', tgt.client, service, () => requestServiceTicket({ tgt, service, kdcs, transport, ...enctypes }));
        return new GssapiSaslClient(new GssInitiator(ticket));
      } catch (err) {
        // `fallback`: the name as given is unknown to the KDC, so the canonical one is asked for.
        if (!(err instanceof PrincipalUnknownError) || i + 1 >= services.length) throw err;
      }
    }
  }
}

/** No KDC for the client's realm: the realm, the krb5.conf files read, and the realms they do know. */
function noKdcFor(realm: string, conf: Krb5Config, files: string): KerberosConfigError {
  const known = [...conf.realms].filter(([, r]) => r.kdcs.length > 0).map(([name]) => name);
  return new KerberosConfigError(
    `no KDC known for realm ${realm}: krb5.conf (${files}) has no [realms] ${realm} entry with a kdc (it knows: ${known.join(', ') || 'none'}); add one, give the kdcs option, or use a principal of a realm it knows`,
  );
}

const logins = new WeakMap<GssapiOptions, KerberosLogin>();

/** The KerberosLogin of an options object (one per client: the TGT is shared by its connections). */
export function loginFor(options: GssapiOptions): KerberosLogin {
  let login = logins.get(options);
  if (!login) logins.set(options, (login = new KerberosLogin(options)));
  return login;
}
