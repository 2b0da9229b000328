/**
 * Dialing for the session: one address of a server, the handshake (resuming the session or asking
 * for a new one), and the new connection made ready before the application's requests go through
 * it: SASL, the generation probe, the credentials sent again, every watch registered again.
 */
import { Connection, type Reply } from '../connection/connection.js';
import { loadTls } from '../connection/transport.js';
import { OpCode, Xid } from '../constants.js';
import { AuthFailedError, ConnectionLossError, fromCode } from '../errors.js';
import { readSetSASLResponse, writeAuthPacket, writeGetSASLRequest, type WatcherEvent } from '../jute/proto.js';
import { endpointLabel, type Endpoint } from './hosts.js';
import type { SessionOptions } from './options.js';
import { setWatchesRequests } from './rewatch.js';
import { loginFor } from '../kerberos/gssapi-login.js';
import { DigestMd5Client, type SaslOptions } from './sasl.js';
import type { ServerChoice } from './server-choice.js';
import type { WatchRegistry } from './watches.js';

/** What re-arming a connection needs of the session. */
export interface RearmSource {
  readonly options: Pick<SessionOptions, 'sasl' | 'chroot' | 'maxFrameSize'>;
  /** The credentials added so far (Java's `authInfo`), in order. */
  readonly auth: ReadonlyArray<{ scheme: string; auth: Buffer }>;
  readonly watches: WatchRegistry;
  /** The session's highest zxid seen, read when it is sent. */
  lastZxid(): bigint;
}

/** What dialing needs of the session, and what it tells it. */
export interface DialingSession extends RearmSource {
  readonly options: SessionOptions;
  readonly servers: ServerChoice;
  /** Whether a read-write server ever granted the session: it is then presented, never asked for anew. */
  seenReadWrite(): boolean;
  sessionId(): bigint;
  password(): Buffer;
  /** A watch notification of the connection. */
  notification(event: WatcherEvent, zxid: bigint): void;
  /** The connection ended (undefined: before open() handed it over). */
  closed(conn: Connection | undefined, reason: Error | undefined): void;
  debug(format: string, ...args: unknown[]): void;
}

/**
 * Dials one address of a host, handshakes and re-arms; resolves with the connection ready for
 * the session. On any failure the connection is destroyed and the error passed on.
 */
export async function openConnection(host: Endpoint, session: DialingSession, signal: AbortSignal | undefined, prove: boolean): Promise<Connection> {
  const { options, servers } = session;
  const where = `${host.address}:${host.port}`;
  // coalesceReads 'auto': the connection learns whether the server has multiRead at its first
  // batch (Connection.request); a server that refused is not asked again.
  const coalesceReads = options.coalesceReads === true || (options.coalesceReads === 'auto' && !servers.hasNoMultiRead(where) ? 'probe' : false);
  const resume = session.seenReadWrite() || options.session !== undefined;
  let conn: Connection | undefined;
  // A session granted only by a read-only server is local to it: a client that never saw a
  // read-write server asks for a new session rather than presenting that one.
  const sessionId = resume ? session.sessionId() : 0n;
  try {
    const tls = await loadTls(options.tls, where);
    conn = await Connection.open(
      {
        host: host.host,
        address: host.address,
        port: host.port,
        tls,
        sessionTimeout: options.sessionTimeout,
        sessionId,
        passwd: resume ? session.password() : Buffer.alloc(16),
        lastZxidSeen: session.lastZxid(),
        canBeReadOnly: options.canBeReadOnly,
        connectTimeout: options.connectTimeout,
        maxFrameSize: options.maxFrameSize,
        coalesceReads,
        probeGeneration: true,
        signal,
      },
      {
        notification: (event, zxid) => session.notification(event, zxid),
        close: (reason) => session.closed(conn, reason),
        noMultiRead: () => {
          // A 3.5 server: back to it at once (the session lives there), reads alone from now on.
          session.debug('%s has no multiRead: reconnecting without coalesced reads', endpointLabel(host));
          servers.refusedMultiRead(where);
          servers.prefer(host);
        },
      },
    );
    await rearm(conn, session, prove, host);
    if (conn.closed) throw new ConnectionLossError(`connection to ${endpointLabel(host)} closed right after the handshake`);
    return conn;
  } catch (err) {
    conn?.destroy();
    throw err;
  }
}

/**
 * On a resumed session, sends the credentials again and re-registers every watch relative to
 * lastZxidSeen (SetWatches / SetWatches2, in batches under the frame limit), so a change made
 * while we were away fires the watch exactly once. Waits for the replies: requests from the
 * application are only let through once the connection is in the state the session expects.
 * With `prove`, a connection that got no such reply is pinged first: a resumed session is
 * reported `connected` only once a server has answered on the new connection, not on a
 * handshake alone (a server that completes handshakes and then fails every connection must
 * not make the session look healthy).
 */
async function rearm(conn: Connection, session: RearmSource, prove: boolean, host: Endpoint): Promise<void> {
  if (session.options.sasl) await sasl(conn, session.options.sasl, host);
  // After SASL (answered out of band, it must go alone first), before auth and setWatches.
  conn.startGenerationProbe();
  const replies: Array<Promise<Reply<unknown>>> = [];
  for (const { scheme, auth } of session.auth) {
    replies.push(conn.request(OpCode.auth, (w) => writeAuthPacket(w, { type: 0, scheme, auth }), undefined, { xid: Xid.auth }));
  }
  // Also on a new session (a read-only server's local session replaced by a real one), as the Java client does.
  if (session.watches.size > 0) {
    for (const req of setWatchesRequests(session.watches.snapshot(), session.options.chroot, session.lastZxid(), session.options.maxFrameSize)) {
      replies.push(conn.request(req.type, req.write, undefined, { xid: Xid.setWatches }));
    }
  }
  const proof = prove && replies.length === 0 ? conn.ping() : undefined;
  const answered = await Promise.all(replies);
  for (const reply of answered) {
    if (reply.err === -115) throw new AuthFailedError('the server refused the credentials on reconnect');
    if (reply.err !== 0) throw fromCode(reply.err, { op: 'setWatches' });
  }
  await proof;
}

/**
 * SASL on a new connection, before anything else is sent (the Java client holds other packets
 * until SASL completes): op `sasl` with GetSASLRequest tokens until the mechanism is complete.
 */
async function sasl(conn: Connection, options: SaslOptions, host: Endpoint): Promise<void> {
  let client: { initial(): Buffer; step(token: Buffer): Buffer | undefined };
  try {
    // GSSAPI: the TGT and a service ticket for this server first (kerberos/gssapi-login.ts).
    client = options.mechanism === 'GSSAPI' ? await loginFor(options).mechanism(host.host, host.address) : new DigestMd5Client(options);
  } catch (err) {
    throw new AuthFailedError(`SASL ${options.mechanism}: ${(err as Error).message}`, { op: 'sasl', cause: err });
  }
  let token: Buffer | undefined = client.initial();
  while (token !== undefined) {
    const t: Buffer = token;
    const reply = await conn.request(OpCode.sasl, (w) => writeGetSASLRequest(w, { token: t }), readSetSASLResponse);
    if (reply.err !== 0) throw new AuthFailedError(`SASL ${options.mechanism} refused (${reply.err})`, { op: 'sasl' });
    try {
      token = client.step(reply.body?.token ?? Buffer.alloc(0));
    } catch (err) {
      throw new AuthFailedError(`SASL ${options.mechanism} failed: ${(err as Error).message}`, { op: 'sasl', cause: err });
    }
  }
}
