/**
 * Shared by the scripts of this folder (ab-builds.mjs, one-outstanding.mjs): the bare-socket floor
 * at one outstanding (from the bench's build), and the timing of every socket's reads and writes in
 * the process.
 */
import { Socket } from 'node:net';

// The bare-socket floor client is the bench's own (bench/lib/bare-socket.ts, Node built-ins only),
// so the scripts and the bench's floor rows time the same frames: build it first (`npx tsc -b bench`).
export { bareSocket } from '../dist/lib/bare-socket.js';

/**
 * Times every net.Socket of the process (call before anything connects): from a 'data' event to
 * the next write (the client's turnaround: its part of a round trip at one outstanding), and from
 * a write's return to the next 'data' event (kernel, loopback, server and wake-up). Recorded
 * between start() and stop() only; stop() returns both, sorted, in ms. `hooks.onData` and
 * `hooks.onWrite` are called at each 'data' event and before each write, for finer marks.
 * @param {{ onData?: () => void, onWrite?: () => void }} [hooks]
 */
export function timeSockets(hooks = {}) {
  let lastData = -1;
  let lastWrite = -1;
  let turns;
  let away;
  const { emit, write } = Socket.prototype;
  Socket.prototype.emit = function (event, ...rest) {
    if (event === 'data') {
      hooks.onData?.();
      lastData = performance.now();
      if (lastWrite >= 0) away?.push(lastData - lastWrite);
      lastWrite = -1;
    }
    return emit.call(this, event, ...rest);
  };
  Socket.prototype.write = function (...rest) {
    if (lastData >= 0) turns?.push(performance.now() - lastData);
    lastData = -1;
    hooks.onWrite?.();
    const r = write.apply(this, rest);
    lastWrite = performance.now();
    return r;
  };
  return {
    start() {
      turns = [];
      away = [];
    },
    stop() {
      const out = { turnaround: Float64Array.from(turns ?? []).sort(), away: Float64Array.from(away ?? []).sort() };
      turns = away = undefined;
      return out;
    },
  };
}

/** The median of a sorted array, ms to µs; NaN when empty. */
export const medianUs = (sorted) => (sorted.length ? sorted[sorted.length >> 1] * 1000 : NaN);
