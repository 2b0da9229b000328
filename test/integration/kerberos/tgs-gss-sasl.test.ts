import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestTgt } from '../../../packages/protocol/src/kerberos/as-exchange.js';
import { decodeEncTicketPart } from '../../../packages/protocol/src/kerberos/ap-messages.js';
import { decrypt } from '../../../packages/protocol/src/kerberos/crypto.js';
import { passwordKeys, type Credential } from '../../../packages/protocol/src/kerberos/credential.js';
import { IntegrityError, PrincipalUnknownError } from '../../../packages/protocol/src/kerberos/errors.js';
import { GssInitiator } from '../../../packages/protocol/src/kerberos/gss-initiator.js';
import { GssFlag } from '../../../packages/protocol/src/kerberos/gss-tokens.js';
import { keysFor, readKeytab } from '../../../packages/protocol/src/kerberos/keytab.js';
import type { EncryptionKey } from '../../../packages/protocol/src/kerberos/keys.js';
import { KeyUsage } from '../../../packages/protocol/src/kerberos/messages.js';
import { parsePrincipal, principalText } from '../../../packages/protocol/src/kerberos/principal.js';
import { GssapiSaslClient } from '../../../packages/protocol/src/kerberos/sasl-gssapi.js';
import { requestServiceTicket } from '../../../packages/protocol/src/kerberos/tgs-exchange.js';
import { startKdc, type TestKdc } from '../../harness/kdc.js';
import { TestAcceptor, TestSaslServer } from './acceptor.js';

const PASSWORD = 'bob-pw';

describe('kerberos - TGS, GSS-API and SASL GSSAPI against a real MIT KDC', () => {
  let kdc: TestKdc;
  let serviceKeys: EncryptionKey[];
  let tgt: Credential;
  const kdcs = () => [{ host: kdc.host, port: kdc.port }];
  const service = () => parsePrincipal('zookeeper/localhost', kdc.realm);
  const ticket = () => requestServiceTicket({ tgt, service: service(), kdcs: kdcs() });

  beforeAll(async () => {
    kdc = await startKdc();
    kdc.addPrincipal('bob', { password: PASSWORD });
    kdc.addPrincipal('zookeeper/localhost');
    serviceKeys = keysFor(await readKeytab(kdc.keytab('zookeeper/localhost')), service());
    const client = parsePrincipal('bob', kdc.realm);
    tgt = await requestTgt({ client, keys: passwordKeys(PASSWORD, client), kdcs: kdcs() });
  });
  afterAll(async () => {
    await kdc?.stop();
  });

  it('tgs-exchange - the TGT gets a zookeeper/localhost ticket the service keytab decrypts, for the same session key', async () => {
    const st = await ticket();
    expect(principalText(st.server)).toBe('zookeeper/localhost@ZK.TEST');
    const key = serviceKeys.find((k) => k.enctype === st.ticket().encPart.etype) as EncryptionKey;
    const part = decodeEncTicketPart(decrypt(key, KeyUsage.TICKET, st.ticket().encPart.cipher));
    expect(principalText(part.client)).toBe('bob@ZK.TEST');
    expect(part.key.material().equals(st.sessionKey().material())).toBe(true);
  });

  it('tgs-exchange - an unknown service is PrincipalUnknownError naming it', async () => {
    const err = await requestServiceTicket({ tgt, service: parsePrincipal('zookeeper/nohost', kdc.realm), kdcs: kdcs() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PrincipalUnknownError);
    expect((err as Error).message).toContain('zookeeper/nohost@ZK.TEST');
  });

  it('gss - AP-REQ with mutual authentication: the acceptor reads the ticket, the AP-REP checks, wrap/unwrap both ways', async () => {
    const initiator = new GssInitiator(await ticket());
    const acceptor = new TestAcceptor(serviceKeys);
    initiator.acceptReply(acceptor.accept(initiator.initialToken()));
    expect(initiator.established).toBe(true);
    expect(principalText(acceptor.client as never)).toBe('bob@ZK.TEST');
    expect(acceptor.flags & GssFlag.mutual).toBe(GssFlag.mutual);
    for (const conf of [true, false]) {
      expect(acceptor.unwrap(initiator.wrap(Buffer.from(`to server ${conf}`), conf))).toEqual({ message: Buffer.from(`to server ${conf}`), confidential: conf });
      expect(initiator.unwrap(acceptor.wrap(Buffer.from(`to client ${conf}`), conf))).toEqual({ message: Buffer.from(`to client ${conf}`), confidential: conf });
    }
    // A replayed token is refused.
    const token = acceptor.wrap(Buffer.from('once'), true);
    initiator.unwrap(token);
    expect(() => initiator.unwrap(token)).toThrow(IntegrityError);
    expect(inspect(initiator)).toMatch(/GssInitiator\(bob@ZK.TEST → zookeeper\/localhost@ZK.TEST, established, keys \[redacted\]\)/);
  });

  it('gss - an AP-REP not under the session key fails mutual authentication', async () => {
    const initiator = new GssInitiator(await ticket());
    const acceptor = new TestAcceptor(serviceKeys, { wrongApRepKey: true });
    expect(() => initiator.acceptReply(acceptor.accept(initiator.initialToken()))).toThrow(/mutual authentication failed/);
  });

  it('sasl-gssapi - the RFC 4752 exchange completes with "no security layer" and the authorization id', async () => {
    const client = new GssapiSaslClient(new GssInitiator(await ticket()), { authzid: 'bob' });
    const server = new TestSaslServer(new TestAcceptor(serviceKeys));
    let token: Buffer | undefined = client.initial();
    let rounds = 0;
    while (token !== undefined) {
      token = client.step(server.evaluate(token));
      rounds++;
    }
    expect(rounds).toBe(3);
    expect(client.complete).toBe(true);
    expect(server.complete).toBe(true);
    expect(server.authorizationId).toBe('bob');
  });
});
