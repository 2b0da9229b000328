/**
 * A program of the suite's Kerberos permission checks: connects with SASL GSSAPI from a keytab
 * (argv: connect string, principal, keytab path, krb5.conf path, and the `serviceHost` option
 * when given), prints the `sasl` identity
 * whoAmI shows. It reads no environment variable, so that on Deno its network and file grants
 * are all it needs.
 */
import { ZooKeeper } from '@zk/protocol';

const [connect, principal, keytab, krb5Conf, serviceHost] = process.argv.slice(2);
const sasl = { mechanism: 'GSSAPI', principal, keytab, krb5Conf, ...(serviceHost ? { serviceHost } : {}) };
const zk = await ZooKeeper.connect(connect, { sessionTimeout: 10_000, connectTimeout: 5000, sasl });
try {
  process.stdout.write(`${(await zk.whoAmI()).filter((id) => id.authScheme === 'sasl').map((id) => id.user).join(',')}\n`);
} finally {
  await zk.close();
}
