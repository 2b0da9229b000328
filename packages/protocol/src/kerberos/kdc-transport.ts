/**
 * Sending one message to a realm's KDCs and reading the answer (RFC 4120 §7.2): over TCP with a
 * 4-byte big-endian length prefix, or one UDP datagram. `auto` tries UDP for a small request
 * (MIT's udp_preference_limit, 1465 bytes) and TCP for a large one, falls back to the other
 * transport on failure and to TCP on KRB_ERR_RESPONSE_TOO_BIG, then moves to the next KDC. The
 * only file of kerberos/ that opens sockets.
 */
import { createSocket } from 'node:dgram';
import { connect, isIPv6 } from 'node:net';
import { KdcUnreachableError } from './errors.js';

/** One KDC address. */
export interface KdcAddress {
  readonly host: string;
  readonly port: number;
}

export interface KdcSendOptions {
  /** `auto` (default): UDP below `udpPreferenceLimit` bytes, else TCP, each falling back to the other. */
  readonly transport?: 'tcp' | 'udp' | 'auto';
  /** Per attempt, ms (default 3000, as MIT's first UDP timeout grows to). */
  readonly timeout?: number;
  readonly udpPreferenceLimit?: number;
  readonly signal?: AbortSignal | undefined;
}

/** The most a KDC reply may be (a reply over it is not read: RFC 4120 sets no limit, tickets with PACs stay well below). */
const MAX_REPLY = 1 << 20;
/** KRB-ERROR's identifier octet ([APPLICATION 30], constructed) and error-code 52's bytes `a6 03 02 01 34`. */
const TOO_BIG = Buffer.from([0xa6, 0x03, 0x02, 0x01, 52]);

function isResponseTooBig(reply: Buffer): boolean {
  return reply[0] === 0x7e && reply.includes(TOO_BIG);
}

/** Sends `message` to each KDC in turn until one answers; throws KdcUnreachableError naming every attempt. */
export async function sendToKdc(kdcs: readonly KdcAddress[], message: Buffer, options: KdcSendOptions = {}): Promise<Buffer> {
  const mode = options.transport ?? 'auto';
  const timeout = options.timeout ?? 3000;
  const order: Array<'tcp' | 'udp'> = mode === 'tcp' ? ['tcp'] : mode === 'udp' ? ['udp'] : message.length <= (options.udpPreferenceLimit ?? 1465) ? ['udp', 'tcp'] : ['tcp', 'udp'];
  const failures: string[] = [];
  for (const kdc of kdcs) {
    for (const via of order) {
      options.signal?.throwIfAborted();
      try {
        const reply = via === 'tcp' ? await tcpExchange(kdc, message, timeout, options.signal) : await udpExchange(kdc, message, timeout, options.signal);
        if (via === 'udp' && isResponseTooBig(reply) && mode !== 'udp') {
          failures.push(`${kdc.host}:${kdc.port}/udp: response too big`);
          return await tcpExchange(kdc, message, timeout, options.signal);
        }
        return reply;
      } catch (err) {
        if (options.signal?.aborted) throw err;
        failures.push(`${kdc.host}:${kdc.port}/${via}: ${(err as Error).message}`);
      }
    }
  }
  const tried = failures.length > 0 ? failures.join('; ') : 'no KDC configured';
  throw new KdcUnreachableError(`no KDC answered (${tried}): check the realm's kdc entries in krb5.conf (or the kdc option), that the KDC runs, and that port 88 (TCP and UDP) is reachable`);
}

type Finish = (err: Error | undefined, reply?: Buffer) => void;

/**
 * One exchange's ending, whichever comes first: a reply or an error given to `finish`, the
 * timeout, or `signal`'s abort. It settles once, and `close` runs then.
 */
function settled(timeout: number, signal: AbortSignal | undefined, close: () => void, start: (finish: Finish) => void): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let done = false;
    const finish: Finish = (err, reply) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      close();
      if (err) reject(err);
      else resolve(reply as Buffer);
    };
    const onAbort = () => finish(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    const timer = setTimeout(() => finish(new Error(`no answer within ${timeout} ms`)), timeout);
    signal?.addEventListener('abort', onAbort, { once: true });
    start(finish);
  });
}

function tcpExchange(kdc: KdcAddress, message: Buffer, timeout: number, signal: AbortSignal | undefined): Promise<Buffer> {
  const socket = connect({ host: kdc.host, port: kdc.port });
  return settled(timeout, signal, () => socket.destroy(), (finish) => {
    let received = Buffer.alloc(0);
    socket.once('error', (err) => finish(err));
    socket.once('connect', () => {
      const prefix = Buffer.alloc(4);
      prefix.writeUInt32BE(message.length, 0);
      socket.write(Buffer.concat([prefix, message]));
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length < 4) return;
      const length = received.readUInt32BE(0);
      // The high bit is reserved for an extension (RFC 4120 §7.2.2) no KDC uses: refuse it.
      if (length > MAX_REPLY) return finish(new Error(`reply length ${length} is over the ${MAX_REPLY}-byte limit`));
      if (received.length >= 4 + length) finish(undefined, received.subarray(4, 4 + length));
    });
    socket.once('end', () => finish(new Error('connection closed before a whole reply')));
  });
}

function udpExchange(kdc: KdcAddress, message: Buffer, timeout: number, signal: AbortSignal | undefined): Promise<Buffer> {
  const socket = createSocket(isIPv6(kdc.host) ? 'udp6' : 'udp4');
  return settled(timeout, signal, () => socket.close(), (finish) => {
    socket.once('error', (err) => finish(err));
    socket.once('message', (reply) => finish(undefined, reply));
    // connect() first so an ICMP port-unreachable surfaces as an error instead of a timeout.
    socket.connect(kdc.port, kdc.host, () => socket.send(message));
  });
}
