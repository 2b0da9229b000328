/**
 * The instruments, made from one meter. Every recording goes through here, so the instruments
 * are replaced in one place when the meter provider changes.
 */
import type { Attributes, Counter, Histogram, Meter, ObservableUpDownCounter, UpDownCounter } from '@opentelemetry/api';
import { ZooKeeperMetrics as M } from './attributes.js';

/**
 * @internal Bucket boundaries (seconds) of `db.client.operation.duration`: the ones the database
 * client metrics conventions advise for it, so that its series aggregate with other databases'.
 */
export const OPERATION_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10];
/** Lock waits and holds last longer: 1 ms to 10 min. */
const LOCK_BUCKETS = [0.001, 0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 600];

/** @internal The instruments of one meter. */
export class Instruments {
  readonly duration: Histogram;
  readonly sessions: UpDownCounter;
  /** Observed at collection (the requests in flight), not counted per request: nothing per request. */
  readonly outstanding: ObservableUpDownCounter;
  readonly reconnects: Counter;
  readonly watchEvents: Counter;
  readonly lockWait: Histogram;
  readonly lockHold: Histogram;
  readonly leasesLost: Counter;
  readonly leadership: Counter;

  constructor(meter: Meter) {
    this.duration = meter.createHistogram(M.OPERATION_DURATION, {
      description: 'Duration of ZooKeeper client operations.',
      unit: 's',
      advice: { explicitBucketBoundaries: OPERATION_BUCKETS },
    });
    this.sessions = meter.createUpDownCounter(M.SESSIONS, { description: 'ZooKeeper sessions in each state.', unit: '{session}' });
    this.outstanding = meter.createObservableUpDownCounter(M.OUTSTANDING, { description: 'ZooKeeper requests sent and not yet answered.', unit: '{request}' });
    this.reconnects = meter.createCounter(M.RECONNECTS, { description: 'Sessions connected again after a disconnection.', unit: '{reconnect}' });
    this.watchEvents = meter.createCounter(M.WATCH_EVENTS, { description: 'Watch notifications received.', unit: '{event}' });
    this.lockWait = meter.createHistogram(M.LOCK_WAIT, {
      description: 'Time spent waiting for a lock, permit or leadership.',
      unit: 's',
      advice: { explicitBucketBoundaries: LOCK_BUCKETS },
    });
    this.lockHold = meter.createHistogram(M.LOCK_HOLD, {
      description: 'Time a lock or permit was held.',
      unit: 's',
      advice: { explicitBucketBoundaries: LOCK_BUCKETS },
    });
    this.leasesLost = meter.createCounter(M.LEASES_LOST, { description: 'Holds lost or put at risk before release.', unit: '{lease}' });
    this.leadership = meter.createCounter(M.LEADERSHIP_CHANGES, { description: 'Leadership gained or lost.', unit: '{change}' });
  }
}

/** @internal Attributes without the undefined entries. */
export function defined(attrs: Record<string, string | number | boolean | undefined>): Attributes {
  // for...in, not Object.entries: no array of pairs per call (this runs twice per request).
  const out: Attributes = {};
  for (const k in attrs) {
    const v = attrs[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
}
