// The register workload's participant (register.test.ts; issue 39): one process pinned to one
// server (its connect string names that server alone), with one writer session looping over
// random keys (setData of a value unique to this process) and one reader session per read mode
// (`plain`, `sync` or `linearizable`) looping over random keys. Readers never write: a session's
// write that its server cannot commit holds that session's later reads behind it, and the plain
// readers must go on reading what a cut-off server has (the control). Every
// operation is logged as a JSON line with its call and return times from CLOCK_MONOTONIC
// (process.hrtime.bigint(), one clock for every process of the machine); a write that failed has
// an unknown outcome (no return), a read that failed is logged as failed and left out. Runs the
// built packages.
// Each session logs {kind:'ready'} once connected; the run ends when the test writes a line to
// stdin (or after durationMs).
//   <connect> <who> <durationMs> <keys, comma-separated> <modes, comma-separated>
import { createInterface } from 'node:readline';
import { ZooKeeper } from '@zk/protocol';

const [connect, who, durationText, keysText, modesText] = process.argv.slice(2);
const keys = keysText.split(',');
const modes = modesText.split(',');
const end = Date.now() + Number(durationText);
const now = () => process.hrtime.bigint().toString();
const log = (event) => process.stdout.write(`${JSON.stringify({ who, ...event })}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let written = 0;
let stopped = false;
createInterface({ input: process.stdin }).on('line', () => (stopped = true));
const running = () => !stopped && Date.now() < end;

process.on('unhandledRejection', (err) => {
  log({ kind: 'error', message: `unhandled rejection: ${String(err?.stack ?? err)}` });
  process.exit(1);
});

async function connectClient(mode) {
  for (;;) {
    try {
      // A session long enough to outlive the faults: the subject is the reads, not the session.
      return await ZooKeeper.connect(connect, { sessionTimeout: 20_000, connectTimeout: 5000, requestTimeout: 4000 });
    } catch (err) {
      log({ kind: 'error', mode, message: `connect: ${String(err?.message ?? err)}` });
      if (!running()) return undefined;
      await sleep(200);
    }
  }
}

async function loop(mode) {
  const zk = await connectClient(mode);
  if (!zk) return;
  log({ kind: 'ready', mode });
  while (running()) {
    const key = keys[Math.floor(Math.random() * keys.length)];
    if (mode === 'write') {
      const value = `${who}.${mode}.${written++}`;
      const call = now();
      try {
        await zk.setData(`/${key}`, value);
        log({ kind: 'op', mode, op: 'write', key, value, call, ret: now() });
      } catch (err) {
        // Never sent (not connected): certainly not applied. Otherwise the outcome is unknown.
        log({ kind: 'op', mode, op: 'write', key, value, call, error: String(err?.name ?? err), notSent: err?.notSent === true });
        await sleep(20);
      }
    } else {
      const call = now();
      try {
        const { data } = await zk.getData(`/${key}`, { consistency: mode });
        const ret = now();
        log({ kind: 'op', mode, op: 'read', key, value: data.length === 0 ? null : data.toString(), call, ret });
      } catch (err) {
        log({ kind: 'op', mode, op: 'read', key, call, error: String(err?.name ?? err) });
        // A server cut off answers nothing for a while: do not spin.
        await sleep(20);
      }
    }
  }
  await zk.close().catch(() => undefined);
}

await Promise.all(['write', ...modes].map((m) => loop(m)));
// Exit once stdout has been flushed (a pipe is written asynchronously: exit() could cut the last lines).
process.stdout.write('', () => process.exit(0));
