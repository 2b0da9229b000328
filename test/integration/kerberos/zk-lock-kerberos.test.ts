/**
 * zk-lock (the built binary) on a Kerberized ZooKeeper with a real MIT KDC: Kerberos from the
 * environment and files only (ZK_SASL_MECHANISM=GSSAPI with ZK_KRB5_PRINCIPAL + ZK_KRB5_KEYTAB, or
 * KRB5CCNAME; KRB5_CONFIG), `--acl creator` and `--acl sasl:...` making the lock nodes the Kerberos
 * identity's, and no password in anything it prints.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NoAuthError, Perm, ZooKeeper } from '@zk/protocol';
import { kerberizedServerOptions, startKdc, type TestKdc } from '../../harness/kdc.js';
import { waitFor } from '../../harness/timing.js';
import { startZooKeeper, type ZooKeeperEnsemble } from '../../harness/zookeeper.js';
import { zookeeperLine } from '../../harness/versions.js';

const CLI = fileURLToPath(new URL('../../../packages/locks/dist/cli/zk-lock.js', import.meta.url));
const PASSWORDS = { carol: 'carol-Krb-zk-lock-77', dave: 'dave-Krb-zk-lock-88' };
/** Everything every zk-lock run printed: searched for the passwords at the end. */
const printed: string[] = [];

/** A command that says `ready`, then waits for SIGTERM and exits 0. */
const HOLD = [process.execPath, '-e', 'process.on("SIGTERM", () => process.exit(0)); console.log("ready"); setInterval(() => {}, 1000);'];

