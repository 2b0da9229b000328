/**
 * Installing a Debian package the harness needs, in CI only: `CI=true`, root, apt-get present.
 * Elsewhere the caller's hint says what to install (the harness never installs on a developer's
 * machine). The package's own service is stopped afterwards: the harness runs private servers.
 */
import { spawnSync } from 'node:child_process';

/** Installs `packages` quietly when CI=true and running as root; false when it may not (or could not). */
export function installInCi(packages: readonly string[], service?: string): boolean {
  if (process.env.CI !== 'true' || process.getuid?.() !== 0) return false;
  if (spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0) return false;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  process.stderr.write(`[harness] apt-get install ${packages.join(' ')}\n`);
  if (spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], { stdio: 'ignore', env }).status !== 0) {
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env });
    if (spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], { stdio: ['ignore', 'ignore', 'inherit'], env }).status !== 0) return false;
  }
  if (service) spawnSync('sh', ['-c', `(systemctl stop ${service} || service ${service} stop) >/dev/null 2>&1 || true`], { stdio: 'ignore' });
  return true;
}
