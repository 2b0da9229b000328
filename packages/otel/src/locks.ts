/**
 * Spans and metrics for the recipes' channels: a span per lock, permit or leadership wait
 * (`zk:lock:acquire`, named `lock.acquire {kind} {path summary}`), a span per hold
 * (`zk:lock:hold` start..end, linked to its wait), the loss of a hold as an event with ERROR status
 * (`zk:lock:lost`), a revocation request as an event on the hold (`zk:lock:revoke`), leadership
 * changes, and the wait, hold, loss and leadership metrics.
 */
import { context as otelContext, SpanKind, SpanStatusCode, trace, type Link, type Span } from '@opentelemetry/api';
import { ZooKeeperAttributes as A } from './attributes.js';
import { errorMessage, errorName, sessionHex, type AcquireContext, type HoldMessage, type LeadershipMessage, type LostMessage, type RevokeMessage } from './channels.js';
import { defined } from './metrics.js';
import { mayStart, parentContext, type Runtime, type Scope } from './options.js';
import { failSpan, scopeOf, spanHandlers, type TracingHandlers } from './requests.js';
import { summarizePath } from './summary.js';

/** A lock path's summary; a MultiLock's comma-separated paths each summarized. */
function lockSummary(path: string): string {
  return path.split(',').map(summarizePath).join(',');
}

/** A failed wait's outcome, from its error's class. */
function outcomeOf(error: unknown): string {
  switch (errorName(error)) {
    case 'LockTimeoutError':
    case 'QueueTimeoutError':
      return 'timeout';
    case 'LockAbortedError':
    case 'QueueAbortedError':
      return 'aborted';
    case 'LeaseLostError':
      return 'lost';
    default:
      return 'error';
  }
}

/** One wait in progress. */
interface Wait {
  readonly started: number;
  readonly span: Span | undefined;
}

/** One hold in progress. */
interface Hold {
  readonly span: Span;
  readonly sessionId: bigint;
  lost: boolean;
}