describe.skipIf(process.env.ZK_CONNECT)(`zk-lock - Kerberos from the environment (real MIT KDC, ZooKeeper ${zookeeperLine()})`, () => {
  let kdc: TestKdc;
  let zk: ZooKeeperEnsemble;
  let keytab: string;
  const carol = () => ({ mechanism: 'GSSAPI' as const, principal: 'carol', password: PASSWORDS.carol, krb5Conf: kdc.krb5Conf });
  const dave = () => ({ mechanism: 'GSSAPI' as const, principal: 'dave', password: PASSWORDS.dave, krb5Conf: kdc.krb5Conf });

  function zkLock(args: string[], env: Record<string, string>) {
    const child = spawn(process.execPath, [CLI, '--connect', zk.connectString, '--session-timeout', '6s', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exit = new Promise<number>((resolve) => child.once('exit', (code, signal) => (printed.push(out, err), resolve(code ?? (signal ? -1 : 0)))));
    return { out: () => out, err: () => err, exit, kill: (sig: NodeJS.Signals) => child.kill(sig) };
  }

  beforeAll(async () => {
    kdc = await startKdc();
    kdc.addPrincipal('carol', { password: PASSWORDS.carol });
    kdc.addPrincipal('dave', { password: PASSWORDS.dave });
    kdc.addPrincipal('zookeeper/localhost');
    // carol's keytab without changing her password (-norandkey), so tests can log in both ways.
    keytab = kdc.keytab('carol');
    zk = await startZooKeeper({ servers: 1, own: true, ...kerberizedServerOptions(kdc, { keytab: kdc.keytab('zookeeper/localhost') }) });
  });
  afterAll(async () => {
    await zk?.close();
    await kdc?.stop();
  });

  it('zk-lock - ZK_KRB5_PRINCIPAL + ZK_KRB5_KEYTAB with --acl creator: the lock node is sasl:carol@ZK.TEST’s; dave and an unauthenticated session get NoAuth; without --acl dave deletes it (control)', async () => {
    const env = { ZK_SASL_MECHANISM: 'GSSAPI', ZK_KRB5_PRINCIPAL: 'carol', ZK_KRB5_KEYTAB: keytab, KRB5_CONFIG: kdc.krb5Conf };
    const path = `/krb-lock-${Date.now()}`;
    const run = zkLock(['--acl', 'creator', `${path}/lock`, '--', ...HOLD], env);
    await waitFor('the command to start', () => (run.out().includes('ready') ? true : undefined));

    await using owner = await ZooKeeper.connect(zk.connectString, { sasl: carol() });
    const [node] = await owner.getChildren(`${path}/lock`);
    expect((await owner.getACL(`${path}/lock/${node}`)).acl).toEqual([{ perms: Perm.ALL, id: { scheme: 'sasl', id: 'carol@ZK.TEST' } }]);
    await using intruder = await ZooKeeper.connect(zk.connectString, { sasl: dave() });
    await using anonymous = await ZooKeeper.connect(zk.connectString);
    for (const other of [intruder, anonymous]) {
      await expect(other.delete(`${path}/lock/${node}`)).rejects.toBeInstanceOf(NoAuthError);
      await expect(other.setData(`${path}/lock/${node}`, '__REVOKE__')).rejects.toBeInstanceOf(NoAuthError);
      await expect(other.getData(`${path}/lock/${node}`)).rejects.toBeInstanceOf(NoAuthError);
    }
    run.kill('SIGTERM');
    expect(await run.exit).toBe(0);
    expect(await owner.getChildren(`${path}/lock`)).toEqual([]);

    // The control: no --acl, the node is open, and dave's delete takes the lease away (exit 76).
    const open = zkLock([`${path}/open`, '--', ...HOLD], env);
    await waitFor('the command to start', () => (open.out().includes('ready') ? true : undefined));
    const [openNode] = await owner.getChildren(`${path}/open`);
    await intruder.delete(`${path}/open/${openNode}`);
    expect(await open.exit).toBe(76);
  });

  it('zk-lock - a kinit ccache from KRB5CCNAME with --acl sasl:carol@ZK.TEST:cdrwa; status under another principal is refused (77)', async () => {
    const ccache = kdc.kinit('carol', { password: PASSWORDS.carol });
    const env = { ZK_SASL_MECHANISM: 'GSSAPI', KRB5CCNAME: `FILE:${ccache}`, KRB5_CONFIG: kdc.krb5Conf };
    const path = `/krb-ccache-${Date.now()}`;
    const run = zkLock(['--acl', 'sasl:carol@ZK.TEST:cdrwa', `${path}/lock`, '--', process.execPath, '-e', 'console.log("token " + process.env.ZK_LOCK_FENCING_TOKEN)'], env);
    expect(await run.exit, run.err()).toBe(0);
    expect(run.out()).toMatch(/^token \d+\n$/);
    await using owner = await ZooKeeper.connect(zk.connectString, { sasl: carol() });
    expect((await owner.getACL(`${path}/lock`)).acl).toEqual([{ perms: Perm.ALL, id: { scheme: 'sasl', id: 'carol@ZK.TEST' } }]);

    const daveCcache = kdc.kinit('dave', { password: PASSWORDS.dave });
    const hold = zkLock(['--acl', 'creator', `${path}/held`, '--', ...HOLD], env);
    await waitFor('the command to start', () => (hold.out().includes('ready') ? true : undefined));
    const blind = zkLock(['status', '--json', `${path}/held`], { ...env, KRB5CCNAME: `FILE:${daveCcache}` });
    expect(await blind.exit).toBe(77); // EX_NOPERM
    expect(blind.err()).toMatch(/NOAUTH .*Kerberos \(ccache .*dave.*\)/);
    hold.kill('SIGTERM');
    expect(await hold.exit).toBe(0);
  });

  it('zk-lock - refusals name the variable: a missing keytab and a missing ccache are usage errors (64), a keytab of another principal fails to connect (69)', async () => {
    const missing = zkLock(['/x', '--', 'true'], { ZK_SASL_MECHANISM: 'GSSAPI', ZK_KRB5_PRINCIPAL: 'carol', ZK_KRB5_KEYTAB: `${kdc.dir}/nope.keytab`, KRB5_CONFIG: kdc.krb5Conf });
    expect(await missing.exit).toBe(64);
    expect(missing.err()).toMatch(/ZK_KRB5_KEYTAB: cannot read .*nope\.keytab \(ENOENT\)/);
    const noCcache = zkLock(['/x', '--', 'true'], { ZK_SASL_MECHANISM: 'GSSAPI', KRB5CCNAME: `FILE:${kdc.dir}/no-ccache`, KRB5_CONFIG: kdc.krb5Conf });
    expect(await noCcache.exit).toBe(64);
    expect(noCcache.err()).toMatch(/KRB5CCNAME: cannot read .*no-ccache \(ENOENT\): run kinit/);
    const wrong = zkLock(['/x', '--', 'true'], { ZK_SASL_MECHANISM: 'GSSAPI', ZK_KRB5_PRINCIPAL: 'dave', ZK_KRB5_KEYTAB: keytab, KRB5_CONFIG: kdc.krb5Conf });
    expect(await wrong.exit).toBe(69);
    expect(wrong.err()).toMatch(/Kerberos dave \(keytab .*\).*has no key for dave@ZK.TEST/s);
  });

  afterAll(() => {
    const all = printed.join('\n');
    expect(all.length).toBeGreaterThan(0);
    for (const secret of Object.values(PASSWORDS)) expect(all.includes(secret), 'a password appeared in zk-lock’s output').toBe(false);
  });
});
