import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { keytabKeys, passwordKeys } from './credential.js';
import { CrossRealmError, KerberosError, PreauthFailedError, PrincipalUnknownError } from './errors.js';
import { krbErrorToException, KrbErrorCode } from './kdc-errors.js';
import { EncryptionKey } from './keys.js';
import type { KrbError } from './messages.js';
import { parsePrincipal } from './principal.js';

const PASSWORD = 'pw-not-to-print';
const KEY = Buffer.alloc(32, 0x5a);

function krbError(code: number, text?: string): KrbError {
  return { code, serverTime: new Date(0), realm: 'OTHER.TEST', sname: undefined, text, data: undefined };
}

const carol = parsePrincipal('carol@OTHER.TEST');
const local = parsePrincipal('zookeeper/localhost@OTHER.TEST');
const foreign = parsePrincipal('zookeeper/localhost@ZK.TEST');

describe('kerberos - KDC errors as typed errors', () => {
  for (const [code, text] of [
    [KrbErrorCode.KRB_ERR_GENERIC, 'GET_LOCAL_TGT'],
    [KrbErrorCode.KDC_ERR_S_PRINCIPAL_UNKNOWN, undefined],
    [KrbErrorCode.KDC_ERR_WRONG_REALM, undefined],
  ] as const) {
    it(`kdc-errors - error ${code} for a service of another realm is CrossRealmError naming the service and both realms`, () => {
      const err = krbErrorToException(krbError(code, text), { client: carol, server: foreign });
      expect(err).toBeInstanceOf(CrossRealmError);
      expect(err.code).toBe(code);
      expect(err.message).toMatch(/^the KDC of realm OTHER.TEST gives carol@OTHER.TEST no ticket for zookeeper\/localhost@ZK.TEST .*the service is in realm ZK.TEST, and this client follows no cross-realm path \(krbtgt\/ZK.TEST@OTHER.TEST\), trusted or not; use a principal of realm ZK.TEST/);
    });
  }

  it('kdc-errors - control: the same errors in the client’s own realm keep their meaning', () => {
    expect(krbErrorToException(krbError(KrbErrorCode.KDC_ERR_S_PRINCIPAL_UNKNOWN), { client: carol, server: local })).toBeInstanceOf(PrincipalUnknownError);
    const generic = krbErrorToException(krbError(KrbErrorCode.KRB_ERR_GENERIC, 'x'), { client: carol, server: local });
    expect(generic).not.toBeInstanceOf(CrossRealmError);
    expect(generic).toBeInstanceOf(KerberosError);
    // Another realm, but a failure that says something else (skew): not a realm error.
    expect(krbErrorToException(krbError(KrbErrorCode.KRB_AP_ERR_SKEW), { client: carol, server: foreign })).not.toBeInstanceOf(CrossRealmError);
  });

  it('kdc-errors - PREAUTH_FAILED names what to check: the password, or the keytab’s kvno (klist -kt against kadmin getprinc), without a secret', () => {
    const withPassword = krbErrorToException(krbError(KrbErrorCode.KDC_ERR_PREAUTH_FAILED), { client: carol, server: local, keys: passwordKeys(PASSWORD, carol) });
    expect(withPassword).toBeInstanceOf(PreauthFailedError);
    expect(withPassword.message).toBe('pre-authentication failed for carol@OTHER.TEST: wrong password');
    const keys = keytabKeys([new EncryptionKey(18, KEY)], '/etc/carol.keytab');
    const withKeytab = krbErrorToException(krbError(KrbErrorCode.KDC_ERR_PREAUTH_FAILED), { client: carol, server: local, keys });
    expect(withKeytab).toBeInstanceOf(PreauthFailedError);
    expect(withKeytab.message).toMatch(/the keytab \/etc\/carol.keytab does not hold the current keys of carol@OTHER.TEST .*compare the kvno of `klist -kt` on it with `kadmin getprinc carol@OTHER.TEST`/);
    for (const shown of [withPassword.message, withKeytab.message, inspect(withPassword), inspect(withKeytab), inspect(keys)]) {
      expect(shown).not.toContain(PASSWORD);
      expect(shown).not.toContain(KEY.toString('hex'));
    }
  });
});
