/**
 * zk-lock on a secured ensemble (issue 27 part 3): credentials and TLS from the environment and
 * files, `--acl` for the nodes it creates, and no secret in anything it prints. One own server
 * (test/harness/secured.ts): a plain port (digest), SASL DIGEST-MD5 users (JAAS), and a TLS port
 * that requires client certificates (x509).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NoAuthError, Perm, ZooKeeper, digestId } from '@zk/protocol';
import { SECURED_DIGEST_USERS, SECURED_SASL_USERS, startSecuredZooKeeper, waitFor, type SecuredZooKeeper } from '../../harness/index.js';

const CLI = fileURLToPath(new URL('../../../packages/locks/dist/cli/zk-lock.js', import.meta.url));
const external = process.env.ZK_CONNECT;

const SECRETS = { alice: SECURED_DIGEST_USERS.alice, mallory: SECURED_DIGEST_USERS.mallory, bob: SECURED_SASL_USERS.bob, pfx: '' };

let secured: SecuredZooKeeper;
let securePort: number;
let dir: string;
let caFile: string;
let pfxFile: string;
let passFile: string;
/** Everything every zk-lock run printed: searched for the secrets at the end. */
const printed: string[] = [];

function secretFile(name: string, content: string | Buffer): string {
  return secured.secretFile(name, content);
}

interface Run {
  out: () => string;
  err: () => string;
  exit: Promise<number>;
  kill: (sig: NodeJS.Signals) => void;
}

