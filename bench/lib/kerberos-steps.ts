/**
 * Our client's Kerberos steps during a bench repetition, counted on the `zk:kerberos` diagnostics
 * channel: how many AS exchanges, ccache reads, renewals and TGS exchanges a connect made, and the
 * time spent in them.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { ChannelName, type KerberosMessage } from '@zk/protocol';
import type { Repetition } from './bench.js';
import type { Sample } from './stats.js';

/**
 * `rep` with our client's Kerberos steps counted while it runs (payloads are built only while
 * someone listens: a few object literals per connect, against milliseconds), added to its
 * metrics by {@link perConnect}.
 */
export function kerberosSteps(rep: Repetition): Repetition {
  return async (w) => {
    const steps = { as: 0, ccache: 0, renew: 0, tgs: 0 };
    let ms = 0;
    const onMessage = (m: unknown) => {
      const message = m as KerberosMessage;
      steps[message.step]++;
      ms += message.durationMs;
    };
    subscribe(ChannelName.kerberos, onMessage);
    let sample: Sample;
    try {
      sample = await rep(w);
    } finally {
      unsubscribe(ChannelName.kerberos, onMessage);
    }
    return { ...sample, metrics: { ...sample.metrics, ...perConnect(steps, ms, sample.ops) } };
  };
}

/**
 * The Kerberos steps of a repetition of `ops` connects, per connect: `asPerConnect`,
 * `ccachePerConnect`, `renewPerConnect`, `tgsPerConnect`, and `kdcMsPerConnect` (the time in
 * those steps: the KDC's round trips, and for a password the string-to-key).
 */
export function perConnect(steps: Readonly<Record<KerberosMessage['step'], number>>, kdcMs: number, ops: number): Record<string, number> {
  if (!(ops > 0)) throw new RangeError(`perConnect: ${ops} connects (at least one needed)`);
  return { asPerConnect: steps.as / ops, ccachePerConnect: steps.ccache / ops, renewPerConnect: steps.renew / ops, tgsPerConnect: steps.tgs / ops, kdcMsPerConnect: kdcMs / ops };
}
