/**
 * examples/kerberos.ts (the built file, examples/dist/kerberos.js: the test command builds first)
 * against the test realm: a private MIT KDC and a Kerberized ZooKeeper. Run as a user runs it, a
 * child process with the principal, its keytab and krb5.conf named by the environment. It prints
 * the session's sasl identity and a fencing token, and leaves the lock's path (created with
 * CREATOR_ALL_ACL) owned by that identity alone: another principal and an unauthenticated
 * session get NoAuth under it. The negative control: the same program given a keytab of another
 * principal fails with exit code 1 and the typed Kerberos error, printing no key. And the
 * Kerberos block of packages/protocol/README.md is the example's code, so the README shows what
 * runs here.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NoAuthError, Perm, ZooKeeper, type ACL } from '@zk/protocol';
import { Mutex } from '@zk/locks';
import { readKeytab } from '../../../packages/protocol/src/kerberos/keytab.js';
import { readmeBlocks } from '../../consumer/readme-blocks.js';
import { kerberizedServerOptions, startKdc, type TestKdc } from '../../harness/kdc.js';
import { outcome } from '../../harness/timing.js';
import { startZooKeeper, type ZooKeeperEnsemble } from '../../harness/zookeeper.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const SOURCE = `${REPO}examples/kerberos.ts`;
const BUILT = `${REPO}examples/dist/kerberos.js`;
/** The lock path examples/kerberos.ts uses, and its parents. */
const LOCK = '/kerberos-example/deploy/lock';
const PATHS = ['/kerberos-example', '/kerberos-example/deploy', LOCK];
/** What the server stores for CREATOR_ALL_ACL created by carol's Kerberos session. */
const CAROLS: ACL[] = [{ perms: Perm.ALL, id: { scheme: 'sasl', id: 'carol@ZK.TEST' } }];
const PASSWORDS = { carol: 'carol-Krb-example-31', dave: 'dave-Krb-example-42' };

/** The example's code without its leading doc comment: what the README block must hold. */
function exampleCode(): string {
  return readFileSync(SOURCE, 'utf8').replace(/^\/\*\*[\s\S]*?\*\/\n/, '');
}

