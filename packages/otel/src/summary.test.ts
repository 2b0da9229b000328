import { describe, expect, it } from 'vitest';
import { isSequentialCreate, requestSummary, summarizePath } from './summary.js';
import { codeName, codeOf } from './codes.js';
import { benignCodes } from './options.js';

describe('summarizePath', () => {
  it('masks sequence suffixes, protected-node UUIDs, numbers and long ids', () => {
    expect(summarizePath('/app/config')).toBe('/app/config');
    expect(summarizePath('/locks/job/_c_2f1c7a9e-5b3d-4c1e-9f00-0123456789ab-lock-0000000007')).toBe('/locks/job/_c_*-lock-*');
    expect(summarizePath('/queue/queue-0000000123')).toBe('/queue/queue-*');
    expect(summarizePath('/jobs/42/state')).toBe('/jobs/*/state');
    expect(summarizePath('/sessions/1000a2b3c4d00017')).toBe('/sessions/*');
    expect(summarizePath('/a/b/c/d/e/f/g/h/i/j')).toBe('/a/b/c/d/e/f/g/h/*');
    expect(summarizePath('/x/' + 'n'.repeat(100))).toBe('/x/*');
    expect(summarizePath('/')).toBe('/');
    expect(summarizePath(undefined)).toBe('');
  });

  it('two protected sequential creates of one lock give one summary', () => {
    const a = '/l/_c_11111111-2222-3333-4444-555555555555-lock-';
    const b = '/l/_c_aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee-lock-';
    expect(isSequentialCreate(a, `${a}0000000001`)).toBe(true);
    expect(requestSummary('create', a, true)).toBe('create /l/_c_*-lock-*');
    expect(requestSummary('create', b, true)).toBe(requestSummary('create', a, true));
    expect(isSequentialCreate('/l/x', '/l/x')).toBe(false);
    expect(isSequentialCreate('/l/x', '/chroot/l/x0000000002')).toBe(true);
    expect(isSequentialCreate('/l/x', undefined)).toBe(false);
  });
});

describe('codes', () => {
  it('names codes and reads benign codes by number or name', () => {
    expect(codeName(-101)).toBe('NONODE');
    expect(codeName(-999)).toBe('UNKNOWN(-999)');
    expect(codeOf('BADVERSION')).toBe(-103);
    expect([...benignCodes(undefined).get('exists')!]).toEqual([-101]);
    const widened = benignCodes({ delete: ['NONODE', -111], exists: [] });
    expect([...widened.get('delete')!]).toEqual([-101, -111]);
    expect(widened.get('exists')!.size).toBe(0);
    expect(() => benignCodes({ get: ['NOPE'] })).toThrow(TypeError);
  });
});
