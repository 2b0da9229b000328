/**
 * The demo, `npm run zk -- check` and the bench on an ensemble that needs credentials (issue 27
 * part 3): zk-lock's variables (here a digest identity from ZK_DIGEST_FILE) reach each tool's
 * clients, and `--acl creator` makes the nodes they create the identity's, which another session
 * cannot delete. TLS and SASL come through the same reader (securityFromEnv), whose every
 * variable zk-lock-secure.test.ts drives against a TLS and SASL server; this file checks that the
 * tools use it. The world-ACL control: the same demo without --acl leaves its nodes open.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NoAuthError, OPEN_ACL_UNSAFE, Perm, ZooKeeper, digestId } from '@zk/protocol';
import { waitFor } from '../../harness/index.js';
import { connectString } from '../../harness/fixtures.js';

const DEMO = fileURLToPath(new URL('../../../scripts/dist/demo.js', import.meta.url));
const ZK = fileURLToPath(new URL('../../../scripts/dist/zk.js', import.meta.url));
const BENCH = fileURLToPath(new URL('../../../bench/dist/run.js', import.meta.url));
const PASSWORD = 'tools-Pw-5521';
const ALICE = [{ perms: Perm.ALL, id: digestId('alice', PASSWORD) }];

let dir: string;
let env: Record<string, string>;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'zk-tools-secure-'));
  const file = join(dir, 'alice');
  writeFileSync(file, `alice:${PASSWORD}\n`);
  chmodSync(file, 0o600);
  env = { PATH: process.env.PATH ?? '', ZK_CONNECT: connectString(), ZK_DIGEST_FILE: file };
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Runs a tool to its end: exit code and everything it printed. */
function run(script: string, args: string[], extraEnv: Record<string, string> = {}): { done: Promise<{ code: number; out: string }> } {
  const child = spawn(process.execPath, [script, ...args], { env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return { done: new Promise((resolve) => child.once('exit', (code) => resolve({ code: code ?? -1, out }))) };
}

/** The ACL of the first lock node the demo makes, read as alice while the demo runs; and whether an unauthenticated delete of it was refused. */
async function watchDemo(alice: ZooKeeper, anonymous: ZooKeeper): Promise<{ acl: unknown; intruder: unknown }> {
  return waitFor('a lock node of the demo', async () => {
    const base = (await alice.getChildren('/')).find((c) => c.startsWith('zk-demo-'));
    if (!base) return undefined;
    const fifo = `/${base}/fifo`;
    const nodes = await alice.getChildren(fifo).catch(() => [] as string[]);
    const node = nodes.find((n) => n.includes('lock-'));
    if (!node) return undefined;
    const acl = (await alice.getACL(`${fifo}/${node}`).catch(() => ({ acl: undefined }))).acl;
    if (!acl) return undefined;
    const intruder = await anonymous.delete(`${fifo}/${node}`).then(
      () => 'deleted',
      (e: unknown) => e,
    );
    return { acl, intruder };
  }, 60_000, 20);
}

describe('tools - on an ensemble that needs credentials', () => {
  it('the demo: its zk-locks authenticate from ZK_DIGEST_FILE and, with --acl creator, their nodes are alice\'s (an intruder\'s delete is refused)', async () => {
    await using alice = await ZooKeeper.connect(connectString(), { auth: [{ scheme: 'digest', auth: `alice:${PASSWORD}` }] });
    await using anonymous = await ZooKeeper.connect(connectString());
    const demo = run(DEMO, ['--acl', 'creator']);
    const seen = await watchDemo(alice, anonymous);
    const { code, out } = await demo.done;
    expect(code, out).toBe(0);
    expect(out).toContain('digest user alice; --acl creator');
    expect(out).toMatch(/FIFO: alpha -> bravo -> charlie -> delta/);
    expect(seen.acl).toEqual(ALICE);
    expect(seen.intruder).toBeInstanceOf(NoAuthError);
    expect(out).not.toContain(PASSWORD);
  }, 120_000);

  it('the demo without --acl (control): the same nodes are open, and the intruder\'s delete succeeds', async () => {
    await using alice = await ZooKeeper.connect(connectString(), { auth: [{ scheme: 'digest', auth: `alice:${PASSWORD}` }] });
    await using anonymous = await ZooKeeper.connect(connectString());
    const demo = run(DEMO, []);
    const seen = await watchDemo(alice, anonymous);
    await demo.done; // a scene whose holder's node an intruder deleted may report it; the run ends either way
    expect(seen.acl).toEqual(OPEN_ACL_UNSAFE);
    expect(seen.intruder).toBe('deleted');
  }, 120_000);

  it('npm run zk -- check: says who the session is, and --probe creates a node with the --acl given', async () => {
    const path = `/tools-check-${Date.now()}`;
    const { code, out } = await run(ZK, ['check', '--probe', path, '--acl', 'creator']).done;
    expect(code, out).toBe(0);
    expect(out).toContain('digest user alice');
    expect(out).toMatch(/identities: .*digest:alice/);
    expect(out).toContain(`probe: created ${path}/zk-check-`);
    expect(out).toContain(`digest:${digestId('alice', PASSWORD).id}:${Perm.ALL}`);
    expect(out).not.toContain(PASSWORD);
    const unreadable = await run(ZK, ['check'], { ZK_DIGEST_FILE: join(dir, 'missing') }).done;
    expect(unreadable.code).toBe(2);
    expect(unreadable.out).toMatch(/ZK_DIGEST_FILE: cannot read .*missing \(ENOENT\)/);
  });

  it('the bench: runs our client with the credentials and --acl, and says the peers were left out', async () => {
    const { code, out } = await run(BENCH, ['--quick', '--reps', '1', '--only', '^uncontended acquire\\+release: Mutex$', '--no-ensemble', '--acl', 'creator']).done;
    expect(code, out).toBe(0);
    expect(out).toMatch(/uncontended acquire\+release: Mutex/);
    expect(out).toContain('a secured ensemble (digest user alice, --acl creator): the peers are not given these credentials');
    expect(out).not.toContain(PASSWORD);
  }, 180_000);
});
