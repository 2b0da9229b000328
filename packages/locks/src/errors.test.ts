import { describe, expect, it, vi } from 'vitest';
import { LeaseEndedError, LeaseLostError, LeaseReleasedError, LeaseRevokedError, LockError, LockTimeoutError, NotHeldError } from './errors.js';

type Errors = typeof import('./errors.js');

/** A second module instance of errors.ts, as a second installed copy of @zk/locks has. */
async function secondCopy(): Promise<Errors> {
  vi.resetModules();
  return (await import('./errors.js')) as Errors;
}

describe('lock errors - instanceof across copies of the package', () => {
  it('an error of the other copy is an instance of the same class of this copy and of LockError, and of no other', async () => {
    const copy = await secondCopy();
    expect(copy.LockTimeoutError).not.toBe(LockTimeoutError);
    const timeout = new copy.LockTimeoutError('/l', 500);
    expect(timeout instanceof LockTimeoutError).toBe(true);
    expect(timeout instanceof LockError).toBe(true);
    expect(timeout instanceof LeaseLostError).toBe(false);
    expect(new copy.LeaseLostError('/l', 'gone') instanceof LeaseLostError).toBe(true);
    expect(new copy.LeaseLostError('/l', 'gone') instanceof NotHeldError).toBe(false);
    expect(new LeaseLostError('/l', 'gone') instanceof copy.LeaseLostError).toBe(true);
  });

  it('an unrelated error with the same name is not recognised', () => {
    const impostor = Object.assign(new Error('lock /l is held'), { name: 'LockTimeoutError', path: '/l', timeout: 0 });
    expect(impostor instanceof LockTimeoutError).toBe(false);
    expect(impostor instanceof LockError).toBe(false);
  });

  it("a user's own subclass is matched by its prototype chain", async () => {
    class Busy extends LockTimeoutError {}
    expect(new Busy('/l', 0) instanceof Busy).toBe(true);
    expect(new Busy('/l', 0) instanceof LockTimeoutError).toBe(true);
    expect(new LockTimeoutError('/l', 0) instanceof Busy).toBe(false);
    expect(new Busy('/l', 0) instanceof (await secondCopy()).LockError).toBe(true);
  });

  it('lease end reasons: released, revoked and lost by class and by code, across copies', async () => {
    const copy = await secondCopy();
    const released = new copy.LeaseReleasedError('/l');
    const revoked = new copy.LeaseRevokedError('/l', 'node deleted');
    const lost = new copy.LeaseLostError('/l', 'session expired');
    expect([released.code, revoked.code, lost.code]).toEqual(['released', 'revoked', 'lost']);
    expect([released.name, revoked.name, lost.name]).toEqual(['LeaseReleasedError', 'LeaseRevokedError', 'LeaseLostError']);
    for (const e of [released, revoked, lost]) expect(e instanceof LeaseEndedError && e instanceof LockError).toBe(true);
    expect(released instanceof LeaseLostError).toBe(false); // an alert on losses does not fire on a release
    expect(released instanceof LeaseReleasedError).toBe(true);
    expect(revoked instanceof LeaseLostError).toBe(true); // revoked is a loss, told apart by class or code
    expect(lost instanceof LeaseRevokedError).toBe(false);
    expect(released.message).toBe('lease on /l released');
  });
});
