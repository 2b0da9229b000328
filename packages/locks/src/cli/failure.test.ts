import { describe, expect, it } from 'vitest';
import { ConnectionLossError, ErrorCode, fromCode, InvalidArgumentError, SessionExpiredError } from '@zk/protocol';
import { UnsafeLockPathError } from '../errors.js';
import { UsageError } from './args.js';
import { describeFailure, Exit } from './failure.js';

const ctx = { path: '/locks/deploy', identity: 'digest user deploy' };
const server = (code: number) => fromCode(code, { op: 'create', path: '/locks/deploy/x' });

describe('zk-lock - exit codes and hints', () => {
  it.each([
    ['a usage error', new UsageError('missing <lock-path>'), Exit.usage, /^missing <lock-path>$/],
    ['an ACL the client refused', new InvalidArgumentError('acl', 'a digest id is ...'), Exit.usage, /'creator' needs an identity .*never the password/],
    ['INVALIDACL', server(ErrorCode.INVALIDACL), Exit.usage, /the server refused the ACL of --acl \('creator' needs an identity/],
    ['NOAUTH', server(ErrorCode.NOAUTH), Exit.noPerm, /\/locks\/deploy belongs to another identity than this one \(digest user deploy\): run with the credentials of its owner/],
    ['a lock path open to others', new UnsafeLockPathError('/locks/deploy', [], ['delete to world:anyone']), Exit.noPerm, /lets others in .*delete to world:anyone/],
    ['NOTEMPTY', server(ErrorCode.NOTEMPTY), Exit.software, /deletes only nodes without children.*Is something other than lock recipes using \/locks\/deploy\? \(zk-lock status \/locks\/deploy/],
    ['BADVERSION', server(ErrorCode.BADVERSION), Exit.software, /changed between zk-lock's read and its write, so another program writes under \/locks\/deploy/],
    ['another server error', server(ErrorCode.NOCHILDRENFOREPHEMERALS), Exit.software, /./],
    ['a connection loss', new ConnectionLossError('gone'), Exit.unavailable, /gone/],
    ['an expired session', new SessionExpiredError('expired'), Exit.unavailable, /expired/],
  ] as const)('%s', (_what, err, code, message) => {
    const failure = describeFailure(err, ctx);
    expect(failure.code).toBe(code);
    expect(failure.message).toMatch(message);
  });

  it('NOAUTH (77) and a bad --acl (64) are told apart from an unreachable ZooKeeper (69), following sysexits', () => {
    expect(Exit).toMatchObject({ usage: 64, unavailable: 69, software: 70, timeout: 75, lost: 76, noPerm: 77 });
  });
});
