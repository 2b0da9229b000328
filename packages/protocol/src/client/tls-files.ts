/**
 * TLS options read from files at every connection attempt, so that a long-lived client picks up
 * certificates rotated on disk at its next reconnect (ZooKeeper 3.9's client `certReload`).
 */
import { readFile } from 'node:fs/promises';
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { InvalidArgumentError } from '../errors.js';

/** The files of {@link tlsFromFiles}: paths, each optional. */
export interface TlsFiles {
  /** CA certificates (PEM) to check the server against, instead of the system's: a pinned CA. */
  ca?: string;
  /** A client certificate (PEM), with `key`. */
  cert?: string;
  /** The client certificate's private key (PEM), with `cert`. */
  key?: string;
  /** Or the client certificate and key in one PKCS#12 file (a Java keystore). */
  pfx?: string;
  /** A file holding the passphrase of `key` or `pfx` (its one line). */
  passphrase?: string;
}

/**
 * TLS options for `ZooKeeper.connect(hosts, { tls })` that read `files` again before every
 * connection attempt: replace the files (write and rename) and the next reconnect uses the new
 * certificates, with the same session. `extra` is merged in as it is (`servername`, ...). A file
 * that cannot be read fails that attempt only (ConnectionLoss, the read error as its cause); the
 * client tries again, reading again.
 *
 * The server's certificate and host name are checked by default, as by `node:tls`: `ca` pins the
 * CA, and `servername` (in `extra`) names the host the certificate must carry when it is not the
 * connect string's.
 *
 * @example
 * ```ts
 * const tls = tlsFromFiles({ ca: '/etc/zk/ca.pem', cert: '/etc/zk/client.pem', key: '/etc/zk/client.key' });
 * await using zk = await ZooKeeper.connect('zk1:2281,zk2:2281', { tls });
 * ```
 */
export function tlsFromFiles(files: TlsFiles, extra: TlsConnectionOptions = {}): () => Promise<TlsConnectionOptions> {
  for (const name of ['ca', 'cert', 'key', 'pfx', 'passphrase'] as const) {
    const path = files[name];
    if (path !== undefined && (typeof path !== 'string' || path === '')) throw new InvalidArgumentError(`files.${name}`, 'must be a file path');
  }
  if ((files.cert === undefined) !== (files.key === undefined)) throw new InvalidArgumentError('files', 'cert and key go together');
  if (files.pfx !== undefined && files.cert !== undefined) throw new InvalidArgumentError('files', 'pfx and cert/key exclude each other');
  const read = (path: string | undefined) => (path === undefined ? undefined : readFile(path));
  return async () => {
    const [ca, cert, key, pfx, passphrase] = await Promise.all([read(files.ca), read(files.cert), read(files.key), read(files.pfx), read(files.passphrase)]);
    return {
      ...extra,
      ...(ca ? { ca } : {}),
      ...(cert && key ? { cert, key } : {}),
      ...(pfx ? { pfx } : {}),
      ...(passphrase ? { passphrase: passphrase.toString('utf8').replace(/\r?\n$/, '') } : {}),
    };
  };
}
