/**
 * The secrets the exchanges hold, in classes that never print them: a Credential (a ticket and
 * its session key, RFC 4120 §3.1.3's "credentials") and a client's long-term keys (from a password
 * through string-to-key, or a keytab's entries). inspect, JSON and String show names and times only.
 */
import { inspect } from 'node:util';
import { isSupported, stringToKey } from './crypto.js';
import { REDACTED_TEXT, type EncryptionKey } from './keys.js';
import type { TicketInfo } from './messages.js';
import { defaultSalt, principalText, type Principal } from './principal.js';

/** A service ticket or TGT with its session key. */
export class Credential {
  readonly #ticket: TicketInfo;
  readonly #sessionKey: EncryptionKey;

  constructor(
    readonly client: Principal,
    readonly server: Principal,
    ticket: TicketInfo,
    sessionKey: EncryptionKey,
    readonly times: { readonly authtime: Date; readonly starttime: Date | undefined; readonly endtime: Date; readonly renewTill: Date | undefined },
    /** TicketFlags as a uint32 (bit 0 most significant). */
    readonly flags: number,
  ) {
    this.#ticket = ticket;
    this.#sessionKey = sessionKey;
  }

  /** The Ticket as the KDC encoded it, to put in an AP-REQ unchanged. */
  ticket(): TicketInfo {
    return this.#ticket;
  }

  sessionKey(): EncryptionKey {
    return this.#sessionKey;
  }

  /** True when the ticket ends within `marginMs` of `now`. */
  expiresWithin(marginMs: number, now: number = Date.now()): boolean {
    return this.times.endtime.getTime() - now <= marginMs;
  }

  toJSON(): Record<string, string> {
    return {
      client: principalText(this.client),
      server: principalText(this.server),
      endtime: this.times.endtime.toISOString(),
      ticket: REDACTED_TEXT,
      sessionKey: REDACTED_TEXT,
    };
  }

  toString(): string {
    return `Credential(${principalText(this.client)} → ${principalText(this.server)}, until ${this.times.endtime.toISOString()}, ticket and key ${REDACTED_TEXT})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/** A client's long-term keys: what the AS exchange decrypts its reply with. */
export interface LongTermKeys {
  /** The enctypes we can make a key for, in our preference order. */
  enctypes(preference: readonly number[]): number[];
  /** The key for `etype` with the KDC's salt and parameters (ETYPE-INFO2), or undefined. */
  key(etype: number, salt: string | undefined, s2kparams: Buffer | undefined): EncryptionKey | undefined;
  /** 'password' or 'keytab', for messages. */
  readonly source: 'password' | 'keytab';
  /** The keytab's path, for messages. */
  readonly file?: string | undefined;
}

/**
 * What to check when the KDC refuses the keys or its reply does not decrypt with them: the
 * password, or whether the keytab holds the principal's current keys (kvno). No secret.
 */
export function wrongKeysHint(keys: LongTermKeys, client: Principal): string {
  if (keys.source === 'password') return 'wrong password';
  const who = principalText(client);
  return `the keytab${keys.file === undefined ? '' : ` ${keys.file}`} does not hold the current keys of ${who} (a stale kvno after kadmin cpw -randkey or ktadd, or another principal's keys): compare the kvno of \`klist -kt\` on it with \`kadmin getprinc ${who}\``;
}

class PasswordKeys implements LongTermKeys {
  readonly source = 'password' as const;
  readonly #password: string;
  readonly #principal: Principal;
  constructor(password: string, principal: Principal) {
    this.#password = password;
    this.#principal = principal;
  }
  enctypes(preference: readonly number[]): number[] {
    return preference.filter(isSupported);
  }
  key(etype: number, salt: string | undefined, s2kparams: Buffer | undefined): EncryptionKey | undefined {
    if (!isSupported(etype)) return undefined;
    return stringToKey(etype, this.#password, salt ?? defaultSalt(this.#principal), s2kparams);
  }
  toString(): string {
    return `PasswordKeys(${principalText(this.#principal)}, ${REDACTED_TEXT})`;
  }
  toJSON(): string {
    return this.toString();
  }
  [inspect.custom](): string {
    return this.toString();
  }
}

class KeytabKeys implements LongTermKeys {
  readonly source = 'keytab' as const;
  readonly #keys: readonly EncryptionKey[];
  constructor(
    keys: readonly EncryptionKey[],
    readonly file: string | undefined,
  ) {
    this.#keys = keys;
  }
  enctypes(preference: readonly number[]): number[] {
    return preference.filter((e) => isSupported(e) && this.#keys.some((k) => k.enctype === e));
  }
  key(etype: number): EncryptionKey | undefined {
    return this.#keys.find((k) => k.enctype === etype);
  }
  toString(): string {
    return `KeytabKeys(enctypes ${this.#keys.map((k) => k.enctype).join(',')}, ${REDACTED_TEXT})`;
  }
  toJSON(): string {
    return this.toString();
  }
  [inspect.custom](): string {
    return this.toString();
  }
}

/** Keys made from a password with the principal's salt (or the salt the KDC names). */
export function passwordKeys(password: string, principal: Principal): LongTermKeys {
  return new PasswordKeys(password, principal);
}

/** Keys taken as they are (a keytab's entries for one principal, newest kvno); `file`, the keytab's path, names it in messages. */
export function keytabKeys(keys: readonly EncryptionKey[], file?: string): LongTermKeys {
  return new KeytabKeys(keys, file);
}
