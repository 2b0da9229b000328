// What every Node participant of the interop suites shares (java/Interop.java is the same for the
// Curator side): checking the argument count, connecting, the line protocol on stdin/stdout
// (READY and the start line of a counted run, ACQUIRED / RELEASED of a hold run, the JSON result
// line), the marker files of the clock-free exclusion checks, and a seeded generator. Plain ESM
// on the built packages (the test command runs `tsc -b` first).
import { appendFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ZooKeeper } from '@zk/protocol';

/** This process's arguments; exits with status 2 and `usage` on stderr unless there are as many as one of `lengths`. */
export function expectArgs(usage, ...lengths) {
  const args = process.argv.slice(2);
  if (!lengths.includes(args.length)) {
    process.stderr.write(`usage: ${usage}\n`);
    process.exit(2);
  }
  return args;
}

/** Prints one line. */
export const say = (line) => process.stdout.write(`${line}\n`);

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

/** The next line the test sends (undefined once stdin ends): each command is one line. */
export const nextLine = async () => (await lines.next()).value;

/** The start barrier of a counted run: READY once connected, then wait for the test's line. */
export async function awaitStart() {
  say('READY');
  await nextLine();
}

/** The last line of a counted run. */
export const result = (id, acquisitions, violations) => say(JSON.stringify({ id, acquisitions, violations }));

/** A hold run: `acquire()` once, print ACQUIRED (and what `after` returns for the lease, if anything), release on a stdin line, print RELEASED. */
export async function holdUntilLine(acquire, after = () => undefined) {
  const lease = await acquire();
  say('ACQUIRED');
  const extra = after(lease);
  if (extra !== undefined) say(extra);
  await nextLine();
  await lease.release();
  say('RELEASED');
}

/**
 * The holds of a counted run: `iterations` times `acquire()` (anything with `release()`),
 * `hold(n, false)`, release. With `unlocked` (the negative control) each "hold" takes no lock at
 * all and is slow, `hold(n, true)`, so that the marker check has overlaps to catch. Returns the
 * number of holds.
 */
export async function countHolds(acquire, unlocked, iterations, hold) {
  let acquisitions = 0;
  for (let n = 0; n < iterations; n++) {
    if (unlocked) {
      acquisitions++; // a "hold" without a lock
      await hold(n, true);
      continue;
    }
    const lease = await acquire();
    try {
      acquisitions++;
      await hold(n, false);
    } finally {
      await lease.release();
    }
  }
  return acquisitions;
}

/**
 * Connects to `connect`, runs `body(zk)`, then closes the client and stdin (so the process can
 * exit) whatever happened.
 */
export async function withClient(connect, sessionTimeout, body) {
  const zk = await ZooKeeper.connect(connect, { sessionTimeout });
  try {
    await body(zk);
  } finally {
    await zk.close();
    process.stdin.destroy();
  }
}

/** A generator seeded from `id`: each participant's mix of choices is reproducible. */
export function seededRandom(id) {
  let seed = [...id].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0, 7);
  return () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

/**
 * The marker directory `dir` of participant `id` in a counted run, shared with every other one:
 * files created with exclusive create inside a hold, and the append-only hold log.
 */
export class Markers {
  violations = 0;

  constructor(dir, id) {
    this.dir = dir;
    this.id = id;
  }

  /**
   * Creates marker `name` with exclusive create and returns its path. An existing file means
   * another holder is inside: a violation, and the file is not ours to delete (returns undefined).
   */
  async claim(name) {
    const marker = join(this.dir, name);
    try {
      await writeFile(marker, this.id, { flag: 'wx' });
      return marker;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      this.violations++;
      return undefined;
    }
  }

  /** Deletes a marker `claim` returned (undefined: nothing to delete). */
  async drop(marker) {
    if (marker !== undefined) await rm(marker);
  }

  /** Whether marker `name` exists. */
  exists(name) {
    return stat(join(this.dir, name)).then(() => true, () => false);
  }

  /** How many markers start with `prefix`. */
  async count(prefix) {
    return (await readdir(this.dir)).filter((f) => f.startsWith(prefix)).length;
  }

  /** Appends "<id> <what>" to the hold log. */
  async log(what) {
    // One short O_APPEND write per hold: appends from several processes do not interleave.
    await appendFile(join(this.dir, 'log'), `${this.id} ${what}\n`);
  }

  /** The inside of a hold; `slow` widens the window (only the unlocked negative controls use it). */
  static pause(slow) {
    return new Promise((resolve) => (slow ? setTimeout(resolve, 1) : setImmediate(resolve)));
  }
}
