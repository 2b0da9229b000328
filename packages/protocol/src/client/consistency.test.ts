import { describe, expect, it } from 'vitest';
import { OpCode } from '../constants.js';
import { InvalidArgumentError } from '../errors.js';
import { StaleServerError } from '../errors/read-errors.js';
import { ReadFence } from '../session/read-fence.js';
import { causalTokenOf, parseCausalToken, readPlan, sendPlanned } from './consistency.js';

describe('consistency - causal tokens', () => {
  it('a zxid round-trips through its token, a string of fixed width', () => {
    for (const z of [0n, 1n, 0x1_0000_002an, (1n << 64n) - 1n]) {
      const t = causalTokenOf(z);
      expect(t).toMatch(/^zxid:[0-9a-f]{16}$/);
      expect(parseCausalToken(t)).toBe(z);
    }
  });

  it('anything else is refused with InvalidArgumentError naming the argument', () => {
    for (const bad of ['', 'zxid:12', 'zxid:0000000000000000a', 'ZXID:0000000000000001', '0x1', 1, 1n, null, undefined]) {
      expect(() => parseCausalToken(bad), String(bad)).toThrow(InvalidArgumentError);
    }
    expect(() => parseCausalToken('x', 'after')).toThrow(/^after: /);
    expect(() => causalTokenOf(-1n)).toThrow(InvalidArgumentError);
    expect(() => causalTokenOf(1n << 64n)).toThrow(InvalidArgumentError);
  });
});

describe('consistency - read plans', () => {
  const token = causalTokenOf(100n);
  it('only reads are planned; a plain read with no token needs nothing', () => {
    expect(readPlan(OpCode.setData, { consistency: 'linearizable' }, 'plain', 0n)).toBeUndefined();
    expect(readPlan(OpCode.getData, {}, 'plain', 0n)).toBeUndefined();
    expect(readPlan(OpCode.getData, { consistency: 'plain' }, 'linearizable', 0n)).toBeUndefined();
  });

  it('linearizable: a write fence; sync: a sync fence; the client default applies when the read names none', () => {
    for (const op of [OpCode.getData, OpCode.getChildren, OpCode.getChildren2, OpCode.exists, OpCode.multiRead]) {
      expect(readPlan(op, { consistency: 'linearizable' }, 'plain', 0n)).toEqual({ fence: 'write', after: undefined });
    }
    expect(readPlan(OpCode.getData, { consistency: 'sync' }, 'plain', 0n)).toEqual({ fence: 'sync', after: undefined });
    expect(readPlan(OpCode.getData, {}, 'linearizable', 0n)).toEqual({ fence: 'write', after: undefined });
  });

  it('a token newer than what the session saw: a sync first; one it saw: no fence, the reply checked', () => {
    expect(readPlan(OpCode.getData, { after: token }, 'plain', 99n)).toEqual({ fence: 'sync', after: 100n });
    expect(readPlan(OpCode.getData, { after: token }, 'plain', 100n)).toEqual({ fence: undefined, after: 100n });
    expect(readPlan(OpCode.getData, { after: token, consistency: 'linearizable' }, 'plain', 0n)).toEqual({ fence: 'write', after: 100n });
  });

  it('bad input is refused before anything is sent', () => {
    expect(() => readPlan(OpCode.getData, { consistency: 'strong' as never }, 'plain', 0n)).toThrow(InvalidArgumentError);
    expect(() => readPlan(OpCode.getData, { after: 'zxid:1' }, 'plain', 0n)).toThrow(InvalidArgumentError);
  });

  it('a reply below the token fails with StaleServerError (control: at the token it passes)', async () => {
    const fence = new ReadFence({ connected: () => true, waitConnected: () => Promise.resolve(), send: () => Promise.resolve(0) });
    const how = (zxid: bigint) => ({ fence, failsUnsent: false, send: () => Promise.resolve({ zxid, err: 0, body: 'x' }), options: {}, timeout: undefined, context: { op: 'getData', path: '/a' } });
    const err = await sendPlanned({ fence: 'sync', after: 100n }, how(99n)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StaleServerError);
    expect(err).toMatchObject({ token: 100n, serverZxid: 99n, op: 'getData', path: '/a', isRetryable: true });
    await expect(sendPlanned({ fence: undefined, after: 100n }, how(100n))).resolves.toMatchObject({ zxid: 100n });
  });
});
