/**
 * Installing a Debian package the harness needs, in CI only: `CI=true`, root, apt-get present.
 * Elsewhere the caller's hint says what to install (the harness never installs on a developer's
 * machine). The package's own service is stopped afterwards: the harness runs private servers.
 */
import { spawnSync } from 'node:child_process';

/** Serialises the harness's installs across the test processes of a run. */
const APT_LOCK = '/tmp/zk-harness-apt.lock';

/** Installs `packages` quietly when CI=true and running as root; false when it may not (or could not). */
export function installInCi(packages: readonly string[], service?: string): boolean {
  if (process.env.CI !== 'true' || process.getuid?.() !== 0) return false;
  if (spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0) return false;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  process.stderr.write(`[harness] apt-get install ${packages.join(' ')}\n`);
  // Test files run side by side (two pools) and several may install at once: one apt-get at a
  // time (flock on a lock file of ours; dpkg's own lock would fail the second one at once).
  const apt = (args: string[], stdio: 'ignore' | ['ignore', 'ignore', 'inherit']) => spawnSync('flock', ['-w', '900', APT_LOCK, 'apt-get', ...args], { stdio, env }).status === 0;
  if (!apt(['install', '-y', '-qq', '--no-install-recommends', ...packages], 'ignore')) {
    apt(['update', '-qq'], 'ignore');
    if (!apt(['install', '-y', '-qq', '--no-install-recommends', ...packages], ['ignore', 'ignore', 'inherit'])) return false;
  }
  if (service) spawnSync('sh', ['-c', `(systemctl stop ${service} || service ${service} stop) >/dev/null 2>&1 || true`], { stdio: 'ignore' });
  return true;
}
