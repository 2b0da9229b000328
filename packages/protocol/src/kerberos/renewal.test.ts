import { describe, expect, it } from 'vitest';
import { Credential } from './credential.js';
import { flagBits } from './der.js';
import { TicketExpiredError } from './errors.js';
import { TicketFlag } from './kdc-messages.js';
import { EncryptionKey } from './keys.js';
import type { TicketInfo } from './messages.js';
import { parsePrincipal, tgsPrincipal } from './principal.js';
import { canRenew, ccachePlan, expiredTicketError, refreshAt } from './renewal.js';

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const s = 1000;

/** A TGT from T0 for `life` seconds, renewable until `renewFor` seconds after T0 (none: not renewable). */
function tgt(life: number, renewFor?: number, flags = renewFor === undefined ? 0 : flagBits(TicketFlag.renewable)): Credential {
  const ticket = { raw: Buffer.alloc(0), realm: 'ZK.TEST', sname: tgsPrincipal('ZK.TEST'), encPart: { etype: 18, kvno: undefined, cipher: Buffer.alloc(0) } } as TicketInfo;
  return new Credential(parsePrincipal('carol@ZK.TEST'), tgsPrincipal('ZK.TEST'), ticket, new EncryptionKey(18, Buffer.alloc(32)), {
    authtime: new Date(T0),
    starttime: new Date(T0),
    endtime: new Date(T0 + life * s),
    renewTill: renewFor === undefined ? undefined : new Date(T0 + renewFor * s),
  }, flags);
}

describe('kerberos/renewal - when a TGT is got again, and what a ccache-only client does', () => {
  it('refreshAt is 80% of the lifetime (the Java Login thread’s window)', () => {
    expect(refreshAt(tgt(10)) - T0).toBe(8 * s);
    expect(refreshAt(tgt(36_000)) - T0).toBe(28_800 * s);
  });

  it('renewable: the flag, a renew-till past the end, and the ticket not yet ended', () => {
    expect(canRenew(tgt(10, 60), T0 + 9 * s)).toBe(true);
    expect(canRenew(tgt(10), T0 + 9 * s)).toBe(false); // not renewable
    expect(canRenew(tgt(10, 60, 0), T0 + 9 * s)).toBe(false); // renew-till without the flag
    expect(canRenew(tgt(10, 10), T0 + 9 * s)).toBe(false); // renewed up to its renew-till already
    expect(canRenew(tgt(10, 60), T0 + 10 * s)).toBe(false); // ended: the KDC refuses ("TGT EXPIRED")
  });

  it('the plan: use before 80%, then renew while the KDC can, else use to the end, then expired', () => {
    const renewable = tgt(10, 60);
    expect(ccachePlan(renewable, T0 + 7.9 * s)).toBe('use');
    expect(ccachePlan(renewable, T0 + 8 * s)).toBe('renew');
    expect(ccachePlan(renewable, T0 + 9.9 * s)).toBe('renew');
    expect(ccachePlan(renewable, T0 + 10 * s)).toBe('expired');
    const plain = tgt(10);
    expect(ccachePlan(plain, T0 + 7 * s)).toBe('use');
    expect(ccachePlan(plain, T0 + 9 * s)).toBe('use-to-end');
    expect(ccachePlan(plain, T0 + 11 * s)).toBe('expired');
  });

  it('the expired error says why (not renewable, renewable life over, not renewed in time) and to run kinit again', () => {
    const notRenewable = expiredTicketError(tgt(10), T0 + 11 * s);
    expect(notRenewable).toBeInstanceOf(TicketExpiredError);
    expect(notRenewable.message).toBe(
      'the TGT of carol@ZK.TEST from the credential cache expired at 2026-01-01T12:00:10.000Z and it is not renewable, and there is no keytab or password to get another: run kinit again (kinit -r <life> for a renewable ticket), or give a keytab',
    );
    expect(expiredTicketError(tgt(10, 10), T0 + 11 * s).message).toContain('its renewable life ended at 2026-01-01T12:00:10.000Z');
    expect(expiredTicketError(tgt(10, 60), T0 + 11 * s).message).toContain('it was not renewed before it ended');
  });
});
