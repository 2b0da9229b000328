/**
 * Paths: validation as the server validates them (Java `PathUtils.validatePath`), chroot
 * prefixing and stripping, and sequence-suffix parsing. Pure.
 */
import { InvalidArgumentError } from '../errors.js';

/**
 * Throws {@link InvalidArgumentError} unless `path` is a path ZooKeeper accepts: absolute, no
 * empty segment, no trailing slash (except for `/` itself, or when `sequential`, since the server
 * appends the 10-digit suffix), no `.` or `..` segment, and none of the characters the server
 * refuses (controls, U+D800-U+F8FF, U+FFF0-U+FFFF).
 */
export function validatePath(path: string, options: { sequential?: boolean; argument?: string } = {}): void {
  const arg = options.argument ?? 'path';
  if (typeof path !== 'string') throw new InvalidArgumentError(arg, `expected a string, got ${typeof path}`);
  // A sequential node's name may be empty or end in '/': the server appends the suffix.
  const p = options.sequential ? `${path}1` : path;
  const reason = pathProblem(p);
  if (reason) throw new InvalidArgumentError(arg, `invalid path ${JSON.stringify(path)}: ${reason}`);
}

function pathProblem(path: string): string | undefined {
  if (path.length === 0) return 'empty';
  if (path.charCodeAt(0) !== 0x2f) return 'must start with /';
  if (path.length === 1) return undefined;
  if (path.charCodeAt(path.length - 1) === 0x2f) return 'must not end with /';
  let segmentStart = 1;
  for (let i = 1; i <= path.length; i++) {
    const c = i < path.length ? path.charCodeAt(i) : 0x2f;
    if (c === 0x2f) {
      const len = i - segmentStart;
      if (len === 0) return `empty node name at index ${i}`;
      if ((len === 1 && path.charCodeAt(segmentStart) === 0x2e) || (len === 2 && path.startsWith('..', segmentStart))) {
        return `relative segment at index ${segmentStart}`;
      }
      segmentStart = i + 1;
      continue;
    }
    if (c === 0) return `null character at index ${i}`;
    if (c <= 0x1f || (c >= 0x7f && c <= 0x9f) || (c >= 0xd800 && c <= 0xf8ff) || c >= 0xfff0) {
      return `invalid character U+${c.toString(16).toUpperCase().padStart(4, '0')} at index ${i}`;
    }
  }
  return undefined;
}

/**
 * A chroot from the connect string (`host:2181/app`), normalised: `''` for none, otherwise
 * an absolute path without trailing slash. Throws {@link InvalidArgumentError} when invalid.
 */
export function normaliseChroot(chroot: string | undefined): string {
  if (chroot === undefined || chroot === '' || chroot === '/') return '';
  validatePath(chroot, { argument: 'chroot' });
  return chroot;
}

/** The server-side path of a client path under `chroot` (`''` means none). */
export function addChroot(chroot: string, path: string): string {
  if (chroot === '') return path;
  return path === '/' ? chroot : chroot + path;
}

/**
 * The client path of a server-side path under `chroot`. A path outside the chroot (which the
 * server should never send) is returned unchanged.
 */
export function stripChroot(chroot: string, serverPath: string): string {
  if (chroot === '') return serverPath;
  if (serverPath === chroot) return '/';
  if (serverPath.length > chroot.length && serverPath.startsWith(chroot) && serverPath.charCodeAt(chroot.length) === 0x2f) {
    return serverPath.slice(chroot.length);
  }
  return serverPath;
}

/** The parent of an absolute path (`'/a/b'` -> `'/a'`, `'/a'` -> `'/'`, `'/'` -> `undefined`). */
export function parentPath(path: string): string | undefined {
  if (path === '/') return undefined;
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

/** The last segment of a path (`'/a/b'` -> `'b'`). */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** Joins a parent path and a child name (`joinPath('/', 'a')` is `'/a'`). */
export function joinPath(parent: string, child: string): string {
  return parent === '/' ? `/${child}` : `${parent}/${child}`;
}

/**
 * The sequence number the server appended to a sequential node's name: the last 10 characters,
 * zero-padded decimal of the parent's cversion (Java `PrepRequestProcessor`, `%010d`). It is a
 * signed 32-bit counter, so after 2^31 creates it goes negative (`-2147483648` is 11 characters;
 * the server then writes it unpadded). Returns `undefined` when the name has no suffix.
 */
export function sequenceOf(name: string): number | undefined {
  for (const width of [10, 11]) {
    if (name.length < width) return undefined;
    const tail = name.slice(-width);
    if (!/^-?\d+$/.test(tail)) continue;
    const n = Number(tail);
    if (n >= -2147483648 && n <= 2147483647) return n;
  }
  return undefined;
}
