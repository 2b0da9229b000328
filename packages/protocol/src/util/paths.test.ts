import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors.js';
import { addChroot, baseName, joinPath, normaliseChroot, parentPath, sequenceOf, stripChroot, validatePath } from './paths.js';

describe('paths - validatePath', () => {
  it.each(['/', '/a', '/a/b', '/zookeeper/quota', '/über/日本', '/a.b', '/..a', '/a-b_c'])('accepts %j', (p) => {
    expect(() => validatePath(p)).not.toThrow();
  });

  it.each([
    ['', 'empty'],
    ['a', 'must start with /'],
    ['/a/', 'must not end with /'],
    ['//a', 'empty node name'],
    ['/a//b', 'empty node name'],
    ['/a/./b', 'relative segment'],
    ['/a/..', 'relative segment'],
    ['/.', 'relative segment'],
    ['/a\u0000b', 'null character'],
    ['/a\u0001', 'invalid character U+0001'],
    ['/a\u007f', 'invalid character U+007F'],
    ['/a\ud83d\ude00', 'invalid character U+D83D'],
    ['/a\ufff0', 'invalid character U+FFF0'],
  ])('refuses %j (%s)', (p, reason) => {
    expect(() => validatePath(p)).toThrow(InvalidArgumentError);
    expect(() => validatePath(p)).toThrow(reason);
  });

  it('allows a trailing slash or an empty name only for sequential creates', () => {
    expect(() => validatePath('/q/', { sequential: true })).not.toThrow();
    expect(() => validatePath('/q/lock-', { sequential: true })).not.toThrow();
    expect(() => validatePath('/q/')).toThrow(InvalidArgumentError);
  });

  it('names the argument in the error', () => {
    try {
      validatePath('x', { argument: 'chroot' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidArgumentError);
      expect((e as InvalidArgumentError).argument).toBe('chroot');
    }
  });
});

describe('paths - chroot', () => {
  it('normalises', () => {
    expect(normaliseChroot(undefined)).toBe('');
    expect(normaliseChroot('/')).toBe('');
    expect(normaliseChroot('/app')).toBe('/app');
    expect(() => normaliseChroot('/app/')).toThrow(InvalidArgumentError);
  });

  it('adds and strips symmetrically', () => {
    for (const p of ['/', '/a', '/a/b']) {
      expect(stripChroot('/app', addChroot('/app', p))).toBe(p);
      expect(addChroot('', p)).toBe(p);
    }
    expect(addChroot('/app', '/')).toBe('/app');
    expect(addChroot('/app', '/x')).toBe('/app/x');
    expect(stripChroot('/app', '/application')).toBe('/application');
  });
});

describe('paths - helpers', () => {
  it('parent, base name, join', () => {
    expect(parentPath('/a/b')).toBe('/a');
    expect(parentPath('/a')).toBe('/');
    expect(parentPath('/')).toBeUndefined();
    expect(baseName('/a/b')).toBe('b');
    expect(joinPath('/', 'a')).toBe('/a');
    expect(joinPath('/a', 'b')).toBe('/a/b');
  });

  it('sequence suffixes, including the signed wrap', () => {
    expect(sequenceOf('lock-0000000042')).toBe(42);
    expect(sequenceOf('_c_abc-lock-2147483647')).toBe(2147483647);
    // Java's %010d of a negative cversion keeps the sign inside the 10 characters.
    expect(sequenceOf('lock--000000005')).toBe(-5);
    expect(sequenceOf('lock--2147483648')).toBe(-2147483648);
    expect(sequenceOf('lock000000001')).toBeUndefined();
    expect(sequenceOf('lock-abcdefghij')).toBeUndefined();
    expect(sequenceOf('short')).toBeUndefined();
  });
});
