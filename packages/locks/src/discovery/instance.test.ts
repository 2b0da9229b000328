import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '@zk/protocol';
import { DiscoveryError } from '../errors.js';
import { decodeInstance, encodeInstance, makeInstance } from './instance.js';
import { buildUri, parseUriSpec } from './uri-spec.js';

// Written by Curator 5.4's JsonInstanceSerializer (default, compatible mode) for
// ServiceInstance.<Map>builder().name("svc").id("id1").address("10.0.0.1").port(8080).sslPort(8443)
//   .payload({k: "v", n: 1}).uriSpec(new UriSpec("{scheme}://foo.com:{port}/x")), and with mode false.
const JAVA =
  '{"name":"svc","id":"id1","address":"10.0.0.1","port":8080,"sslPort":8443,"payload":{"@class":"java.util.LinkedHashMap","k":"v","n":1},"registrationTimeUTC":1795682941185,"serviceType":"DYNAMIC","uriSpec":{"parts":[{"value":"scheme","variable":true},{"value":"://foo.com:","variable":false},{"value":"port","variable":true},{"value":"/x","variable":false}]}}';
const JAVA_FULL = `${JAVA.slice(0, -1)},"enabled":true}`;
// Java payloads of other types: a List, a Long, an int, a String (Ser2 in the interop notes).
const JAVA_LIST = '{"name":"s","id":"i","address":"a","port":null,"sslPort":null,"payload":["java.util.ArrayList",[1,2]],"registrationTimeUTC":5,"serviceType":"DYNAMIC","uriSpec":null}';

const input = { name: 'svc', id: 'id1', address: '10.0.0.1', port: 8080, sslPort: 8443, payload: { k: 'v', n: 1 }, registrationTimeUTC: 1795682941185, uriSpec: '{scheme}://foo.com:{port}/x' };

describe('discovery instance JSON', () => {
  it('encodes byte for byte as Curator (default layout and with enabled)', () => {
    expect(encodeInstance(makeInstance(input)).toString()).toBe(JAVA);
    expect(encodeInstance(makeInstance(input), true).toString()).toBe(JAVA_FULL);
  });

  it('decodes what Java writes and encodes it back to the same bytes', () => {
    for (const json of [JAVA, JAVA_LIST]) {
      const instance = decodeInstance(Buffer.from(json), '/p');
      expect(encodeInstance(instance).toString()).toBe(json);
    }
    const i = decodeInstance(Buffer.from(JAVA_FULL), '/p');
    expect(i).toMatchObject({ name: 'svc', id: 'id1', port: 8080, sslPort: 8443, payload: { k: 'v', n: 1 }, payloadClass: 'java.util.LinkedHashMap', enabled: true, serviceType: 'DYNAMIC' });
    expect(decodeInstance(Buffer.from(JAVA_LIST), '/p')).toMatchObject({ payload: [1, 2], payloadClass: 'java.util.ArrayList' });
    expect(decodeInstance(Buffer.from('{"name":"a","id":"b","enabled":false}'), '/p')).toMatchObject({ enabled: false, address: null, port: null, registrationTimeUTC: 0, serviceType: 'DYNAMIC' });
  });

  it('refuses data that is not an instance with DiscoveryError not-an-instance', () => {
    for (const bad of ['nope', '[1]', '{"name":1}', '{"port":"x"}', '{"serviceType":"BOGUS"}', '{"payload":[1,2]}', '{"uriSpec":{"parts":[{"value":1}]}}', '{"enabled":"yes"}']) {
      const err = (() => {
        try {
          decodeInstance(Buffer.from(bad), '/s/a/b');
        } catch (e) {
          return e;
        }
      })();
      expect(err, bad).toBeInstanceOf(DiscoveryError);
      expect((err as DiscoveryError).kind).toBe('not-an-instance');
      expect((err as DiscoveryError).path).toBe('/s/a/b');
    }
  });

  it('refuses bad input with InvalidArgumentError', () => {
    const bad: unknown[] = [
      { name: '' },
      { name: 'a/b' },
      { name: '..' },
      { name: 'a\u0000' },
      { name: 'a', id: 'x/y' },
      { name: 'a', port: 70000 },
      { name: 'a', port: 1.5 },
      { name: 'a', sslPort: -1 },
      { name: 'a', serviceType: 'dynamic' },
      { name: 'a', payload: { '@class': 'x' } },
      { name: 'a', payload: { f: () => 1 } },
      { name: 'a', payload: { n: Number.NaN } },
      { name: 'a', payload: 1n },
      { name: 'a', payload: 'x', payloadClass: 'java.lang.String' },
      { name: 'a', payload: {}, payloadClass: 'not a class' },
      { name: 'a', uriSpec: '{a{b}}' },
      { name: 'a', uriSpec: 'x}' },
      { name: 'a', uriSpec: '{open' },
      null,
    ];
    for (const [i, b] of bad.entries()) expect(() => makeInstance(b as never), `case ${i}`).toThrow(InvalidArgumentError);
  });

  it('payloads take Jackson type information: objects @class first, arrays wrapped, scalars bare', () => {
    const enc = (payload: unknown, payloadClass?: string) => JSON.parse(encodeInstance(makeInstance({ name: 'a', id: 'b', payload: payload as never, ...(payloadClass ? { payloadClass } : {}) })).toString()).payload as unknown;
    expect(enc({ a: 1 }, 'com.example.Pojo')).toEqual({ '@class': 'com.example.Pojo', a: 1 });
    expect(Object.keys(enc({ z: 1, a: 2 }) as object)).toEqual(['@class', 'z', 'a']);
    expect(enc([1, 'x'])).toEqual(['java.util.ArrayList', [1, 'x']]);
    expect(enc('s')).toBe('s');
    expect(enc(2.5)).toBe(2.5);
    expect(enc(null)).toBe(null);
  });

  it('UriSpec parses and builds as Curator', () => {
    const spec = parseUriSpec('{scheme}://{address}:{ port }/[x]{[}y{]}');
    expect(spec.parts).toEqual([
      { value: 'scheme', variable: true },
      { value: '://', variable: false },
      { value: 'address', variable: true },
      { value: ':', variable: false },
      { value: 'port', variable: true },
      { value: '/[x]', variable: false },
      { value: '[', variable: true },
      { value: 'y', variable: false },
      { value: ']', variable: true },
    ]);
    const i = makeInstance({ name: 'a', id: 'b', address: 'h', port: 80 });
    expect(buildUri(spec, i)).toBe('http://h:80/[x]{y}');
    expect(buildUri(spec, { ...i, sslPort: 443 }, { port: 8443 })).toBe('https://h:8443/[x]{y}');
    expect(buildUri(parseUriSpec('{unknown}/x'))).toBe('/x');
  });
});
