// A strict program against the shipped declarations. It is compiled, not run: the types must say
// what the README says, and the @ts-expect-error lines fail the compile (TS2578) if a type went
// loose (an `any` where a declaration file is missing or broken).
import {
  ZooKeeper,
  CreateMode,
  NoNodeError,
  ZooKeeperError,
  InvalidArgumentError,
  type ClientOptions,
  type SessionState,
  type Stat,
  type WatchedEvent,
} from '@zk/protocol';
import { Mutex, ReadWriteLock, ExclusiveLock, Lease, LockTimeoutError, LeaseLostError, inspectLock } from '@zk/locks';
import { ZooKeeperInstrumentation, ZooKeeperAttributes, summarizePath, type RequestInfo, type ZooKeeperInstrumentationConfig } from '@zk/otel';

export async function typed(hosts: string): Promise<string> {
  const options: ClientOptions = { sessionTimeout: 10_000 };
  await using zk = await ZooKeeper.connect(hosts, options);
  const state: SessionState = zk.state;
  const path: string = await zk.create('/a-', 'x', { mode: CreateMode.EPHEMERAL_SEQUENTIAL });
  const { data, stat } = await zk.getData(path, { watch: (e: WatchedEvent) => e.path });
  const version: number = stat.version;
  const missing: Stat | null = await zk.exists('/nothing');
  try {
    await zk.delete('/nothing');
  } catch (err) {
    if (err instanceof NoNodeError) void (err.code satisfies number);
    else if (err instanceof ZooKeeperError && err.isRetryable) throw err;
  }

  const mutex = new Mutex(zk, '/locks/typed');
  const lease: Lease = await mutex.acquire({ timeout: 1_000, signal: AbortSignal.timeout(2_000) });
  const token: bigint = lease.fencingToken;
  const signal: AbortSignal = lease.signal;
  await lease.release();
  const maybe: Lease | undefined = await mutex.tryAcquire();
  await maybe?.release();
  const answer: number = await new ReadWriteLock(zk, '/locks/rw').readLock().run(async (held: Lease) => held.fencingToken > 0n ? 1 : 0);
  await new ExclusiveLock(zk, '/locks/x').run(() => undefined);
  const holders = await inspectLock(zk, '/locks/typed');

  // @ts-expect-error a path is a string
  await zk.create(42);
  // @ts-expect-error a fencing token is a bigint, not a number
  const wrong: number = lease.fencingToken;
  // @ts-expect-error acquire takes options, not a bare timeout
  await mutex.acquire(1_000);

  const errors = [LockTimeoutError, LeaseLostError, InvalidArgumentError].map((c) => c.name);
  return [state, data.toString(), version, missing, token, signal.aborted, answer, holders, wrong, errors].join();
}

export function instrumented(): string {
  const config: ZooKeeperInstrumentationConfig = { enabled: false, ignoreOperations: (r: RequestInfo) => r.operation === 'exists', benignCodes: { delete: ['NONODE', -111] } };
  const instrumentation = new ZooKeeperInstrumentation(config);
  const on: boolean = instrumentation.enabled;
  // @ts-expect-error ignoreOperations takes names or a predicate
  void new ZooKeeperInstrumentation({ enabled: false, ignoreOperations: 'exists' });
  return [on, ZooKeeperAttributes.DB_QUERY_SUMMARY, summarizePath('/a/b-0000000001')].join();
}
