import { describe, expect, it, vi } from 'vitest';
import {
  ClientClosedError,
  ConnectionLossError,
  DecodeError,
  ErrorCode,
  fromCode,
  InvalidArgumentError,
  NodeExistsError,
  NoNodeError,
  PacketTooLargeError,
  SessionExpiredError,
  ZooKeeperError,
} from './errors.js';
import { TransactionError } from './client/transaction.js';

type Errors = typeof import('./errors.js');

/** A second module instance of errors.ts (and of transaction.ts), as a second installed copy has. */
async function secondCopy(): Promise<Errors & { TransactionError: typeof TransactionError }> {
  vi.resetModules();
  const errors = (await import('./errors.js')) as Errors;
  const { TransactionError } = await import('./client/transaction.js');
  return { ...errors, TransactionError };
}

describe('errors - instanceof across copies of the package', () => {
  it('the second copy is a different module instance', async () => {
    const copy = await secondCopy();
    expect(copy.NoNodeError).not.toBe(NoNodeError);
    expect(copy.ZooKeeperError).not.toBe(ZooKeeperError);
    expect(Object.getPrototypeOf(new copy.NoNodeError())).not.toBe(NoNodeError.prototype);
  });

  it("a server error of the other copy is an instance of this copy's class and of ZooKeeperError, not of another code's class", async () => {
    const copy = await secondCopy();
    const noNode = copy.fromCode(ErrorCode.NONODE, { op: 'create', path: '/a' });
    expect(noNode instanceof NoNodeError).toBe(true);
    expect(noNode instanceof ZooKeeperError).toBe(true);
    expect(noNode instanceof Error).toBe(true);
    expect(noNode instanceof NodeExistsError).toBe(false);
    expect(noNode instanceof ConnectionLossError).toBe(false);
    expect(new copy.ConnectionLossError() instanceof ConnectionLossError).toBe(true);
    expect(new copy.SessionExpiredError() instanceof SessionExpiredError).toBe(true);
    expect(new copy.ZooKeeperError(-999) instanceof ZooKeeperError).toBe(true);
    expect(new copy.ZooKeeperError(ErrorCode.NONODE) instanceof NoNodeError).toBe(false); // a class, not a code
    // and the other way round
    expect(fromCode(ErrorCode.NONODE) instanceof copy.NoNodeError).toBe(true);
    expect(fromCode(ErrorCode.NONODE) instanceof copy.NodeExistsError).toBe(false);
  });

  it('the client-side errors of the other copy are recognised, each only as itself', async () => {
    const copy = await secondCopy();
    const errors = [new copy.ClientClosedError(), new copy.InvalidArgumentError('path', 'bad'), new copy.DecodeError('short'), new copy.PacketTooLargeError(2, 1)];
    const classes = [ClientClosedError, InvalidArgumentError, DecodeError, PacketTooLargeError];
    errors.forEach((e, i) => classes.forEach((cls, j) => expect(e instanceof cls, `${e.name} instanceof ${cls.name}`).toBe(i === j)));
    expect(new copy.InvalidArgumentError('path', 'bad') instanceof TypeError).toBe(true);
    for (const e of errors) expect(e instanceof ZooKeeperError).toBe(false);
  });

  it('a TransactionError of the other copy is a TransactionError and a ZooKeeperError, not the class of its code', async () => {
    const copy = await secondCopy();
    const failed = new copy.TransactionError(ErrorCode.NONODE, 0, [{ op: 'delete', path: '/a', ok: false, error: copy.fromCode(ErrorCode.NONODE) }] as never, {});
    expect(failed instanceof TransactionError).toBe(true);
    expect(failed instanceof ZooKeeperError).toBe(true);
    expect(failed instanceof NoNodeError).toBe(false);
  });

  it('an unrelated error with the same name, code and fields is not recognised', () => {
    const impostor = Object.assign(new Error('NONODE'), { name: 'NoNodeError', code: ErrorCode.NONODE, codeName: 'NONODE', path: '/a' });
    expect(impostor instanceof NoNodeError).toBe(false);
    expect(impostor instanceof ZooKeeperError).toBe(false);
    expect(Object.assign(new Error('closed'), { name: 'ClientClosedError' }) instanceof ClientClosedError).toBe(false);
    for (const v of [undefined, null, -101, 'NoNodeError', {}]) expect(v instanceof NoNodeError).toBe(false);
  });

  it("a user's own subclass is matched by its prototype chain, and its instances are still NoNodeErrors", async () => {
    class MissingConfig extends NoNodeError {}
    const mine = new MissingConfig('no config');
    expect(mine instanceof MissingConfig).toBe(true);
    expect(mine instanceof NoNodeError).toBe(true);
    expect(mine instanceof ZooKeeperError).toBe(true);
    expect(new NoNodeError() instanceof MissingConfig).toBe(false);
    const copy = await secondCopy();
    expect(mine instanceof copy.NoNodeError).toBe(true);
    expect(new copy.NoNodeError() instanceof MissingConfig).toBe(false);
  });
});
