/**
 * node-zookeeper-client (the most used Node client; callbacks only) behind promises, for the
 * raw workloads. A devDependency of the bench only.
 */
import { createRequire } from 'node:module';

interface Nzc {
  connect(): void;
  close(): void;
  once(event: string, cb: () => void): void;
  getData(path: string, cb: (err: Error | null, data?: Buffer) => void): void;
  exists(path: string, cb: (err: Error | null, stat?: unknown) => void): void;
  create(path: string, data: Buffer | null, mode: number, cb: (err: Error | null, path?: string) => void): void;
  remove(path: string, version: number, cb: (err: Error | null) => void): void;
  setData(path: string, data: Buffer, version: number, cb: (err: Error | null) => void): void;
}

const nzc = createRequire(import.meta.url)('node-zookeeper-client') as { createClient(cs: string, opts: object): Nzc; CreateMode: { EPHEMERAL: number } };

const cb = <T>(resolve: (v: T) => void, reject: (e: Error) => void) => (err: Error | null, v?: T) => (err ? reject(err) : resolve(v as T));

/** A connected node-zookeeper-client with promise methods. */
export interface NzcClient {
  getData(path: string): Promise<Buffer>;
  exists(path: string): Promise<unknown>;
  setData(path: string, data: Buffer): Promise<void>;
  createEphemeral(path: string): Promise<string>;
  remove(path: string): Promise<void>;
  /**
   * Closes the session and resolves once the client reports the connection gone (its
   * `disconnected` event, after the server answered closeSession and the socket closed), so a
   * connect+close loop waits for the close as it does with ours. The client's own close() returns
   * at once.
   */
  close(): Promise<void>;
}

/** Connects node-zookeeper-client to `connectString`. */
export async function connectNzc(connectString: string): Promise<NzcClient> {
  const client = nzc.createClient(connectString, { sessionTimeout: 10_000 });
  await new Promise<void>((resolve) => {
    client.once('connected', resolve);
    client.connect();
  });
  return {
    getData: (p) => new Promise<Buffer>((res, rej) => client.getData(p, cb(res, rej))),
    exists: (p) => new Promise<unknown>((res, rej) => client.exists(p, cb(res, rej))),
    setData: (p, d) => new Promise<void>((res, rej) => client.setData(p, d, -1, cb(res, rej))),
    createEphemeral: (p) => new Promise<string>((res, rej) => client.create(p, null, nzc.CreateMode.EPHEMERAL, cb(res, rej))),
    remove: (p) => new Promise<void>((res, rej) => client.remove(p, -1, cb(res, rej))),
    close: () =>
      new Promise<void>((resolve) => {
        client.once('disconnected', resolve);
        client.close();
      }),
  };
}
