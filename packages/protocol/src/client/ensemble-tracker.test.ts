import { describe, expect, it } from 'vitest';
import { ConnectionLossError, NoNodeError } from '../errors.js';
import type { Stat } from '../jute/data.js';
import type { HostAddress } from '../session/hosts.js';
import type { SessionState, StateListener } from '../session/session.js';
import type { WatchListener } from '../session/watches.js';
import { EnsembleTracker, type TrackedClient } from './ensemble-tracker.js';
import { parseConfig, type EnsembleConfig } from './reconfig.js';

function config(version: number, ...ports: number[]): EnsembleConfig {
  const lines = ports.map((p, i) => `server.${i + 1}=127.0.0.1:${p + 1000}:${p + 2000}:participant;127.0.0.1:${p}`);
  return parseConfig([...lines, `version=${version.toString(16)}`].join('\n'), {} as Stat);
}

/** A client whose getConfig answers from a script; records watches and host-list updates. */
class FakeClient implements TrackedClient {
  serverList: HostAddress[] = [{ host: '127.0.0.1', port: 1 }];
  readonly updates: HostAddress[][] = [];
  readonly answers: Array<EnsembleConfig | Error> = [];
  watch: WatchListener | undefined;
  reads = 0;
  readonly #listeners = new Set<StateListener>();

  async getConfig(options: { watch?: WatchListener }): Promise<EnsembleConfig> {
    this.reads++;
    const next = this.answers.shift();
    if (next === undefined) throw new Error('no scripted answer');
    if (next instanceof Error) throw next;
    this.watch = options.watch;
    return next;
  }
  updateServerList(hosts: readonly HostAddress[]): boolean {
    this.updates.push(hosts.slice());
    this.serverList = hosts.slice();
    return true;
  }
  onStateChange(listener: StateListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  emit(state: SessionState, previous: SessionState): void {
    for (const l of this.#listeners) l(state, previous);
  }
  fire(): void {
    const w = this.watch;
    this.watch = undefined;
    w?.({ type: 'NodeDataChanged', path: '/zookeeper/config' });
  }
}

const tick = () => new Promise((r) => setImmediate(r));
const ports = (hosts: HostAddress[][]) => hosts.map((l) => l.map((h) => h.port));

describe('ensemble tracker', () => {
  it('applies the first config, then each change its watch reports; an unchanged member list is not applied again', async () => {
    const zk = new FakeClient();
    zk.answers.push(config(1, 1, 2, 3), config(2, 1, 2, 3, 4, 5), config(3, 5, 4, 3, 2, 1));
    const tracker = new EnsembleTracker(zk);
    await tracker.start();
    expect(ports(zk.updates)).toEqual([[1, 2, 3]]);
    zk.fire();
    await tick();
    expect(ports(zk.updates)).toEqual([[1, 2, 3], [1, 2, 3, 4, 5]]);
    zk.fire();
    await tick();
    expect(zk.updates).toHaveLength(2);
    expect(tracker.config?.version).toBe(3n);
    expect(zk.watch).toBeDefined(); // the watch is always set again
    tracker.stop();
  });

  it('never goes back to an older version', async () => {
    const zk = new FakeClient();
    zk.answers.push(config(5, 1, 2), config(4, 7, 8));
    const tracker = new EnsembleTracker(zk);
    await tracker.start();
    zk.fire();
    await tick();
    expect(ports(zk.updates)).toEqual([[1, 2]]);
    tracker.stop();
  });

  it('a failed read is made again once connected, not before', async () => {
    const zk = new FakeClient();
    zk.answers.push(new ConnectionLossError('drop'), config(1, 4, 5));
    const tracker = new EnsembleTracker(zk);
    await tracker.start();
    expect(zk.reads).toBe(1);
    zk.emit('suspended', 'connected');
    await tick();
    expect(zk.reads).toBe(1);
    zk.emit('connected', 'suspended');
    await tick();
    expect(zk.reads).toBe(2);
    expect(ports(zk.updates)).toEqual([[4, 5]]);
    // Connected again without a pending failure: no extra read.
    zk.emit('connected', 'suspended');
    await tick();
    expect(zk.reads).toBe(2);
    tracker.stop();
  });

  it('stops on a server without a config node, on session expiry and on close', async () => {
    const old = new FakeClient();
    old.answers.push(new NoNodeError(undefined, { op: 'getConfig', path: '/zookeeper/config' }));
    await new EnsembleTracker(old).start();
    old.emit('connected', 'suspended');
    await tick();
    expect(old.reads).toBe(1);

    const zk = new FakeClient();
    zk.answers.push(config(1, 1));
    await new EnsembleTracker(zk).start();
    zk.emit('expired', 'suspended');
    zk.answers.push(config(2, 2));
    zk.fire();
    await tick();
    expect(zk.reads).toBe(1);
  });
});
