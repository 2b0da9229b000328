import { channel } from 'node:diagnostics_channel';
import { describe, expect, it } from 'vitest';
import { ChannelName, type KerberosMessage } from '@zk/protocol';
import { kerberosSteps, perConnect } from './kerberos-steps.js';

const kerberos = channel(ChannelName.kerberos);
const step = (s: KerberosMessage['step'], durationMs: number): KerberosMessage => ({ step: s, client: 'bench@ZK.TEST', server: s === 'tgs' ? 'zookeeper/localhost@ZK.TEST' : 'krbtgt/ZK.TEST@ZK.TEST', ok: true, durationMs });

describe('bench kerberos-steps', () => {
  it('kerberos-steps - perConnect divides each step and the KDC time by the connects', () => {
    expect(perConnect({ as: 4, ccache: 0, renew: 0, tgs: 8 }, 20, 4)).toEqual({ asPerConnect: 1, ccachePerConnect: 0, renewPerConnect: 0, tgsPerConnect: 2, kdcMsPerConnect: 5 });
    expect(perConnect({ as: 1, ccache: 0, renew: 0, tgs: 10 }, 3, 10)).toEqual({ asPerConnect: 0.1, ccachePerConnect: 0, renewPerConnect: 0, tgsPerConnect: 1, kdcMsPerConnect: 0.3 });
  });

  it('kerberos-steps - perConnect refuses a repetition of no connects (no figure from a division by zero)', () => {
    expect(() => perConnect({ as: 0, ccache: 0, renew: 0, tgs: 0 }, 0, 0)).toThrow(RangeError);
    expect(() => perConnect({ as: 0, ccache: 0, renew: 0, tgs: 0 }, 0, Number.NaN)).toThrow(RangeError);
  });

  it('kerberos-steps - counts what is published while the repetition runs, and nothing after it; the sample and its metrics are kept', async () => {
    const rep = kerberosSteps(async () => {
      kerberos.publish(step('as', 3));
      kerberos.publish(step('tgs', 1));
      kerberos.publish(step('ccache', 0.5));
      kerberos.publish(step('tgs', 1.5));
      return { ops: 2, seconds: 1, latenciesUs: [10, 20], cpuUs: 5, metrics: { other: 7 } };
    });
    const sample = await rep(false);
    // The control: published once the repetition is over, not counted by it (the channel is left).
    kerberos.publish(step('as', 100));
    expect(kerberos.hasSubscribers).toBe(false);
    expect(sample).toMatchObject({ ops: 2, seconds: 1, latenciesUs: [10, 20], cpuUs: 5 });
    expect(sample.metrics).toEqual({ other: 7, asPerConnect: 0.5, ccachePerConnect: 0.5, renewPerConnect: 0, tgsPerConnect: 1, kdcMsPerConnect: 3 });
  });

  it('kerberos-steps - leaves the channel when the repetition fails', async () => {
    const rep = kerberosSteps(() => Promise.reject(new Error('connect failed')));
    await expect(rep(true)).rejects.toThrow('connect failed');
    expect(kerberos.hasSubscribers).toBe(false);
  });
});