function zkLock(args: string[], env: Record<string, string>, connect = secured.plain): Run {
  const child = spawn(process.execPath, [CLI, '--connect', connect, '--session-timeout', '4s', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', ...env } });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number>((resolve) =>
    child.once('exit', (code, signal) => {
      printed.push(out, err);
      resolve(code ?? (signal ? -1 : 0));
    }),
  );
  return { out: () => out, err: () => err, exit, kill: (sig) => child.kill(sig) };
}

/** A command that says `ready`, then waits for SIGTERM and exits 0. */
const HOLD = [process.execPath, '-e', 'process.on("SIGTERM", () => process.exit(0)); console.log("ready"); setInterval(() => {}, 1000);'];

describe.skipIf(external)('zk-lock - a secured ensemble', () => {
  beforeAll(async () => {
    secured = await startSecuredZooKeeper();
    ({ dir, securePort, caFile } = secured);
    SECRETS.pfx = secured.client.passphrase;
    pfxFile = secured.client.pfxFile;
    passFile = secretFile('pfx-pass', secured.client.passphrase);
  }, 180_000);

  afterAll(async () => {
    await secured?.close();
  });

  it('digest from ZK_DIGEST_FILE with --acl creator: intruders get NoAuth and the holder keeps the lock; status needs the identity; the default ACL lets them in (control)', async () => {
    const aliceEnv = { ZK_DIGEST_FILE: secretFile('alice', `alice:${SECRETS.alice}\n`) };
    const path = `/secure-digest-${Date.now()}`;
    const run = zkLock(['--acl', 'creator', `${path}/lock`, '--', ...HOLD], aliceEnv);
    await waitFor('the command to start', () => (run.out().includes('ready') ? true : undefined));

    await using admin = await ZooKeeper.connect(secured.plain, { auth: [{ scheme: 'digest', auth: `alice:${SECRETS.alice}` }] });
    const [node] = await admin.getChildren(`${path}/lock`);
    const { acl } = await admin.getACL(`${path}/lock/${node}`);
    expect(acl).toEqual([{ perms: Perm.ALL, id: digestId('alice', SECRETS.alice) }]);

    await using anonymous = await ZooKeeper.connect(secured.plain);
    await using mallory = await ZooKeeper.connect(secured.plain, { auth: [{ scheme: 'digest', auth: `mallory:${SECRETS.mallory}` }] });
    for (const intruder of [anonymous, mallory]) {
      await expect(intruder.delete(`${path}/lock/${node}`)).rejects.toBeInstanceOf(NoAuthError);
      await expect(intruder.setData(`${path}/lock/${node}`, '__REVOKE__')).rejects.toBeInstanceOf(NoAuthError);
      await expect(intruder.create(`${path}/lock/_c_x-lock-`, null)).rejects.toBeInstanceOf(NoAuthError);
    }
    expect(await admin.getChildren(`${path}/lock`)).toEqual([node]);

    const status = zkLock(['status', '--json', `${path}/lock`], aliceEnv);
    expect(await status.exit).toBe(0);
    expect(JSON.parse(status.out()).holders).toHaveLength(1);
    const blind = zkLock(['status', '--json', `${path}/lock`], {});
    expect(await blind.exit).toBe(77); // EX_NOPERM, not 69 ("could not reach ZooKeeper")
    expect(blind.err()).toMatch(/NOAUTH .*belongs to another identity than this one \(.*\): run with the credentials of its owner/);

    run.kill('SIGTERM');
    expect(await run.exit).toBe(0);
    expect(await admin.getChildren(`${path}/lock`)).toEqual([]);

    // The control: without --acl, the lock node is open and the intruder's delete succeeds.
    const open = zkLock([`${path}/open`, '--', ...HOLD], aliceEnv);
    await waitFor('the command to start', () => (open.out().includes('ready') ? true : undefined));
    const [openNode] = await admin.getChildren(`${path}/open`);
    await anonymous.delete(`${path}/open/${openNode}`);
    expect(await open.exit).toBe(76); // the lease was lost: the command was stopped
  });

  it('SASL from ZK_SASL_USER and ZK_SASL_PASSWORD_FILE, with --acl sasl:bob:cdrwa', async () => {
    const env = { ZK_SASL_USER: 'bob', ZK_SASL_PASSWORD_FILE: secretFile('bob', SECRETS.bob) };
    const path = `/secure-sasl-${Date.now()}`;
    const run = zkLock(['--acl', 'sasl:bob:cdrwa', `${path}/lock`, '--', ...HOLD], env);
    await waitFor('the command to start', () => (run.out().includes('ready') ? true : undefined));
    await using bob = await ZooKeeper.connect(secured.plain, { sasl: { mechanism: 'DIGEST-MD5', username: 'bob', password: SECRETS.bob } });
    const [node] = await bob.getChildren(`${path}/lock`);
    expect((await bob.getACL(`${path}/lock/${node}`)).acl).toEqual([{ perms: Perm.ALL, id: { scheme: 'sasl', id: 'bob' } }]);
    await using anonymous = await ZooKeeper.connect(secured.plain);
    await expect(anonymous.delete(`${path}/lock/${node}`)).rejects.toBeInstanceOf(NoAuthError);
    run.kill('SIGTERM');
    expect(await run.exit).toBe(0);

    const wrong = zkLock(['/x', '--', 'true'], { ZK_SASL_USER: 'bob', ZK_SASL_PASSWORD_FILE: secretFile('bob-wrong', 'not-it') });
    expect(await wrong.exit).toBe(69);
    expect(wrong.err()).toMatch(/SASL user bob/);
  });

  it('mutual TLS from ZK_TLS_CA, ZK_TLS_PFX and its passphrase file, the x509 identity owning the nodes (--acl creator); without a client certificate it cannot connect', async () => {
    const env = { ZK_TLS_CA: caFile, ZK_TLS_PFX: pfxFile, ZK_TLS_KEY_PASSPHRASE_FILE: passFile, ZK_TLS_SERVERNAME: 'localhost' };
    const path = `/secure-tls-${Date.now()}`;
    const run = zkLock(['--acl', 'creator', path, '--', process.execPath, '-e', 'console.log("token " + process.env.ZK_LOCK_FENCING_TOKEN); process.exit(7)'], env, `127.0.0.1:${securePort}`);
    expect(await run.exit).toBe(7);
    expect(run.out()).toMatch(/^token \d+\n$/);

    const noCert = zkLock([path, '--', 'true'], { ZK_TLS_CA: caFile, ZK_TLS_SERVERNAME: 'localhost' }, `127.0.0.1:${securePort}`);
    expect(await noCert.exit).toBe(69);
    expect(noCert.err()).toMatch(/\(TLS \(CA pinned, server name localhost\)\)/);
    const missing = zkLock([path, '--', 'true'], { ZK_TLS_CA: join(dir, 'nope.pem') }, `127.0.0.1:${securePort}`);
    expect(await missing.exit).toBe(64);
    expect(missing.err()).toMatch(/ZK_TLS_CA: cannot read .*nope\.pem \(ENOENT\)/);
  });

  it('the library: no secret in NODE_DEBUG=zk lines, diagnostics channel payloads, or thrown errors and their causes, refusals included', async () => {
    const entry = new URL('../../../packages/protocol/dist/index.js', import.meta.url).href;
    // Every channel printed, every error printed whole (util.inspect: message, stack, cause chain, fields).
    const script = `
      const { inspect } = await import('node:util');
      const dc = await import('node:diagnostics_channel');
      const { ZooKeeper, ChannelName } = await import(${JSON.stringify(entry)});
      const show = (v) => console.log(inspect(v, { depth: 10, showHidden: true }));
      for (const name of Object.values(ChannelName)) dc.subscribe(name, (m) => show({ channel: name, m }));
      const [plain, secure, ca, pfxFile] = process.argv.slice(1);
      const { readFileSync } = await import('node:fs');
      const tls = { ca: readFileSync(ca), pfx: readFileSync(pfxFile), passphrase: ${JSON.stringify(SECRETS.pfx)}, servername: 'localhost' };
      const attempt = async (what, fn) => { try { show({ what, ok: await fn() }); } catch (e) { show({ what, error: e }); } };
      await attempt('digest', async () => { const zk = await ZooKeeper.connect(plain, { auth: [{ scheme: 'digest', auth: 'alice:${SECRETS.alice}' }] }); const p = await zk.create('/s-' + Date.now(), 'x', { acl: [{ perms: 31, id: { scheme: 'auth', id: '' } }] }); await zk.addAuth('digest', 'mallory:${SECRETS.mallory}'); await zk.close(); return p; });
      await attempt('digest refused', async () => { const zk = await ZooKeeper.connect(plain); try { const p = await zk.create('/d-' + Date.now(), 'x', { acl: [{ perms: 31, id: { scheme: 'digest', id: 'alice:${SECRETS.alice}' } }] }); return await zk.getData(p); } finally { await zk.close(); } });
      await attempt('sasl', async () => { const zk = await ZooKeeper.connect(plain, { sasl: { mechanism: 'DIGEST-MD5', username: 'bob', password: '${SECRETS.bob}' } }); const who = await zk.whoAmI(); await zk.close(); return who; });
      await attempt('sasl wrong', () => ZooKeeper.connect(plain, { sasl: { mechanism: 'DIGEST-MD5', username: 'bob', password: '${SECRETS.bob}x' }, connectTimeout: 3000 }));
      await attempt('tls', async () => { const zk = await ZooKeeper.connect(secure, { tls }); const who = await zk.whoAmI(); await zk.close(); return who; });
      await attempt('tls wrong passphrase', () => ZooKeeper.connect(secure, { tls: { ...tls, passphrase: '${SECRETS.pfx}x' }, connectTimeout: 2000 }));
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, secured.plain, `127.0.0.1:${securePort}`, caFile, pfxFile], { env: { PATH: process.env.PATH ?? '', NODE_DEBUG: 'zk' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code, out).toBe(0);
    // The scenarios ran: each succeeded or was refused as it should be.
    expect(out).toMatch(/what: 'digest',\s+ok: '\/s-/);
    expect(out).toMatch(/what: 'digest refused',\s+error: /);
    expect(out).toMatch(/what: 'sasl',\s+ok: \[[\s\S]*?authScheme: 'sasl'/);
    expect(out).toMatch(/what: 'sasl wrong',\s+error: [\s\S]*?AuthFailed/);
    expect(out).toMatch(/what: 'tls',\s+ok: \[[\s\S]*?authScheme: 'x509'/);
    expect(out).toMatch(/what: 'tls wrong passphrase',\s+error:/);
    expect(out).toMatch(/^ZK \d+: /m); // NODE_DEBUG lines were written
    expect(out).toMatch(/channel: 'zk:request:finish'/);
    printed.push(out);
  });

  afterAll(() => {
    // No password, SASL secret or passphrase in anything zk-lock printed, failures included.
    const all = printed.join('\n');
    expect(all.length).toBeGreaterThan(0);
    for (const secret of Object.values(SECRETS)) expect(all.includes(secret), `a secret appeared in zk-lock's output`).toBe(false);
  });
});
