import { describe, expect, it } from 'vitest';
import { DigestMd5Client, parseDirectives, SaslError } from './sasl.js';

// The worked example of RFC 2831 section 4 (IMAP), with its published response and rspauth.
const rfc = {
  challenge: 'realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8',
  cnonce: 'OA6MHXh6VqTrRk',
  response: 'd388dad90d4bbd760a152321f2143af7',
  rspauth: 'ea40f60335c427b5527b84dbabcdfffd',
};

describe('sasl - DIGEST-MD5', () => {
  it('computes the RFC 2831 example response and accepts its rspauth', () => {
    const client = new DigestMd5Client({ mechanism: 'DIGEST-MD5', username: 'chris', password: 'secret', protocol: 'imap', serverName: 'elwood.innosoft.com' }, rfc.cnonce);
    expect(client.initial().length).toBe(0);
    const answer = parseDirectives(client.step(Buffer.from(rfc.challenge))!.toString());
    expect(answer.get('response')).toBe(rfc.response);
    expect(answer.get('digest-uri')).toBe('imap/elwood.innosoft.com');
    expect(answer.get('nc')).toBe('00000001');
    expect(answer.get('qop')).toBe('auth');
    expect(client.complete).toBe(false);
    expect(client.step(Buffer.from(`rspauth=${rfc.rspauth}`))).toBeUndefined();
    expect(client.complete).toBe(true);
  });

  it('refuses a wrong server proof', () => {
    const client = new DigestMd5Client({ mechanism: 'DIGEST-MD5', username: 'chris', password: 'secret' }, rfc.cnonce);
    client.step(Buffer.from(rfc.challenge));
    expect(() => client.step(Buffer.from('rspauth=00000000000000000000000000000000'))).toThrow(SaslError);
  });

  it('refuses a challenge without nonce or without qop=auth', () => {
    expect(() => new DigestMd5Client({ mechanism: 'DIGEST-MD5', username: 'a', password: 'b' }).step(Buffer.from('realm="x"'))).toThrow(/nonce/);
    expect(() => new DigestMd5Client({ mechanism: 'DIGEST-MD5', username: 'a', password: 'b' }).step(Buffer.from('nonce="n",qop="auth-conf"'))).toThrow(/qop/);
  });

  it('parses quoted, escaped and bare directives', () => {
    const d = parseDirectives('a="x, y",b=plain, c="q\\"uote"');
    expect([...d]).toEqual([
      ['a', 'x, y'],
      ['b', 'plain'],
      ['c', 'q"uote'],
    ]);
  });
});
