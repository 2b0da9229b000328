/**
 * A detached watchdog for a private server (Postgres, Redis): once this Node process is gone
 * without stopping it (a vitest worker SIGKILLed on timeout runs no exit hook), it SIGKILLs the
 * server and removes its directory. It polls once a second and leaves by itself when the server
 * exits first, so it never signals a pid that may since belong to another process. The same
 * shape as local-install.ts's watchdog for ZooKeeper servers.
 */
import { spawn } from 'node:child_process';

const WATCHDOG = 'while kill -0 "$2" 2>/dev/null; do if ! kill -0 "$1" 2>/dev/null; then kill -9 "$2"; sleep 1; [ -n "$3" ] && rm -rf -- "$3"; exit 0; fi; sleep 1; done';

/** Watches `serverPid` on behalf of this process; removes `dir` after killing it. */
export function watchOrphan(serverPid: number | undefined, dir: string): void {
  if (serverPid === undefined) return;
  const dog = spawn('/bin/sh', ['-c', WATCHDOG, 'harness-watchdog', String(process.pid), String(serverPid), dir], { detached: true, stdio: 'ignore' });
  dog.on('error', () => {}); // no /bin/sh: the exit hook is all there is
  dog.unref();
}
