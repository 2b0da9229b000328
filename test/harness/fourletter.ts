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
