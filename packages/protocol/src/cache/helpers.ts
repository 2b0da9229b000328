/**
 * Small pure helpers of the tree cache.
 */
import type { SessionState } from '../session/session.js';

/** True when the state allows requests to be sent. */
export function isConnected(state: SessionState): boolean {
  return state === 'connected' || state === 'connectedReadOnly';
}

/** The parent of an absolute path (`/` for a top-level node). */
export function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

/** Unique paths, parents before children (so a replaced parent is seen before its new children). */
export function byDepth(paths: readonly string[]): string[] {
  const unique = [...new Set(paths)];
  const depth = (p: string) => (p === '/' ? 0 : p.split('/').length - 1);
  return unique.map((p, i) => ({ p, i, d: depth(p) })).sort((a, b) => a.d - b.d || a.i - b.i).map((x) => x.p);
}

/** A promise with its resolve and reject. */
export function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