describe.skipIf(process.env.ZK_CONNECT)('examples - kerberos (real MIT KDC, Kerberized ZooKeeper)', () => {
  let kdc: TestKdc;
  let zk: ZooKeeperEnsemble;
  const keytabs = { carol: '', dave: '' };
  const clients: ZooKeeper[] = [];

  /** Runs the built example with the realm's environment; resolves with its exit code and output. */
  function example(env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
    const child = spawn(process.execPath, [BUILT], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', ZK_CONNECT: zk.connectString, KRB5_CONFIG: kdc.krb5Conf, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000); // it must exit by itself
    return new Promise((resolve) =>
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, out, err });
      }),
    );
  }

  /** Every form a keytab's key could take in printed text: hex, base64, and Node's `<Buffer ..>` bytes. */
  async function keyForms(path: string): Promise<string[]> {
    return (await readKeytab(path)).flatMap((e) => {
      const key = e.key.material();
      return [key.toString('hex'), key.toString('base64'), key.toString('base64url'), [...key.subarray(0, 8)].map((b) => b.toString(16).padStart(2, '0')).join(' ')];
    });
  }

  const connect = async (who: 'carol' | 'dave' | 'nobody'): Promise<ZooKeeper> => {
    const options = who === 'nobody' ? {} : { sasl: { mechanism: 'GSSAPI' as const, principal: who, password: PASSWORDS[who], krb5Conf: kdc.krb5Conf } };
    const c = await ZooKeeper.connect(zk.connectString, options);
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    kdc = await startKdc();
    kdc.addPrincipal('carol', { password: PASSWORDS.carol });
    kdc.addPrincipal('dave', { password: PASSWORDS.dave });
    kdc.addPrincipal('zookeeper/localhost');
    // Keytabs without changing the passwords, so the test's own sessions log in with them.
    keytabs.carol = kdc.keytab('carol');
    keytabs.dave = kdc.keytab('dave');
    zk = await startZooKeeper({ servers: 1, own: true, ...kerberizedServerOptions(kdc, { keytab: kdc.keytab('zookeeper/localhost') }) });
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await zk?.close();
    await kdc?.stop();
  });

  it('example kerberos - the README’s Kerberos block is examples/kerberos.ts’s code (after its doc comment), marked not runnable with the reason', () => {
    const blocks = readmeBlocks(`${REPO}packages/protocol/README.md`, REPO).filter((b) => b.code.includes("mechanism: 'GSSAPI'"));
    expect(blocks).toHaveLength(1);
    const [block] = blocks as [(typeof blocks)[number]];
    expect(block.notRunnable).toMatch(/^needs a KDC: the same program is examples\/kerberos\.ts, run against a test realm by test\/integration\/kerberos\/example\.test\.ts$/);
    expect(block.code).toBe(exampleCode());
  });

  it('example kerberos - logs in from carol’s keytab, prints sasl:carol@ZK.TEST and a fencing token, releases and exits 0; the lock path is hers alone: dave and an unauthenticated session get NoAuth creating or queueing under it', async () => {
    const ran = await example({ ZK_KRB5_PRINCIPAL: 'carol@ZK.TEST', ZK_KRB5_KEYTAB: keytabs.carol });
    expect(ran, 'the example exited with 0, printing nothing on stderr').toMatchObject({ code: 0, err: '' });
    expect(ran.out).toMatch(/^connected as (.*, )?sasl:carol@ZK\.TEST(, .*)?$/m);
    expect(ran.out).toMatch(/^holding the lock with fencing token \d+$/m);
    expect(ran.out).toMatch(/\nreleased\n$/);

    const carol = await connect('carol');
    for (const p of PATHS) expect({ p, acl: (await carol.getACL(p)).acl }).toEqual({ p, acl: CAROLS });
    expect(await carol.getChildren(LOCK)).toEqual([]); // released: its node is gone
    for (const [who, session] of [['dave@ZK.TEST', await connect('dave')], ['unauthenticated', await connect('nobody')]] as const) {
      expect({ who, error: await outcome(session.create(`${LOCK}/x`)) }).toEqual({ who, error: expect.any(NoAuthError) });
      expect({ who, error: await outcome(new Mutex(session, LOCK).acquire({ timeout: 5_000 })) }).toEqual({ who, error: expect.any(NoAuthError) });
    }
    // The control: carol herself may create under it.
    expect(await carol.create(`${LOCK}/x`)).toBe(`${LOCK}/x`);
    await carol.delete(`${LOCK}/x`);
  });

  it('example kerberos - the negative control: ZK_KRB5_PRINCIPAL carol with dave’s keytab exits 1 with the typed Kerberos error naming both; no key of either keytab is printed', async () => {
    const ran = await example({ ZK_KRB5_PRINCIPAL: 'carol@ZK.TEST', ZK_KRB5_KEYTAB: keytabs.dave });
    expect(ran.code, `stdout:\n${ran.out}\nstderr:\n${ran.err}`).toBe(1);
    expect(ran.out).toBe('');
    // The connect's AuthFailedError, with the Kerberos error (a KerberosError) as its cause.
    const said = 'dave\\.keytab has no key for carol@ZK\\.TEST \\(it holds: dave@ZK\\.TEST\\): give the keytab of carol@ZK\\.TEST, or the principal the keytab is for \\(klist -kt\\)$';
    expect(ran.err).toMatch(new RegExp(`^AuthFailedError: SASL GSSAPI: \\S+${said}`, 'm'));
    // The wrong keytab (PreauthFailedError), not a malformed one.
    expect(ran.err).toMatch(new RegExp(`\\[cause\\]: PreauthFailedError: \\S+${said}`, 'm'));
    const printed = `${ran.out}${ran.err}`;
    for (const form of [...(await keyForms(keytabs.carol)), ...(await keyForms(keytabs.dave))]) expect(printed).not.toContain(form);
    for (const password of Object.values(PASSWORDS)) expect(printed).not.toContain(password);
  });
});
