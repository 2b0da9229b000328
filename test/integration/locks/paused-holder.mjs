// A Mutex holder in its own process, for the pause test (lease-clock.test.ts, issue 41): it
// takes the lock, says `HELD <token> <sessionTimeout>`, then "reads" and, once the read is in,
// checks its lease and "writes". The parent SIGSTOPs it while the read is outstanding, for longer
// than the session timeout, and SIGCONTs it. The continuation after the read runs first on
// resume, before any timer or session event of the client: it reports what the timer-set flag
// said (`signal.aborted`, read before the check), what `assertHeld()` did, and whether the write
// would have gone out:
//   CHECK aborted-before=<bool> held=<bool> WROTE
//   CHECK aborted-before=<bool> held=<bool> REFUSED <name> <code> <message>
// The read is a blocking read of stdin (readSync): the parent stops the process inside it and
// writes a line before SIGCONT, so the pause point is exact, and the read's continuation (an
// `await`, a promise job) runs before the event loop turns at all. (An async read's event is not
// reliably first on resume: the server's close of the expired session's socket, or a timer, can
// come before it.)
// Runs the built packages (the test command builds before testing).
import { readSync, writeSync } from 'node:fs';
import { ZooKeeper } from '@zk/protocol';
import { Mutex } from '@zk/locks';

const [connect, path, timeout] = process.argv.slice(2);
const say = (line) => writeSync(1, `${line}\n`); // synchronous: said before any pause

const zk = await ZooKeeper.connect(connect, { sessionTimeout: Number(timeout) });
const lease = await new Mutex(zk, path).acquire();
const signal = lease.signal; // handed out now: the flag the guard's timers and events set

let deliver;
const read = new Promise((resolve) => (deliver = resolve));

async function work() {
  await read; // "read the row"
  // The continuation: the first code to run after SIGCONT.
  const abortedBefore = signal.aborted; // the control: what a timer-only check would go by
  let outcome;
  try {
    lease.assertHeld(); // "check, then write"
    outcome = 'WROTE';
  } catch (err) {
    outcome = `REFUSED ${err.name} ${err.code} ${err.message}`;
  }
  say(`CHECK aborted-before=${abortedBefore} held=${lease.held} ${outcome}`);
  await zk.close().catch(() => undefined);
  process.exit(0);
}
void work();

say(`HELD ${lease.fencingToken} ${zk.sessionTimeout}`);
setTimeout(() => {
  say('WAITING');
  readSync(0, Buffer.alloc(64)); // stopped here by the parent
  deliver('row');
}, 50);
