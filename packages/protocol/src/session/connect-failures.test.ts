import { describe, expect, it } from 'vitest';
import { ConnectionLossError, DecodeError } from '../errors.js';
import { ConnectFailures } from './connect-failures.js';

const hosts = [
  { host: 'a', port: 1 },
  { host: 'b', port: 2 },
];

describe('connect failures - the error of a failed initial connect', () => {
  it('connect failures - identical errors are kept once, with the number of attempts', () => {
    const f = new ConnectFailures(hosts.slice(0, 1));
    const refused = Array.from({ length: 18 }, () => new ConnectionLossError('connect ECONNREFUSED a:1'));
    f.add(refused);
    const err = f.error();
    expect(err).toBeInstanceOf(ConnectionLossError);
    expect(err.message).toBe(`could not connect to a:1 (18 attempts): connect ECONNREFUSED a:1. Nothing accepted the connection: is ZooKeeper running at a:1?`);
    expect(err.op).toBe('connect');
    expect((err.cause as AggregateError).errors).toEqual([refused[0]]);
    expect((err.cause as AggregateError).message).toBe('18 attempts failed with 1 distinct error');
  });

  it('connect failures - durations do not make messages distinct; counts show when there are several', () => {
    const f = new ConnectFailures(hosts);
    f.add([new Error('handshake with a:1 failed: no handshake reply within 9873 ms'), new Error('connect ECONNREFUSED b:2')]);
    f.add([new Error('handshake with a:1 failed: no handshake reply within 10000 ms')]);
    expect(f.attempts).toBe(3);
    expect(f.error().message).toBe(
      `could not connect to a:1, b:2 (3 attempts): handshake with a:1 failed: no handshake reply within 9873 ms (x2); connect ECONNREFUSED b:2. Nothing accepted the connection: is ZooKeeper running at a:1, b:2? A server accepted the connection but never answered the ZooKeeper handshake: is that a ZooKeeper client port (clientPort or secureClientPort, not a quorum, election or admin port), and plain or TLS as the server expects?`,
    );
  });

  it('connect failures - at most 3 distinct errors quoted and 10 kept, the rest counted', () => {
    const f = new ConnectFailures(hosts);
    f.add(Array.from({ length: 15 }, (_, i) => new Error(`failure ${String.fromCharCode(97 + i)}`)));
    f.add([new Error('failure a')]);
    const err = f.error();
    expect(err.message).toBe('could not connect to a:1, b:2 (16 attempts): failure a (x2); failure b; failure c; and 12 other failed attempts');
    expect((err.cause as AggregateError).errors).toHaveLength(10);
    expect((err.cause as AggregateError).message).toBe('16 attempts failed with more than 10 distinct errors');
  });

  it('connect failures - a name that does not resolve says so; an unknown failure gets no hint', () => {
    const f = new ConnectFailures(hosts.slice(0, 1));
    const dns = Object.assign(new Error('getaddrinfo ENOTFOUND a'), { code: 'ENOTFOUND' });
    f.add([new ConnectionLossError('could not resolve a:1: getaddrinfo ENOTFOUND a', { cause: dns })]);
    expect(f.error().message).toBe("could not connect to a:1 (1 attempt): could not resolve a:1: getaddrinfo ENOTFOUND a. A host name did not resolve: check its spelling and this machine's DNS.");
    const g = new ConnectFailures(hosts.slice(0, 1));
    g.add([new Error('something else')]);
    expect(g.error().message).toBe('could not connect to a:1 (1 attempt): something else');
  });

  it('connect failures - no attempt at all still gives a clear error', () => {
    expect(new ConnectFailures(hosts).error().message).toBe('could not connect to a:1, b:2 (0 attempts): no attempt was made');
  });

  it('connect failures - definitive only when every host failed for good at its latest attempt', () => {
    const notFound = (name: string) => new ConnectionLossError(`could not resolve ${name}`, { cause: Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' }) });
    const http = new ConnectionLossError('handshake with b:2 failed: not a ZooKeeper server (it answered like HTTP: "HTTP/1.1 400")', { cause: new DecodeError('not a ZooKeeper server (it answered like HTTP: "HTTP/1.1 400")') });
    const refused = new ConnectionLossError('connect ECONNREFUSED b:2');
    const [a, b] = hosts as [(typeof hosts)[0], (typeof hosts)[0]];
    const f = new ConnectFailures(hosts);
    f.add([notFound('a')], a);
    expect(f.definitive()).toBe(false); // b not tried yet
    f.add([refused], b);
    expect(f.definitive()).toBe(false); // b only refused: it may be starting
    f.add([http], b);
    expect(f.definitive()).toBe(true);
    expect(f.error().isRetryable).toBe(false);
    expect(f.error().message).toMatch(/ Not retried: every host failed in a way that trying again cannot change\.$/);
    // The list the session dials now decides (a re-asked SRV record may add a host); never an empty one.
    expect(f.definitive([a, b, { host: 'c', port: 3 }])).toBe(false);
    expect(f.error([a, b, { host: 'c', port: 3 }]).isRetryable).toBe(true);
    expect(f.definitive([])).toBe(false);
    // A host's latest attempt counts: refused again, no longer definitive.
    f.add([refused], b);
    expect(f.definitive()).toBe(false);
    expect(f.error().isRetryable).toBe(true);
  });
});
