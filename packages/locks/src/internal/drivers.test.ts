import { describe, expect, it } from 'vitest';
import { mutexDriver, readDriver, writeDriver } from './drivers.js';

const R = (n: number) => `_c_00000000-0000-4000-8000-00000000000${n % 10}-__READ__${String(n).padStart(10, '0')}`;
const W = (n: number) => `_c_00000000-0000-4000-8000-00000000000${n % 10}-__WRIT__${String(n).padStart(10, '0')}`;
const M = (n: number) => `_c_00000000-0000-4000-8000-00000000000${n % 10}-lock-${String(n).padStart(10, '0')}`;

describe('drivers - mutex and write', () => {
  it.each([
    [[M(1)], M(1), { kind: 'holds' }],
    [[M(1), M(2)], M(2), { kind: 'watch', node: M(1), thenHolds: true }],
    [[M(1), M(2), M(3)], M(3), { kind: 'watch', node: M(2), thenHolds: false }],
    [[M(1), M(3)], M(2), { kind: 'lost' }],
  ])('mutex %#', (sorted, ours, decision) => {
    expect(mutexDriver.decide(sorted, ours)).toEqual(decision);
  });

  it('a writer waits for the reader right before it', () => {
    expect(writeDriver.decide([R(1), R(2), W(3)], W(3))).toEqual({ kind: 'watch', node: R(2), thenHolds: false });
    expect(writeDriver.decide([W(3)], W(3))).toEqual({ kind: 'holds' });
  });
});

describe('drivers - read', () => {
  it.each([
    ['no writer ahead', [R(1), R(2), R(3)], R(3), { kind: 'holds' }],
    ['writer behind does not matter', [R(1), W(2), R(3)], R(1), { kind: 'holds' }],
    ['head writer ahead', [W(1), R(2)], R(2), { kind: 'watch', node: W(1), thenHolds: true }],
    ['readers between head writer and us', [W(1), R(2), R(3)], R(3), { kind: 'watch', node: W(1), thenHolds: true }],
    ['nearest of several writers', [W(1), R(2), W(3), R(4)], R(4), { kind: 'watch', node: W(3), thenHolds: false }],
    ['writer behind a reader', [R(1), W(2), R(3)], R(3), { kind: 'watch', node: W(2), thenHolds: true }],
    ['our node is gone', [W(1), R(3)], R(2), { kind: 'lost' }],
  ])('%s', (_name, sorted, ours, decision) => {
    expect(readDriver.decide(sorted, ours)).toEqual(decision);
  });
});
