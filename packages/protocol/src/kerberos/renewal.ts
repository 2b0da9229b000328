/**
 * When a TGT is got again, and what a client with only a kinit ccache (no keytab, no password)
 * can do about one that ends: renew it at the KDC while its renew-till allows (RFC 4120 §3.3.3,
 * what `kinit -R` does), or use it to its end and then fail with the error that says to run
 * kinit again. Pure: the login (gssapi-login.ts) does the exchanges and keeps the timer.
 */
import type { Credential } from './credential.js';
import { TicketExpiredError } from './errors.js';
import { TicketFlag } from './kdc-messages.js';
import { flagBits } from './der.js';
import { principalText } from './principal.js';

/**
 * A TGT is got again (or renewed) once 80% of its lifetime has passed: the Java client's Login
 * thread uses the same window (TICKET_RENEW_WINDOW 0.80), which leaves a ticket of hours hours
 * of slack and one of seconds (the tests' 8 s) still a second or two.
 */
export const REFRESH_WINDOW = 0.8;

const RENEWABLE = flagBits(TicketFlag.renewable);

/** The time (ms since the epoch) at which `tgt` should be replaced. */
export function refreshAt(tgt: Credential): number {
  const start = (tgt.times.starttime ?? tgt.times.authtime).getTime();
  const end = tgt.times.endtime.getTime();
  return start + REFRESH_WINDOW * Math.max(0, end - start);
}

/**
 * Whether the KDC would renew `tgt` at `now` into a ticket that ends later: the renewable flag,
 * the ticket not yet ended (MIT refuses to renew an ended ticket: "TGT EXPIRED"), and a renew-till
 * beyond its end (a ticket renewed up to its renew-till cannot be extended).
 */
export function canRenew(tgt: Credential, now: number): boolean {
  const renewTill = tgt.times.renewTill?.getTime();
  const end = tgt.times.endtime.getTime();
  return (tgt.flags & RENEWABLE) !== 0 && renewTill !== undefined && renewTill > end && end > now;
}

/** What to do with a ccache-only client's TGT at `now`. */
export type CcachePlan = 'use' | 'renew' | 'use-to-end' | 'expired';

/**
 * `use` before the refresh time; after it `renew` when the KDC can, else `use-to-end` while it
 * lasts; `expired` once it has ended and cannot be renewed.
 */
export function ccachePlan(tgt: Credential, now: number): CcachePlan {
  if (now < refreshAt(tgt) && tgt.times.endtime.getTime() > now) return 'use';
  if (canRenew(tgt, now)) return 'renew';
  return tgt.times.endtime.getTime() > now ? 'use-to-end' : 'expired';
}

/** The error for a ccache TGT that has ended with no means to renew it, saying why and what to do. */
export function expiredTicketError(tgt: Credential, now: number): TicketExpiredError {
  const who = principalText(tgt.client);
  const renewTill = tgt.times.renewTill;
  const why =
    (tgt.flags & RENEWABLE) === 0 || renewTill === undefined
      ? 'it is not renewable'
      : renewTill.getTime() <= now || renewTill.getTime() <= tgt.times.endtime.getTime()
        ? `its renewable life ended at ${renewTill.toISOString()}`
        : 'it was not renewed before it ended';
  return new TicketExpiredError(
    `the TGT of ${who} from the credential cache expired at ${tgt.times.endtime.toISOString()} and ${why}, and there is no keytab or password to get another: run kinit again (kinit -r <life> for a renewable ticket), or give a keytab`,
  );
}
