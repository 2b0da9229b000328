/**
 * Recognising a port that another service answers. A ZooKeeper reply starts with a 4-byte
 * frame length, and a handshake reply is a few dozen bytes, so its first byte is 0. Text
 * protocols and TLS records start with bytes that, read as a length, give hundreds of megabytes:
 * without this check the client would report "packet of 1213486160 bytes exceeds the limit"
 * for an HTTP server.
 */

/** How the handshake's error for such a port begins: `not a ZooKeeper server (it answered like HTTP: ...)`. */
export const NOT_ZOOKEEPER = 'not a ZooKeeper server';

/** Most characters of a foreign reply's first line quoted in the error. */
const QUOTE_MAX = 60;

/**
 * What the first bytes of a handshake reply say about the service that sent them, as the end
 * of "not a ZooKeeper server (...)": `it answered like HTTP: "HTTP/1.1 400 Bad Request"`, or
 * undefined when they may be ZooKeeper's (or are too few to tell).
 *
 * Recognised: `HTTP`, `SSH-` (SSH servers send their banner first, RFC 4253 §4.2), a TLS record
 * header (content type 0x15 alert or 0x16 handshake, then version 0x03 0x00-0x04, RFC 8446
 * §5.1), and any other 4 printable ASCII bytes (SMTP, Redis, FTP, ... banners).
 */
export function foreignProtocol(bytes: Buffer): string | undefined {
  if (bytes.length >= 3 && (bytes[0] === 0x15 || bytes[0] === 0x16) && bytes[1] === 0x03 && (bytes[2] as number) <= 0x04) return 'it answered like TLS';
  if (bytes.length < 4) return undefined;
  const head = bytes.toString('latin1', 0, 4);
  if (head === 'HTTP') return `it answered like HTTP: ${firstLine(bytes)}`;
  if (head === 'SSH-') return `it answered like SSH: ${firstLine(bytes)}`;
  for (let i = 0; i < 4; i++) {
    const c = bytes[i] as number;
    if (c < 0x20 || c > 0x7e) return undefined;
  }
  return `it answered with text: ${firstLine(bytes)}`;
}

/** The first line, quoted, shortened, with anything unprintable as '?'. */
function firstLine(bytes: Buffer): string {
  const text = bytes.toString('latin1', 0, Math.min(bytes.length, 4 * QUOTE_MAX)).split(/\r?\n|\r/, 1)[0] ?? '';
  const clean = text.replace(/[^\x20-\x7e]/g, '?');
  return JSON.stringify(clean.length > QUOTE_MAX ? `${clean.slice(0, QUOTE_MAX)}...` : clean);
}
