import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { ChannelName } from '../diagnostics.js';
import { Credential } from './credential.js';
import { flagBits } from './der.js';
import { PreauthFailedError } from './errors.js';
import { TicketFlag } from './kdc-messages.js';
import { EncryptionKey } from './keys.js';
import type { TicketInfo } from './messages.js';
import { parsePrincipal, tgsPrincipal } from './principal.js';
import { traceStep, type KerberosMessage } from './trace.js';

const KEY = Buffer.from('5ec12e7-5e55104-key-material-32b', 'latin1');
const TICKET = Buffer.from('opaque-ticket-bytes-never-printed', 'latin1');
const carol = parsePrincipal('carol@ZK.TEST');
const tgt = new Credential(carol, tgsPrincipal('ZK.TEST'), { raw: TICKET, realm: 'ZK.TEST', sname: tgsPrincipal('ZK.TEST'), encPart: { etype: 18, kvno: 1, cipher: TICKET } } as TicketInfo, new EncryptionKey(18, KEY), {
  authtime: new Date('2026-01-01T12:00:00Z'),
  starttime: undefined,
  endtime: new Date('2026-01-01T22:00:00Z'),
  renewTill: new Date('2026-01-08T12:00:00Z'),
}, flagBits(TicketFlag.renewable));

const seen: KerberosMessage[] = [];
const listener = (m: unknown) => seen.push(m as KerberosMessage);

afterEach(() => {
  unsubscribe(ChannelName.kerberos, listener);
  seen.length = 0;
});

describe('kerberos/trace - the zk:kerberos channel', () => {
  it('publishes each step as it settles, ok with its times and enctype, or the typed error’s name and message; never a key or a ticket', async () => {
    subscribe(ChannelName.kerberos, listener);
    await expect(traceStep('renew', carol, tgt.server, async () => tgt)).resolves.toBe(tgt);
    const refused = new PreauthFailedError('pre-authentication failed for carol@ZK.TEST: wrong password, or a keytab whose keys (kvno) are not the principal’s current ones');
    await expect(traceStep('as', carol, tgt.server, () => Promise.reject(refused))).rejects.toBe(refused);
    expect(seen).toEqual([
      { step: 'renew', client: 'carol@ZK.TEST', server: 'krbtgt/ZK.TEST@ZK.TEST', ok: true, durationMs: expect.any(Number), endtime: tgt.times.endtime, renewTill: tgt.times.renewTill, enctype: 18 },
      { step: 'as', client: 'carol@ZK.TEST', server: 'krbtgt/ZK.TEST@ZK.TEST', ok: false, durationMs: expect.any(Number), error: `PreauthFailedError: ${refused.message}` },
    ]);
    const text = `${JSON.stringify(seen)} ${inspect(seen, { depth: 9, showHidden: true })}`;
    for (const secret of [KEY.toString('latin1'), KEY.toString('hex'), KEY.toString('base64'), TICKET.toString('latin1'), TICKET.toString('hex')]) expect(text).not.toContain(secret);
  });

  it('with no one listening the step runs and settles, and nothing is published', async () => {
    await expect(traceStep('tgs', carol, parsePrincipal('zookeeper/localhost@ZK.TEST'), async () => tgt)).resolves.toBe(tgt);
    expect(seen).toEqual([]);
  });
});
