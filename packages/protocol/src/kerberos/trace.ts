/**
 * The Kerberos steps on the `zk:kerberos` diagnostics channel and in `NODE_DEBUG=zk` lines: each
 * AS exchange (a TGT from a keytab or password), ccache read, renewal and TGS exchange (a service
 * ticket), when it settles. Only names, times, enctype numbers and the error's name and message
 * (which never hold a secret: errors.ts); never a key, a password, a ticket or an authenticator.
 * The payload is built only when someone listens.
 */
import { channel } from 'node:diagnostics_channel';
import { debuglog } from 'node:util';
import type { Credential } from './credential.js';
import { principalText, type Principal } from './principal.js';

/**
 * Payload of `zk:kerberos`: one Kerberos step of a client's login, settled.
 * - `as`: a TGT got with the keytab or password; `ccache`: the TGT taken from a kinit ccache;
 *   `renew`: the TGT renewed at the KDC (ccache-only clients); `tgs`: a service ticket.
 */
export interface KerberosMessage {
  readonly step: 'as' | 'ccache' | 'renew' | 'tgs';
  /** The client principal (`name@REALM`). */
  readonly client: string;
  /** The principal asked for: `krbtgt/REALM@REALM`, or the service's (`zookeeper/host@REALM`). */
  readonly server: string;
  /** True when it gave a ticket. */
  readonly ok: boolean;
  readonly durationMs: number;
  /** The ticket's end and renewable end, and its session key's enctype, when `ok`. */
  readonly endtime?: Date | undefined;
  readonly renewTill?: Date | undefined;
  readonly enctype?: number | undefined;
  /** When not `ok`: the error's name and message (`PreauthFailedError: pre-authentication failed for ...`). */
  readonly error?: string | undefined;
}

// ChannelName.kerberos (diagnostics.ts); the name is repeated here because this folder imports only its own files.
const kerberosChannel = channel('zk:kerberos');
/** The `NODE_DEBUG=zk` section of diagnostics.ts (this folder imports only built-ins and its own files). */
const debug = debuglog('zk');
const debugEnabled = debug.enabled;

/** Runs one step and publishes how it settled (then passes its result or error on unchanged). */
export async function traceStep(step: KerberosMessage['step'], client: Principal, server: Principal, run: () => Promise<Credential>): Promise<Credential> {
  const listening = kerberosChannel.hasSubscribers || debugEnabled;
  const started = listening ? performance.now() : 0;
  try {
    const cred = await run();
    if (listening) settle({ step, client: principalText(client), server: principalText(server), ok: true, durationMs: performance.now() - started, endtime: cred.times.endtime, renewTill: cred.times.renewTill, enctype: cred.sessionKey().enctype });
    return cred;
  } catch (err) {
    if (listening) settle({ step, client: principalText(client), server: principalText(server), ok: false, durationMs: performance.now() - started, error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) });
    throw err;
  }
}

function settle(message: KerberosMessage): void {
  if (debugEnabled) {
    const outcome = message.ok ? `ok, until ${message.endtime?.toISOString()}${message.renewTill ? `, renewable until ${message.renewTill.toISOString()}` : ''}` : message.error;
    debug('kerberos %s %s for %s: %s (%d ms)', message.step, message.client, message.server, outcome, Math.round(message.durationMs));
  }
  if (kerberosChannel.hasSubscribers) kerberosChannel.publish(message);
}
