/**
 * A private MIT Kerberos KDC for the Kerberos tests: realm ZK.TEST on 127.0.0.1 at a free port
 * (TCP and UDP), its own krb5.conf, kdc.conf, database, stash and log under test/.work/kdc/.
 * Every MIT tool runs with KRB5_CONFIG and KRB5_KDC_PROFILE pointing there: the system's
 * /etc/krb5.conf is never read. Principals and keytabs are made with kadmin.local. Installed when
 * missing in CI (CI=true, root: krb5-kdc, krb5-admin-server, krb5-user); elsewhere the error says how.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installInCi } from './apt.js';
import { freePorts } from './ports.js';
import { timing, waitFor } from './timing.js';
import { superviseChild } from './child-server.js';

export const KDC_HINT =
  'No MIT KDC found. Install it with `sudo apt-get install -y krb5-kdc krb5-admin-server krb5-user` (the harness runs its own KDC on loopback; the system services can stay stopped).';

/** Every enctype the test realm issues keys for, strongest first (RFC 8009 and RFC 3962). */
export const TEST_ENCTYPES = ['aes256-cts-hmac-sha384-192', 'aes128-cts-hmac-sha256-128', 'aes256-cts-hmac-sha1-96', 'aes128-cts-hmac-sha1-96'] as const;

/** A running private KDC. */
export interface TestKdc {
  readonly realm: string;
  readonly host: string;
  readonly port: number;
  readonly dir: string;
  /** The realm's krb5.conf (default_realm, the KDC, no DNS). */
  readonly krb5Conf: string;
  /** KRB5_CONFIG and KRB5_KDC_PROFILE for child processes (kinit, ktutil, klist, a JVM). */
  readonly env: NodeJS.ProcessEnv;
  /** Adds a principal with a password, or a random key; `enctypes` limits its keys (default: all of TEST_ENCTYPES). */
  addPrincipal(name: string, options?: { password?: string; enctypes?: readonly string[]; maxLife?: string; maxRenewLife?: string; requiresPreauth?: boolean }): void;
  /** Writes the principal's keys to a keytab file (without changing them) and returns its path. */
  keytab(name: string, file?: string): string;
  /** Runs kinit into a FILE: ccache with a password (on stdin) or a keytab (`renewable`: kinit -r, a renewable life); returns the ccache path. */
  kinit(name: string, how: ({ password: string } | { keytab: string }) & { renewable?: string }, ccache?: string): string;
  /** Runs an MIT tool with the realm's environment; throws with its output on failure. */
  run(command: string, args: readonly string[], input?: string): string;
  /** The KDC's log so far. */
  log(): string;
  /** Stops the KDC and removes its directory. */
  stop(): Promise<void>;
}

const WORK = fileURLToPath(new URL('../.work/kdc/', import.meta.url));
const SBIN = ['/usr/sbin', '/usr/local/sbin'];

function tool(name: string): string | undefined {
  for (const dir of SBIN) if (existsSync(join(dir, name))) return join(dir, name);
  return spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim() || undefined;
}

function installed(): boolean {
  return ['krb5kdc', 'kdb5_util', 'kadmin.local', 'kinit'].every((t) => tool(t) !== undefined);
}

/**
 * Why {@link startKdc} cannot run here, or undefined: the MIT tools are missing and this is not CI
 * as root (where startKdc installs them). For `describe.skipIf` with the reason in the name.
 */
export function kdcMissing(): string | undefined {
  return installed() || (process.env.CI === 'true' && process.getuid?.() === 0) ? undefined : KDC_HINT;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => done(true));
  });
}

