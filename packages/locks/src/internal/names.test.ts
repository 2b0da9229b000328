import { describe, expect, it } from 'vitest';
import {
  attemptIdOf,
  fixForSorting,
  MUTEX_LOCK_NAME,
  MUTEX_LOCK_NAMES,
  newAttemptId,
  protectedName,
  READ_WRITE_LOCK_NAMES,
  sortChildren,
  sortKey,
} from './names.js';

// Names as Curator 5 creates them (InterProcessMutex, InterProcessReadWriteLock), as kazoo's Lock
// creates them (<uuid hex>__lock__<seq>), and as go-zookeeper's Lock creates them (_c_<32 hex>-lock-<seq>).
const curatorMutex = [
  '_c_2ab2bfe5-8b8f-4b26-a5c5-ad5b2c3f6a01-lock-0000000012',
  '_c_0d8ad4a1-0b3e-4e0b-9a45-2f3c6d7e8f90-lock-0000000003',
  '_c_ffffffff-ffff-4fff-bfff-ffffffffffff-lock-0000000007',
];

describe('names - protected names', () => {
  it('builds Curator-style names and reads the attempt id back', () => {
    const id = newAttemptId();
    const name = `${protectedName(id, MUTEX_LOCK_NAME)}0000000001`;
    expect(name).toBe(`_c_${id}-lock-0000000001`);
    expect(attemptIdOf(name)).toBe(id);
  });

  it('reads the id of names Curator created', () => {
    expect(attemptIdOf(curatorMutex[0]!)).toBe('2ab2bfe5-8b8f-4b26-a5c5-ad5b2c3f6a01');
    expect(attemptIdOf('_c_2ab2bfe5-8b8f-4b26-a5c5-ad5b2c3f6a01-__READ__0000000004')).toBe('2ab2bfe5-8b8f-4b26-a5c5-ad5b2c3f6a01');
  });

  it('rejects names that are not protected', () => {
    expect(attemptIdOf('lock-0000000001')).toBeUndefined();
    expect(attemptIdOf('_c_0123456789abcdef0123456789abcdef-lock-0000000001')).toBeUndefined(); // go-zk: 32 hex, no dashes
    expect(attemptIdOf('_c_2ab2bfe5-8b8f-4b26-a5c5-ad5b2c3f6a01')).toBeUndefined();
    expect(attemptIdOf('_c_2ab2bfe5-8b8f-4b26-a5c5-ad5b2c3f6a01xlock-0000000001')).toBeUndefined();
  });
});

describe('names - sorting', () => {
  it('sorts mutex nodes by the sequence after the lock name, whatever the uuid', () => {
    expect(sortChildren(curatorMutex, MUTEX_LOCK_NAMES).map((n) => n.slice(-10))).toEqual(['0000000003', '0000000007', '0000000012']);
  });

  it('sorts read and write nodes of one read-write lock together by sequence', () => {
    const children = [
      '_c_2ab2bfe5-8b8f-4b26-a5c5-ad5b2c3f6a01-__WRIT__0000000005',
      '_c_0d8ad4a1-0b3e-4e0b-9a45-2f3c6d7e8f90-__READ__0000000002',
      '_c_ffffffff-ffff-4fff-bfff-ffffffffffff-__READ__0000000009',
      '_c_11111111-1111-4111-8111-111111111111-__WRIT__0000000001',
    ];
    expect(sortChildren(children, READ_WRITE_LOCK_NAMES).map((n) => n.slice(-18))).toEqual([
      '__WRIT__0000000001',
      '__READ__0000000002',
      '__WRIT__0000000005',
      '__READ__0000000009',
    ]);
  });

  it('uses the last occurrence of the lock name, as fixForSorting does', () => {
    expect(fixForSorting('lock-lock-0000000001', 'lock-')).toBe('0000000001');
    expect(fixForSorting('other', 'lock-')).toBe('other');
    expect(sortKey('x__READ__y__WRIT__0000000042', READ_WRITE_LOCK_NAMES)).toBe('0000000042');
  });

  it('orders unrelated nodes by their whole name, as Curator does', () => {
    expect(sortChildren(['zzz', 'lock-0000000002', 'aaa'], MUTEX_LOCK_NAMES)).toEqual(['lock-0000000002', 'aaa', 'zzz']);
  });
});
