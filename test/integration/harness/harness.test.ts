import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZooKeeper } from '@zk/protocol';
import { dockerAvailable, fourLetter, modeOf, startZooKeeper, timing, waitFor, type ZooKeeperEnsemble } from '../../harness/index.js';

const external = process.env.ZK_CONNECT;
// Under Testcontainers the servers are containers, not Java processes of ours.
const containers = !external && (await dockerAvailable());

describe.skipIf(external)('harness - servers (skipped on an external ensemble: they kill servers)', () => {
  let standalone: ZooKeeperEnsemble;
  let ensemble: ZooKeeperEnsemble;

  beforeAll(async () => {
    // Two ensembles side by side: a standalone server and a 3-node ensemble, started together.
    [standalone, ensemble] = await Promise.all([startZooKeeper({ servers: 1, own: true }), startZooKeeper({ servers: 3, own: true })]);
    process.stderr.write(`[zk] start times: standalone ${Math.round(standalone.startMs)} ms, 3-node ensemble ${Math.round(ensemble.startMs)} ms\n`);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([standalone?.close(), ensemble?.close()]);
  });

  it('a standalone server answers srvr', async () => {
    expect(standalone.servers).toHaveLength(1);
    expect(await standalone.servers[0]!.mode()).toBe('standalone');
    expect(modeOf(await fourLetter('127.0.0.1', standalone.servers[0]!.port, 'srvr'))).toBe('standalone');
  });

  it('a 3-node ensemble has one leader and two followers, on ports distinct from the other ensemble', async () => {
    const modes = await Promise.all(ensemble.servers.map((s) => s.mode()));
    expect(modes.sort()).toEqual(['follower', 'follower', 'leader']);
    const ports = new Set([...ensemble.servers, ...standalone.servers].map((s) => s.port));
    expect(ports.size).toBe(4);
    expect(ensemble.connectString.split(',')).toHaveLength(3);
  });

  it('killing the leader yields a new leader, and restart brings the old one back as a follower', async () => {
    const old = await ensemble.leader();
    expect(old).toBeDefined();
    await old!.kill();
    expect(await old!.mode()).toBe('down');
    const next = await ensemble.waitForQuorum();
    expect(next.id).not.toBe(old!.id);
    expect(await next.mode()).toBe('leader');
    await old!.start();
    await waitFor('the old leader to rejoin', async () => ((await old!.mode()) === 'follower' ? true : undefined));
    expect((await ensemble.leader())?.id).toBe(next.id);
  });

  it('stop and restart keep a server’s data', async () => {
    const s = standalone.servers[0]!;
    const before = await ZooKeeper.connect(s.connectString);
    await before.create('/kept', Buffer.from('across a restart'));
    await before.close();
    const pid = s.pid;
    await s.restart();
    if (!containers) expect(s.pid).not.toBe(pid); // a container has no pid of ours
    expect(await s.mode()).toBe('standalone');
    const after = await ZooKeeper.connect(s.connectString);
    expect((await after.getData('/kept')).data.toString()).toBe('across a restart');
    await after.close();
    expect(await standalone.logs()).toContain('--- server 1');
  });

  it('stop takes a server down until start', async () => {
    const follower = (await Promise.all(ensemble.servers.map(async (s) => ((await s.mode()) === 'follower' ? s : undefined)))).find(Boolean)!;
    await follower.stop();
    expect(follower.pid).toBeUndefined();
    expect(await follower.mode()).toBe('down');
    await follower.start();
    expect(await follower.mode()).toBe('follower');
  });
});

describe.skipIf(external)('harness - crash safety', () => {
  const dist = fileURLToPath(new URL('../../dist/harness/index.js', import.meta.url));

  it.skipIf(!existsSync(dist) || containers)('a SIGKILLed owner does not leave its Java server behind (needs `tsc -b`; local servers only)', async () => {
    // A separate Node process starts a server with the built harness, reports the server's pid,
    // and is killed with SIGKILL: no exit hook runs, only the watchdog can clean up.
    const script = `const { startZooKeeper } = await import(${JSON.stringify(pathToFileURL(dist).href)}); const zk = await startZooKeeper({ servers: 1, own: true }); console.log(zk.servers[0].pid); setInterval(() => {}, 1000);`;
    const owner = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const ownerExit = new Promise((r) => owner.once('exit', r));
    const pid = Number(await new Promise<string>((resolve, reject) => {
      owner.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()));
      owner.once('exit', () => reject(new Error('owner exited before starting a server')));
    }));
    expect(alive(pid)).toBe(true);
    // The server's last argument is its zoo.cfg, in <ensemble dir>/server-1/.
    const cfg = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).at(-1)!;
    const ensembleDir = dirname(dirname(cfg));
    expect(existsSync(ensembleDir)).toBe(true);
    owner.kill('SIGKILL');
    await ownerExit;
    await waitFor('the orphaned server to die', () => (alive(pid) ? undefined : true), timing(10_000));
    await waitFor('its data directory to be removed', () => (existsSync(ensembleDir) ? undefined : true), timing(10_000));
  }, 60_000);

  /** A zombie (not reaped where PID 1 does not reap) counts as dead. */
  function alive(pid: number): boolean {
    try {
      process.kill(pid, 0);
    } catch {
      return false;
    }
    try {
      return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    } catch {
      return false;
    }
  }
});
