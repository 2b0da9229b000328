/**
 * Curator participants in a FaultFixture's history: java/CuratorFaultParticipant.java compiled
 * once (through ../harness/java.ts), spawned with participant.mjs's arguments and adopted with
 * `fx.attach()`, so `fx.holder()`, kill, pause, `fx.check()` and `fx.close()` treat it like a
 * Node participant.
 *
 * ```ts
 * const curator = CuratorParticipants.compile();   // throws if javac fails; see curatorMissing()
 * const window = await curator.clockWindowNs();    // throws unless Java's nanoTime is hrtime's clock
 * const j = curator.spawn(fx, { who: 'j0', connect, durationMs: 10_000, workMs: 20 });
 * curator.remove();
 * ```
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { compileCurator, TEST_JVM_OPTIONS, type CompiledJava } from '../harness/java.js';
import { SESSION_TIMEOUT, type FaultFixture, type Participant, type ParticipantOptions } from './fixture.js';

/** The Java source. */
export const CURATOR_PARTICIPANT = fileURLToPath(new URL(import.meta.url.includes('/test/dist/') ? '../../faults/java/CuratorFaultParticipant.java' : './java/CuratorFaultParticipant.java', import.meta.url));

/** The compiled Curator participant. */
export class CuratorParticipants {
  readonly #compiled: CompiledJava;

  private constructor(compiled: CompiledJava) {
    this.#compiled = compiled;
  }

  /** Compiles the participant (a few seconds); check `curatorMissing()` first. */
  static compile(): CuratorParticipants {
    return new CuratorParticipants(compileCurator([CURATOR_PARTICIPANT]));
  }

  /**
   * Checks that Java's System.nanoTime() reads process.hrtime.bigint()'s clock: `rounds` times,
   * asks the JVM for its time and requires it between the asking and the answer. Resolves with
   * the widest such window in ns (a bound on the disagreement); rejects with both readings if a
   * Java time falls outside its window.
   */
  async clockWindowNs(rounds = 5): Promise<bigint> {
    const java = spawn('java', [...TEST_JVM_OPTIONS, '-cp', this.#compiled.classpath, 'CuratorFaultParticipant', '--clock'], { stdio: ['pipe', 'pipe', 'inherit'] });
    const lines = createInterface({ input: java.stdout })[Symbol.asyncIterator]();
    try {
      let widest = 0n;
      for (let i = 0; i < rounds; i++) {
        const before = process.hrtime.bigint();
        java.stdin.write('now\n');
        const line = await lines.next();
        const after = process.hrtime.bigint();
        if (line.done) throw new Error('the Java clock check exited early');
        const t = BigInt(line.value.trim());
        if (t < before || t > after) throw new Error(`System.nanoTime() ${t} is outside [${before}, ${after}] of process.hrtime.bigint(): not the same clock`);
        if (after - before > widest) widest = after - before;
      }
      return widest;
    } finally {
      java.stdin.end();
      java.kill('SIGKILL');
    }
  }

  /**
   * Spawns a Curator participant into `fx`, adopted with `fx.attach`: InterProcessMutex (kind
   * `mutex` or unset), InterProcessSemaphoreV2 (`semaphore`, the fixture's capacity in permits),
   * LeaderLatch (`latch`) or LeaderSelector (`selector`).
   */
  spawn(fx: FaultFixture, o: ParticipantOptions): Participant {
    const kind = o.kind ?? 'mutex';
    if (kind === 'rw' || kind === 'cheat') throw new Error(`the Curator participant takes a mutex, a semaphore or a leader election, not ${kind}`);
    const sessionTimeout = o.sessionTimeoutMs ?? SESSION_TIMEOUT;
    const args = [`${o.connect}${fx.root}`, fx.lockPath, o.who, String(o.durationMs), String(sessionTimeout), fx.resource.url, String(o.workMs), kind, String(o.permits ?? fx.capacity)];
    const proc = spawn('java', [...TEST_JVM_OPTIONS, '-cp', this.#compiled.classpath, 'CuratorFaultParticipant', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    return fx.attach(o.who, proc, sessionTimeout);
  }

  /** Deletes the compiled classes. */
  remove(): void {
    this.#compiled.remove();
  }
}
