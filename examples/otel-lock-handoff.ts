/**
 * otel-lock-handoff: what a lock hand-off looks like in OpenTelemetry, with `@zk/otel`.
 *
 * Two workers (two sessions in one process) take turns on one lock: `worker-a` holds it,
 * `worker-b` waits, `worker-a` releases and `worker-b` takes it. The OpenTelemetry SDK's
 * ConsoleSpanExporter prints every span as it ends (each worker's `job` span, its
 * `lock.acquire` and `lock.hold` spans and the ZooKeeper requests under them); at the end the
 * program prints the same spans as an indented tree with the attributes that matter here
 * (queue position, fencing token, outcome, status).
 *
 * Run it (a server on 127.0.0.1:2181, or set ZK_CONNECT):
 *   npm run zk -- start
 *   npm run build
 *   node examples/dist/otel-lock-handoff.js
 * It exits with 0 when the second worker's fencing token is above the first's, 1 otherwise.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, ConsoleSpanExporter, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { ZooKeeper } from '@zk/protocol';
import { Mutex, type Lease } from '@zk/locks';
import { ZooKeeperInstrumentation } from '@zk/otel';

// The SDK first (a context manager, so `startActiveSpan` parents what runs inside it), then the
// instrumentation, which records through the global tracer provider.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const recorded = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ConsoleSpanExporter()), new SimpleSpanProcessor(recorded)] });
trace.setGlobalTracerProvider(provider);
const instrumentation = new ZooKeeperInstrumentation({ ignoreOperations: ['exists'] });

const connect = process.env.ZK_CONNECT ?? '127.0.0.1:2181';
const tracer = trace.getTracer('otel-lock-handoff');
const [a, b] = await Promise.all([ZooKeeper.connect(connect), ZooKeeper.connect(connect)]);

/** One worker's job: take the lock, do the work, let it go. */
function job(name: string, zk: ZooKeeper, work: (lease: Lease) => Promise<void>): Promise<bigint> {
  return tracer.startActiveSpan(`job ${name}`, async (span) => {
    try {
      const lease = await new Mutex(zk, '/examples/otel/lock').acquire({ timeout: 10_000 });
      await work(lease);
      await lease.release();
      return lease.fencingToken;
    } finally {
      span.end();
    }
  });
}

let releaseA!: () => void;
const aMayRelease = new Promise<void>((resolve) => (releaseA = resolve));
let aHolds!: () => void;
const aHeld = new Promise<void>((resolve) => (aHolds = resolve));
const first = job('worker-a', a, async () => {
  aHolds();
  await aMayRelease;
});
await aHeld;
const second = job('worker-b', b, async () => undefined);
// worker-b is queued once its lock node is the second child; then worker-a lets go.
while ((await a.getChildren('/examples/otel/lock')).length < 2) await new Promise((r) => setTimeout(r, 10));
releaseA();
const tokens = await Promise.all([first, second]);
await Promise.all([a.close(), b.close()]);
instrumentation.disable();

/** The spans as a tree, children in start order, with the attributes of a lock hand-off. */
function tree(spans: ReadableSpan[]): string[] {
  const byParent = new Map<string | undefined, ReadableSpan[]>();
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  for (const s of spans) {
    const parent = s.parentSpanContext?.spanId;
    const key = parent !== undefined && ids.has(parent) ? parent : undefined;
    byParent.set(key, [...(byParent.get(key) ?? []), s]);
  }
  const t0 = Math.min(...spans.map((s) => s.startTime[0] * 1e3 + s.startTime[1] / 1e6));
  const ms = (t: [number, number]) => t[0] * 1e3 + t[1] / 1e6;
  const shown = ['zookeeper.lock.position', 'zookeeper.lock.fencing_token', 'zookeeper.lock.outcome', 'db.response.status_code'];
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    for (const s of (byParent.get(parent) ?? []).sort((x, y) => ms(x.startTime) - ms(y.startTime))) {
      const attrs = shown.filter((k) => s.attributes[k] !== undefined).map((k) => `${k.replace(/^.*\./, '')}=${String(s.attributes[k])}`);
      if (s.links.length > 0) attrs.push(`links=${s.links.length}`);
      if (s.status.code === 2) attrs.push('ERROR');
      const at = `+${(ms(s.startTime) - t0).toFixed(0)}ms`.padStart(7);
      const took = `${(ms(s.duration) as number).toFixed(1)}ms`.padStart(8);
      lines.push(`${at} ${took}  ${'  '.repeat(depth)}${s.name}${attrs.length > 0 ? `  [${attrs.join(' ')}]` : ''}`);
      walk(s.spanContext().spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines;
}

console.log('\nThe lock hand-off as a trace (start, duration, span):');
for (const line of tree(recorded.getFinishedSpans())) console.log(line);
console.log(`\nfencing tokens: worker-a ${tokens[0]}, worker-b ${tokens[1]}`);
await provider.shutdown();
process.exit(tokens[1]! > tokens[0]! ? 0 : 1);
