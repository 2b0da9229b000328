// A Node process that instruments itself with @zk/otel and takes a Mutex once, for
// locks.test.ts's hand-off between two processes. Plain ESM on the built packages (the test
// command runs `tsc -b` first), so it needs no TypeScript loader.
//   node lock-participant.mjs connectString lockPath
// Prints {"held":"<fencing token>"} once it holds the lock, releases it when a line arrives on
// stdin, closes its client, then prints one {"span":{...}} line per span it recorded.
import { createInterface } from 'node:readline';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ZooKeeper } from '@zk/protocol';
import { Mutex } from '@zk/locks';
import { ZooKeeperInstrumentation } from '@zk/otel';

const [connect, lockPath] = process.argv.slice(2);
if (!connect || !lockPath) throw new Error('usage: lock-participant.mjs connectString lockPath');

context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
trace.setGlobalTracerProvider(provider);
const instrumentation = new ZooKeeperInstrumentation();

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000 });
await provider.getTracer('participant').startActiveSpan('job', async (job) => {
  const lease = await new Mutex(zk, lockPath).acquire({ timeout: 20_000 });
  console.log(JSON.stringify({ held: lease.fencingToken.toString() }));
  await lines.next();
  await lease.release();
  job.end();
});
await zk.close();
instrumentation.disable();
for (const s of exporter.getFinishedSpans()) {
  const span = {
    name: s.name,
    kind: s.kind,
    spanId: s.spanContext().spanId,
    traceId: s.spanContext().traceId,
    parentSpanId: s.parentSpanContext?.spanId,
    attributes: s.attributes,
    status: s.status,
    events: s.events.map((e) => e.name),
    links: s.links.map((l) => l.context.spanId),
  };
  console.log(JSON.stringify({ span }));
}
process.exit(0);
