/**
 * Principal names (RFC 4120 §5.2.2, §6.2): parsing `primary/instance@REALM` with RFC 1964's
 * escapes, printing, the DER PrincipalName record, and the default salt (realm then components).
 */
import { asGeneralString, asInteger, explicit, fields, generalString, integer, sequence, sequenceOf, type Tlv } from './der.js';

/** Name types (RFC 4120 §6.2). */
export const NameType = { UNKNOWN: 0, PRINCIPAL: 1, SRV_INST: 2, SRV_HST: 3 } as const;

/** A principal: its type, its components, its realm. */
export interface Principal {
  readonly nameType: number;
  readonly components: readonly string[];
  readonly realm: string;
}

/**
 * Parses `alice`, `alice@ZK.TEST` or `zookeeper/host@ZK.TEST` (`\/`, `\@` and `\\` escape); a
 * name without a realm gets `defaultRealm`. Two components make a service instance (NT-SRV-INST).
 */
export function parsePrincipal(text: string, defaultRealm?: string): Principal {
  const components: string[] = [];
  let current = '';
  let realm: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '\\' && i + 1 < text.length) {
      current += text[++i];
    } else if (c === '/' && realm === undefined) {
      components.push(current);
      current = '';
    } else if (c === '@' && realm === undefined) {
      components.push(current);
      current = '';
      realm = '';
    } else if (realm !== undefined) {
      realm += c;
    } else {
      current += c;
    }
  }
  if (realm === undefined) components.push(current);
  else realm = current + realm;
  const finalRealm = realm ?? defaultRealm;
  if (components.some((c) => c === '')) throw new RangeError(`principal name '${text}' has an empty component`);
  if (!finalRealm) throw new RangeError(`principal name '${text}' has no realm, and there is no default realm (set default_realm in krb5.conf, or give name@REALM)`);
  return { nameType: components.length === 2 ? NameType.SRV_INST : NameType.PRINCIPAL, components, realm: finalRealm };
}

const escape = (s: string) => s.replace(/[\\/@]/g, (c) => `\\${c}`);

/** `primary/instance@REALM`. */
export function principalText(p: Principal): string {
  return `${p.components.map(escape).join('/')}@${escape(p.realm)}`;
}

/** The ticket-granting service of a realm: krbtgt/REALM@REALM. */
export function tgsPrincipal(realm: string): Principal {
  return { nameType: NameType.SRV_INST, components: ['krbtgt', realm], realm };
}

/** The default salt (RFC 4120 §4): the realm, then each component, concatenated. */
export function defaultSalt(p: Principal): string {
  return p.realm + p.components.join('');
}

/** PrincipalName ::= SEQUENCE { name-type [0] Int32, name-string [1] SEQUENCE OF KerberosString } */
export function encodePrincipalName(p: Pick<Principal, 'nameType' | 'components'>): Buffer {
  return sequence([explicit(0, integer(p.nameType)), explicit(1, sequence(p.components.map(generalString)))]);
}

export function decodePrincipalName(t: Tlv, realm: string): Principal {
  const f = fields(t, 'PrincipalName');
  return {
    nameType: asInteger(f.required(0, 'name-type')),
    components: sequenceOf(f.required(1, 'name-string'), 'name-string').map((c) => asGeneralString(c)),
    realm,
  };
}

/** True when both name the same principal (the name type is not compared: RFC 4120 §6.2). */
export function samePrincipal(a: Principal, b: Principal): boolean {
  return a.realm === b.realm && a.components.length === b.components.length && a.components.every((c, i) => c === b.components[i]);
}