/** Starts a private KDC for `realm` (default ZK.TEST). */
export async function startKdc(options: { realm?: string; maxLife?: string; clockskew?: number; maxDgramReplySize?: number } = {}): Promise<TestKdc> {
  if (!installed() && !(installInCi(['krb5-kdc', 'krb5-admin-server', 'krb5-user'], 'krb5-kdc') && installed())) throw new Error(KDC_HINT);
  const realm = options.realm ?? 'ZK.TEST';
  const dir = join(WORK, `${process.pid}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  const [port] = (await freePorts(1)) as [number];
  const krb5Conf = join(dir, 'krb5.conf');
  const kdcConf = join(dir, 'kdc.conf');
  const logFile = join(dir, 'kdc.log');
  writeFileSync(
    krb5Conf,
    [
      '[libdefaults]',
      `  default_realm = ${realm}`,
      '  dns_lookup_kdc = false',
      '  dns_lookup_realm = false',
      // MIT's defaults, spelled out: the client canonicalises 127.0.0.1 to localhost (the service
      // principal's host) by reverse lookup, as the Java client does.
      '  dns_canonicalize_hostname = true',
      '  rdns = true',
      `  permitted_enctypes = ${TEST_ENCTYPES.join(' ')}`,
      '',
      '[realms]',
      `  ${realm} = {`,
      `    kdc = 127.0.0.1:${port}`,
      '  }',
      '',
      '[domain_realm]',
      `  localhost = ${realm}`,
      '',
    ].join('\n'),
  );
  writeFileSync(
    kdcConf,
    [
      '[kdcdefaults]',
      `  kdc_listen = 127.0.0.1:${port}`,
      `  kdc_tcp_listen = 127.0.0.1:${port}`,
      // Replies over this many bytes get KRB_ERR_RESPONSE_TOO_BIG over UDP (MIT's default 4096).
      ...(options.maxDgramReplySize !== undefined ? [`  kdc_max_dgram_reply_size = ${options.maxDgramReplySize}`] : []),
      '',
      '[realms]',
      `  ${realm} = {`,
      `    database_name = ${join(dir, 'principal')}`,
      `    key_stash_file = ${join(dir, 'stash')}`,
      `    acl_file = ${join(dir, 'kadm5.acl')}`,
      `    max_life = ${options.maxLife ?? '10h'}`,
      '    max_renewable_life = 7d',
      `    supported_enctypes = ${TEST_ENCTYPES.map((e) => `${e}:normal`).join(' ')}`,
      ...(options.clockskew !== undefined ? [`    clockskew = ${options.clockskew}`] : []),
      '  }',
      '',
      '[logging]',
      `  kdc = FILE:${logFile}`,
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'kadm5.acl'), '');
  const env: NodeJS.ProcessEnv = { ...process.env, KRB5_CONFIG: krb5Conf, KRB5_KDC_PROFILE: kdcConf, KRB5CCNAME: `FILE:${join(dir, 'ccache')}` };
  const run = (command: string, args: readonly string[], input?: string): string => {
    const r = spawnSync(tool(command) ?? command, args, { env, input, encoding: 'utf8', timeout: timing(30_000) });
    if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr}${r.stdout}`);
    return r.stdout;
  };
  // A random master password: the database is thrown away with the directory.
  run('kdb5_util', ['create', '-s', '-r', realm, '-P', randomBytes(18).toString('base64')]);
  const child = spawn(tool('krb5kdc') as string, ['-n', '-r', realm], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const { output, stop } = superviseChild(child, dir);
  const log = () => `${existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''}${output()}`;
  try {
    await waitFor(
      'krb5kdc to accept TCP connections',
      async () => {
        if (child.exitCode !== null) throw new Error(`krb5kdc exited with ${child.exitCode}`);
        return (await accepts(port)) ? true : undefined;
      },
      timing(20_000),
      50,
    );
  } catch (err) {
    const text = log();
    await stop();
    throw new Error(`${(err as Error).message}\n${text}`);
  }
  const kadmin = (query: string) => run('kadmin.local', ['-r', realm, '-q', query]);
  return {
    realm,
    host: '127.0.0.1',
    port,
    dir,
    krb5Conf,
    env,
    run,
    log,
    stop,
    addPrincipal(name, opts = {}) {
      const keysalts = (opts.enctypes ?? TEST_ENCTYPES).map((e) => `${e}:normal`).join(',');
      const life = (opts.maxLife ? ` -maxlife "${opts.maxLife}"` : '') + (opts.maxRenewLife ? ` -maxrenewlife "${opts.maxRenewLife}"` : '');
      const key = opts.password !== undefined ? `-pw "${opts.password}"` : '-randkey';
      // Pre-authentication required by default, as real realms set it (so AS-REQs exercise PA-ENC-TIMESTAMP).
      const preauth = opts.requiresPreauth === false ? '' : ' +requires_preauth';
      kadmin(`addprinc -e "${keysalts}"${life}${preauth} ${key} ${name}`);
    },
    keytab(name, file = join(dir, `${name.replace(/[^A-Za-z0-9.-]/g, '_')}.keytab`)) {
      kadmin(`ktadd -k ${file} -norandkey ${name}`);
      return file;
    },
    kinit(name, how, ccache = join(dir, `${name.replace(/[^A-Za-z0-9.-]/g, '_')}.ccache`)) {
      const renew = how.renewable ? ['-r', how.renewable] : [];
      if ('password' in how) run('kinit', ['-c', `FILE:${ccache}`, ...renew, name], `${how.password}\n`);
      else run('kinit', ['-c', `FILE:${ccache}`, ...renew, '-k', '-t', how.keytab, name]);
      return ccache;
    },
  };
}

/**
 * What a ZooKeeper server needs to accept Kerberos clients of `kdc`'s realm (for startZooKeeper's
 * `config` and `systemProperties`): a JAAS `Server` section with Krb5LoginModule and the service
 * keytab, the SASL authentication provider, and the realm's krb5.conf for the JVM.
 */
export function kerberizedServerOptions(kdc: TestKdc, options: { principal?: string; keytab: string; debug?: boolean }): { config: Record<string, string>; systemProperties: Record<string, string> } {
  const principal = options.principal ?? `zookeeper/localhost@${kdc.realm}`;
  const jaas = join(kdc.dir, 'jaas-server.conf');
  writeFileSync(
    jaas,
    [
      'Server {',
      '  com.sun.security.auth.module.Krb5LoginModule required',
      '  useKeyTab=true',
      `  keyTab="${options.keytab}"`,
      '  storeKey=true',
      '  useTicketCache=false',
      '  isInitiator=false',
      `  principal="${principal}";`,
      '};',
      '',
    ].join('\n'),
  );
  return {
    config: { 'authProvider.1': 'org.apache.zookeeper.server.auth.SASLAuthenticationProvider' },
    systemProperties: {
      'java.security.auth.login.config': jaas,
      'java.security.krb5.conf': kdc.krb5Conf,
      ...(options.debug ? { 'sun.security.krb5.debug': 'true' } : {}),
    },
  };
}

/**
 * JVM options of a ZooKeeper Java client (Curator) that logs in to `kdc`'s realm as `principal`
 * with `keytab`: a JAAS `Client` section (Krb5LoginModule, the keytab, no ticket cache) written to
 * `kdc`'s directory, the realm's krb5.conf, SASL on with that section, and the service principal
 * named (`zookeeper/localhost@REALM` by default), so nothing depends on the system's krb5.conf or
 * on how the server's address reverse-resolves.
 */
export function kerberizedClientJvmOptions(kdc: TestKdc, options: { principal: string; keytab: string; serverPrincipal?: string; debug?: boolean }): string[] {
  const principal = options.principal.includes('@') ? options.principal : `${options.principal}@${kdc.realm}`;
  const jaas = join(kdc.dir, `jaas-client-${principal.replace(/[^A-Za-z0-9.-]/g, '_')}.conf`);
  writeFileSync(
    jaas,
    [
      'Client {',
      '  com.sun.security.auth.module.Krb5LoginModule required',
      '  useKeyTab=true',
      `  keyTab="${options.keytab}"`,
      '  storeKey=true',
      '  useTicketCache=false',
      `  principal="${principal}";`,
      '};',
      '',
    ].join('\n'),
  );
  return [
    `-Djava.security.auth.login.config=${jaas}`,
    `-Djava.security.krb5.conf=${kdc.krb5Conf}`,
    '-Dzookeeper.sasl.client=true',
    '-Dzookeeper.sasl.clientconfig=Client',
    `-Dzookeeper.server.principal=${options.serverPrincipal ?? `zookeeper/localhost@${kdc.realm}`}`,
    ...(options.debug ? ['-Dsun.security.krb5.debug=true'] : []),
  ];
}