/** The recipes' handlers, and the open hold spans (for session state events). */
export function lockHandlers(rt: Runtime): {
  acquire: TracingHandlers<AcquireContext>;
  enter(ctx: AcquireContext): Scope | undefined;
  hold(message: HoldMessage): void;
  lost(message: LostMessage): void;
  revoke(message: RevokeMessage): void;
  leadership(message: LeadershipMessage): void;
  holdsOf(sessionId: bigint): Span[];
} {
  const waits = new WeakMap<object, Wait>();
  const holds = new Map<string, Hold>();
  const keyOf = (m: { sessionId: bigint; node: string }) => `${m.sessionId.toString(16)}:${m.node}`;

  const open = (ctx: AcquireContext): Wait => {
    const known = waits.get(ctx);
    if (known !== undefined) return known;
    const parent = parentContext(rt);
    const span = mayStart(rt, parent)
      ? rt.tracer.startSpan(
          `lock.acquire ${ctx.kind} ${lockSummary(ctx.path)}`,
          {
            kind: SpanKind.INTERNAL,
            attributes: defined({
              [A.DB_SYSTEM_NAME]: 'zookeeper',
              [A.LOCK_KIND]: ctx.kind,
              [A.LOCK_PATH]: ctx.path,
              [A.LOCK_TIMEOUT]: ctx.timeout,
              [A.SESSION_ID]: sessionHex(ctx.sessionId),
            }),
          },
          parent,
        )
      : undefined;
    const wait = { started: performance.now(), span };
    waits.set(ctx, wait);
    return wait;
  };

  const finish = (ctx: AcquireContext): void => {
    const wait = waits.get(ctx);
    if (wait === undefined) return;
    waits.delete(ctx);
    const failed = ctx.error !== undefined;
    const outcome = failed ? outcomeOf(ctx.error) : 'acquired';
    // A try (timeout 0) that finds the lock taken has an answer, not a failure.
    const isError = failed && !(outcome === 'timeout' && ctx.timeout === 0);
    rt.instruments.lockWait.record((performance.now() - wait.started) / 1000, defined({ [A.LOCK_KIND]: ctx.kind, [A.LOCK_OUTCOME]: outcome, [A.ERROR_TYPE]: isError ? errorName(ctx.error) : undefined }));
    const span = wait.span;
    if (span === undefined) return;
    span.setAttributes(
      defined({
        [A.LOCK_OUTCOME]: outcome,
        [A.LOCK_POSITION]: ctx.position,
        [A.LOCK_NODE]: ctx.node,
        [A.LOCK_FENCING_TOKEN]: ctx.fencingToken?.toString(),
        [A.ERROR_TYPE]: isError ? errorName(ctx.error) : undefined,
      }),
    );
    if (isError) failSpan(span, ctx.error);
    span.end();
  };

  return {
    acquire: spanHandlers(open, finish),
    enter: (ctx) => scopeOf(rt, open(ctx).span),
    hold(m) {
      const key = keyOf(m);
      if (m.event === 'start') {
        const scope = rt.scope.getStore();
        // The hold follows its wait: a sibling of the wait's span (under the caller's parent), linked to it.
        const parent = scope?.outer ?? otelContext.active();
        if (!mayStart(rt, parent)) return;
        const links: Link[] = scope !== undefined ? [{ context: scope.span.spanContext() }] : [];
        const span = rt.tracer.startSpan(
          `lock.hold ${m.kind} ${lockSummary(m.path)}`,
          {
            kind: SpanKind.INTERNAL,
            links,
            attributes: defined({
              [A.DB_SYSTEM_NAME]: 'zookeeper',
              [A.LOCK_KIND]: m.kind,
              [A.LOCK_PATH]: m.path,
              [A.LOCK_NODE]: m.node,
              [A.LOCK_FENCING_TOKEN]: m.fencingToken.toString(),
              [A.SESSION_ID]: sessionHex(m.sessionId),
            }),
          },
          parent,
        );
        holds.set(key, { span, sessionId: m.sessionId, lost: false });
        return;
      }
      const lost = m.lost === true;
      if (m.heldMs !== undefined) rt.instruments.lockHold.record(m.heldMs / 1000, { [A.LOCK_KIND]: m.kind, [A.LOCK_LOST]: lost });
      const hold = holds.get(key);
      if (hold === undefined) return;
      holds.delete(key);
      hold.span.setAttributes(defined({ [A.LOCK_HELD_MS]: m.heldMs, [A.LOCK_LOST]: lost }));
      if (lost && !hold.lost) hold.span.setStatus({ code: SpanStatusCode.ERROR, message: 'hold lost before release' });
      hold.span.end();
    },
    lost(m) {
      rt.instruments.leasesLost.add(1, { [A.LOCK_KIND]: m.kind });
      const hold = holds.get(keyOf(m));
      const span = hold?.span ?? trace.getActiveSpan();
      if (span === undefined) return;
      span.addEvent('zookeeper.lock.lost', {
        [A.LOCK_KIND]: m.kind,
        [A.LOCK_NODE]: m.node,
        [A.LOCK_FENCING_TOKEN]: m.fencingToken.toString(),
        [A.LOCK_HELD_MS]: m.heldMs,
        [A.ERROR_TYPE]: errorName(m.reason),
        'exception.message': errorMessage(m.reason),
      });
      if (hold !== undefined) {
        hold.lost = true;
        hold.span.setStatus({ code: SpanStatusCode.ERROR, message: `lease lost: ${errorMessage(m.reason)}` });
      }
    },
    revoke(m) {
      holds.get(keyOf(m))?.span.addEvent('zookeeper.lock.revoke', { [A.LOCK_NODE]: m.node, [A.LOCK_FENCING_TOKEN]: m.fencingToken.toString() });
    },
    leadership(m) {
      rt.instruments.leadership.add(1, { [A.LOCK_KIND]: m.kind, [A.LEADER]: m.isLeader });
      trace.getActiveSpan()?.addEvent('zookeeper.leadership', defined({ [A.LOCK_KIND]: m.kind, [A.LEADER]: m.isLeader, [A.LOCK_PATH]: m.path, [A.LOCK_FENCING_TOKEN]: m.fencingToken?.toString() }));
    },
    holdsOf(sessionId) {
      const spans: Span[] = [];
      for (const h of holds.values()) if (h.sessionId === sessionId) spans.push(h.span);
      return spans;
    },
  };
}
