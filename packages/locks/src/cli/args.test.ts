import { describe, expect, it } from 'vitest';
import { parseArgs, parseDuration, UsageError } from './args.js';

describe('zk-lock - arguments', () => {
  it('parses a run with options and the command after --', () => {
    expect(parseArgs(['--connect', 'a:1', '--timeout', '30s', '--write', '--grace', '500ms', '/locks/n', '--', 'sh', '-c', 'echo --x'])).toEqual({
      command: 'run',
      path: '/locks/n',
      argv: ['sh', '-c', 'echo --x'],
      connect: 'a:1',
      timeout: 30_000,
      grace: 500,
      write: true,
    });
  });

  it('parses the semaphore and leader modes', () => {
    expect(parseArgs(['--semaphore', '3', '/s', '--', 'job'])).toMatchObject({ command: 'run', path: '/s', semaphore: 3, argv: ['job'] });
    expect(parseArgs(['--leader', '--id', 'w-1', '/e', '--', 'job'])).toMatchObject({ command: 'run', path: '/e', leader: true, id: 'w-1', argv: ['job'] });
    expect(parseArgs(['status', '--semaphore', '2', '/s'])).toMatchObject({ command: 'status', semaphore: 2 });
  });

  it('parses status', () => {
    expect(parseArgs(['status', '--json', '/locks/n'])).toMatchObject({ command: 'status', path: '/locks/n', json: true, argv: [] });
  });

  it('parses durations', () => {
    expect(parseDuration('0', 'x')).toBe(0);
    expect(parseDuration('2', 'x')).toBe(2000);
    expect(parseDuration('1.5s', 'x')).toBe(1500);
    expect(parseDuration('2m', 'x')).toBe(120_000);
    expect(() => parseDuration('soon', '--timeout')).toThrow(/--timeout: bad duration/);
  });

  it.each([
    [['/l'], /missing the command/],
    [['--', 'x'], /missing <lock-path>/],
    [['l', '--', 'x'], /must start with \//],
    [['/l', 'x'], /put the command after --/],
    [['--read', '--write', '/l', '--', 'x'], /exclude each other/],
    [['--bogus', '/l', '--', 'x'], /unknown option --bogus/],
    [['--semaphore', '0', '/l', '--', 'x'], /--semaphore: the number of permits must be an integer from 1/],
    [['--semaphore', '2.5', '/l', '--', 'x'], /--semaphore: the number of permits/],
    [['--semaphore', '-1', '/l', '--', 'x'], /--semaphore: the number of permits/],
    [['--semaphore', '2', '--read', '/l', '--', 'x'], /--read and --semaphore exclude each other/],
    [['--leader', '--write', '/l', '--', 'x'], /--write and --leader exclude each other/],
    [['--id', 'x', '/l', '--', 'x'], /--id is the participant id of --leader/],
    [['--timeout'], /needs a value/],
    [['status', '/l', '--', 'x'], /no command/],
  ])('refuses %j', (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(UsageError);
    expect(() => parseArgs(argv)).toThrow(message);
  });

  it('a unit written apart from its number is named as the problem, not the lock path', () => {
    expect(() => parseArgs(['--timeout', '5', 'minutes', '/locks/x', '--', 'true'])).toThrow(new UsageError('--timeout takes one value with its unit attached (500ms, 30s, 5m, 1h): "5 minutes" is two arguments'));
    expect(() => parseArgs(['--grace', '2', 's', '/locks/x', '--', 'true'])).toThrow(/--grace takes one value/);
    // A lock path that happens to be a unit word is still a path when no duration precedes it.
    expect(() => parseArgs(['minutes', '--', 'true'])).toThrow(/path/);
  });

  it('--help wins over everything else', () => {
    expect(parseArgs(['--help', '--bogus-but-after']).help).toBe(true);
  });
});

describe('zk-lock args - --acl', () => {
  it('parses into the ACL of the nodes it creates', () => {
    expect(parseArgs(['--acl', 'creator', '/l', '--', 'x']).acl).toEqual([{ perms: 31, id: { scheme: 'auth', id: '' } }]);
    expect(() => parseArgs(['--acl', 'nobody', '/l', '--', 'x'])).toThrow(/--acl: entry 1 is not creator, world/);
  });
});
