/**
 * TLS to the server's secure client port (a CA-verified server; a client certificate as PKCS12
 * `pfx` and as PEM `cert` + `key`) and SASL DIGEST-MD5 against the server's JAAS users.
 */
import assert from 'node:assert/strict';
import { AuthFailedError, ConnectionLossError, NoAuthError, Perm, ZooKeeper } from '@zk/protocol';

const CLIENT_CN = 'CN=zk-runtime-client';

/** A TLS client on the secure port, rooted at the check's namespace. */
function tlsClient(ctx, tls, options = {}) {
  const { connect, ca } = ctx.config.tls;
  return ZooKeeper.connect(`${connect}${ctx.base}`, { sessionTimeout: 10_000, tls: { ca, servername: 'localhost', ...tls }, ...options }).then((zk) => ctx.track(zk));
}

export const securityChecks = [
  {
    name: 'TLS: a CA-verified server; an untrusted one and a plain client refused',
    async run(ctx) {
      const zk = await tlsClient(ctx, {});
      await zk.create('/tls', 'secret');
      assert.equal((await zk.getData('/tls')).data.toString(), 'secret');
      assert.ok((await zk.whoAmI()).some((id) => id.authScheme === 'ip'));
      const untrusted = await tlsClient(ctx, { ca: ctx.config.tls.otherCa }, { connectTimeout: 5000 }).catch((err) => err);
      assert.ok(untrusted instanceof ConnectionLossError, `an untrusted server's certificate was accepted: ${untrusted}`);
      const plain = await ZooKeeper.connect(ctx.config.tls.connect, { connectTimeout: 1500 }).catch((err) => err);
      assert.ok(plain instanceof ConnectionLossError, `a plain client got a session on the TLS port: ${plain}`);
    },
  },
  {
    name: "TLS client certificate: keytool's PKCS12 pfx (alias zk-runtime-client)",
    async run(ctx) {
      const { pfx, passphrase } = ctx.config.tls;
      const zk = await tlsClient(ctx, { pfx: Buffer.from(pfx, 'base64'), passphrase }, { connectTimeout: 5000 });
      assert.ok((await zk.whoAmI()).some((id) => id.authScheme === 'x509' && id.user === CLIENT_CN), JSON.stringify(await zk.whoAmI()));
    },
  },
  {
    name: 'TLS client certificate: PEM cert and key; a PKCS12 pfx without a friendlyName',
    async run(ctx) {
      const { cert, key, plainPfx, passphrase } = ctx.config.tls;
      for (const tls of [{ cert, key }, { pfx: Buffer.from(plainPfx, 'base64'), passphrase }]) {
        const zk = await tlsClient(ctx, tls);
        assert.ok((await zk.whoAmI()).some((id) => id.authScheme === 'x509' && id.user === CLIENT_CN), JSON.stringify(await zk.whoAmI()));
      }
    },
  },
  {
    name: 'SASL DIGEST-MD5: identified, a sasl ACL enforced, a wrong password refused',
    async run(ctx) {
      const sasl = (username, password) => ({ sasl: { mechanism: 'DIGEST-MD5', username, password } });
      const bob = await ctx.client(sasl('bob', ctx.config.sasl.bob));
      assert.ok((await bob.whoAmI()).some((id) => id.authScheme === 'sasl' && id.user === 'bob'));
      await bob.create('/mine', 'bob', { acl: [{ perms: Perm.ALL, id: { scheme: 'sasl', id: 'bob' } }] });
      assert.equal((await bob.getData('/mine')).data.toString(), 'bob');
      const ann = await ctx.client(sasl('ann', ctx.config.sasl.ann));
      await assert.rejects(ann.getData('/mine'), NoAuthError);
      await assert.rejects(ctx.client(sasl('bob', 'wrong')), AuthFailedError);
      // Over TLS as well: SASL inside the encrypted stream.
      const both = await tlsClient(ctx, {}, sasl('bob', ctx.config.sasl.bob));
      assert.equal((await both.getData('/mine')).data.toString(), 'bob');
      await bob.delete('/mine');
    },
  },
];
