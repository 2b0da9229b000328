#!/usr/bin/env node
/**
 * Where the client's turnaround goes at one outstanding (issue 26): a copy of a @zk/protocol dist
 * with time marks put in at fixed places of the request path, then a loop of `await getData`,
 * printing for each mark the median time (µs) from the reply's 'data' event on the socket:
 * decoded frame, reply parsed (promise resolved), the client's promise chain, the caller's
 * await, the next getData, Connection.request, the tick's flush, the next socket write.
 *
 *   node bench/scripts/turnaround-timeline.mjs [packages/protocol/dist] [--ops 20000] [--connect 127.0.0.1:2181]
 *
 * The marks cost a call each (~0.1 µs); compare builds with the same script. A mark whose anchor
 * text is no longer in the dist stops the script (the path changed: update the anchors).
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { timeSockets } from './bare-socket.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const dist = resolve(args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--')) ?? new URL('../../packages/protocol/dist', import.meta.url).pathname);
const ops = Number(opt('--ops', 20_000));
const connect = opt('--connect', process.env.ZK_CONNECT ?? '127.0.0.1:2181');

/** [file, anchor text (or alternatives, newest first), mark name]: the mark goes right after the anchor. */
const MARKS = [
  ['connection/connection.js', '#onFrame(frame) {', 'frame decoded'],
  ['connection/connection.js', 'req.resolve({ zxid, err, body });\n        if (this.#probe', 'reply parsed'],
  ['client/zookeeper.js', 'return sent.then((reply) => {', 'callOnce then'],
  ['client/zookeeper.js', 'async getData(path, options = {}) {', 'next getData'],
  ['connection/connection.js', 'request(type, write, read, options) {', 'Connection.request'],
  ['connection/connection.js', ['#sendReads(endOfTick = false) {', '#sendReads() {'], 'tick flush'],
];

const copy = mkdtempSync(join(tmpdir(), 'zk-timeline-'));
try {
  cpSync(dist, copy, { recursive: true });
  for (const [file, anchors, name] of MARKS) {
    const p = join(copy, file);
    const text = readFileSync(p, 'utf8');
    // 'reply parsed' marks before the resolve; the others after their anchor (a function's start).
    const anchor = [anchors].flat().find((a) => text.includes(a));
    if (anchor === undefined) throw new Error(`anchor not found in ${file}: ${anchors}`);
    const at = text.indexOf(anchor);
    const call = `globalThis.__zkMark?.(${JSON.stringify(name)});`;
    const patched = name === 'reply parsed' ? text.slice(0, at) + call + ' ' + text.slice(at) : text.slice(0, at + anchor.length) + ' ' + call + text.slice(at + anchor.length);
    writeFileSync(p, patched);
  }

  // From each reply's 'data' event; the socket write closes the window (bare-socket.mjs times it).
  let since = -1;
  const marks = new Map();
  const mark = (name) => {
    if (since < 0) return;
    let list = marks.get(name);
    if (!list) marks.set(name, (list = []));
    list.push(performance.now() - since);
  };
  globalThis.__zkMark = mark;
  const timing = timeSockets({
    onData: () => (since = performance.now()),
    onWrite: () => {
      mark('socket write');
      since = -1;
    },
  });

  const { ZooKeeper } = await import(pathToFileURL(join(copy, 'index.js')).href);
  const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
  const path = `/turnaround-timeline-${process.pid}`;
  await zk.create(path, Buffer.alloc(100, 7)).catch(() => undefined);
  for (let i = 0; i < 3000; i++) await zk.getData(path);
  marks.clear();
  timing.start();
  for (let i = 0; i < ops; i++) {
    await zk.getData(path);
    mark('caller resumed');
  }
  const t = timing.stop();
  await zk.delete(path).catch(() => undefined);
  await zk.close();

  const median = (xs) => Float64Array.from(xs).sort()[xs.length >> 1] * 1000;
  console.log(`${dist}, ${ops} sequential getData of 100 bytes, ${connect}; µs after the reply's 'data' event (median):`);
  for (const [name, at] of [...marks].map(([k, v]) => [k, median(v)]).sort((a, b) => a[1] - b[1])) console.log(`  ${at.toFixed(2).padStart(6)}  ${name}`);
  console.log(`  (write to next reply: ${median(t.away).toFixed(1)} µs)`);
} finally {
  rmSync(copy, { recursive: true, force: true });
}
