/**
 * kerberos: a lock on a Kerberized ensemble, its nodes owned by the Kerberos identity.
 *
 * The client logs in as a principal from its keytab (Kerberos in TypeScript on node:crypto: no
 * kinit, no native library), gets a ticket for the server's principal
 * (`zookeeper/<server host>@REALM`) and authenticates with SASL GSSAPI on every connection. The
 * lock's nodes are created with CREATOR_ALL_ACL, which the server stores as
 * `sasl:<principal@REALM>` with every right: another principal, or a session without
 * credentials, cannot read, delete or queue on them.
 *
 * Run it (a Kerberized server, a keytab for your principal, the realm's krb5.conf):
 *   ZK_CONNECT=zk1.example.com:2181 ZK_KRB5_PRINCIPAL=deploy@EXAMPLE.COM \
 *   ZK_KRB5_KEYTAB=/etc/security/keytabs/deploy.keytab KRB5_CONFIG=/etc/krb5.conf \
 *   node examples/dist/kerberos.js
 * Output: the session's identities (`sasl:deploy@EXAMPLE.COM` among them) and the fencing token it
 * held. A failed login (a keytab without the principal's key, a stale key, no KDC answering) fails
 * the connect with a typed KerberosError as the cause (PreauthFailedError, KdcUnreachableError,
 * ...): exit code 1, and no key material in what is printed.
 * test/integration/kerberos/example.test.ts runs it against a private MIT KDC and a Kerberized
 * ZooKeeper. The code below is also the Kerberos example of packages/protocol/README.md.
 */
import { CREATOR_ALL_ACL, ZooKeeper } from '@zk/protocol';
import { Mutex } from '@zk/locks';

// The principal and its keytab, from the environment as zk-lock takes them (never the command
// line). The realm's KDCs come from krb5.conf: KRB5_CONFIG, else /etc/krb5.conf.
const { ZK_KRB5_PRINCIPAL: principal, ZK_KRB5_KEYTAB: keytab } = process.env;
if (!principal || !keytab) throw new Error('set ZK_KRB5_PRINCIPAL (name@REALM) and ZK_KRB5_KEYTAB (a keytab holding its keys)');

await using zk = await ZooKeeper.connect(process.env.ZK_CONNECT ?? '127.0.0.1:2181', {
  sasl: { mechanism: 'GSSAPI', principal, keytab },
  sessionTimeout: 10_000,
});
const identities = await zk.whoAmI(); // e.g. [{ authScheme: 'sasl', user: 'deploy@EXAMPLE.COM' }, { authScheme: 'ip', ... }]
console.log(`connected as ${identities.map((id) => `${id.authScheme}:${id.user}`).join(', ')}`);

// CREATOR_ALL_ACL: the lock node and the parents the lock creates are sasl:<principal@REALM>'s alone.
const mutex = new Mutex(zk, '/kerberos-example/deploy/lock', { acl: CREATOR_ALL_ACL });
{
  await using lease = await mutex.acquire({ timeout: 10_000 });
  console.log(`holding the lock with fencing token ${lease.fencingToken}`);
}
console.log('released');
// The client closes as its `await using` scope ends.
