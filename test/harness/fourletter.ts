/**
 * ZooKeeper's four-letter words (`srvr`, `ruok`, `mntr`, ...) over a raw socket.
 */
import { connect } from 'node:net';

/** Sends `word` to host:port and returns the whole answer (the server closes after it). */
export function fourLetter(host: string, port: number, word: string, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`${word} to ${host}:${port}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('connect', () => socket.end(word));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

/** The `Mode:` line of a `srvr` answer (`standalone`, `leader`, `follower`, `observer`, `read-only`), or undefined. */
export function modeOf(srvr: string): string | undefined {
  return /^Mode: (\S+)/m.exec(srvr)?.[1];
}

/** What a server is, by its `srvr` answer; `down` when it does not answer or is not serving. */
export type ServerMode = 'leader' | 'follower' | 'standalone' | 'observer' | 'read-only' | 'down';

const MODES: ReadonlySet<string> = new Set<ServerMode>(['leader', 'follower', 'standalone', 'observer', 'read-only']);

/**
 * Asks host:port for `srvr` and returns its mode. A server still electing answers with
 * AbstractFourLetterCommand.ZK_NOT_SERVING and no Mode line: that counts as `down`.
 */
export async function probeMode(host: string, port: number, timeoutMs = 1000): Promise<ServerMode> {
  try {
    const mode = modeOf(await fourLetter(host, port, 'srvr', timeoutMs));
    return mode !== undefined && MODES.has(mode) ? (mode as ServerMode) : 'down';
  } catch {
    return 'down';
  }
}
