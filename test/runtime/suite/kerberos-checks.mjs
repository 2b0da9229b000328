/**
 * SASL GSSAPI (Kerberos 5) against the driver's Kerberized ZooKeeper and its private MIT KDC
 * (config.kerberos, see test/runtime/server.ts; no checks when the driver had no KDC). Everything
 * the package does in pure TypeScript on node:crypto runs here on the runtime's own node:crypto,
 * node:dgram and node:dns: each enctype's string-to-key (RFC 3962: PBKDF2-HMAC-SHA1; RFC 8009:
 * PBKDF2-HMAC-SHA256/384), key derivation, AES-CTS encryption and the HMACs, through a real AS and
 * TGS exchange, the AP-REQ and the SASL layer's Wrap tokens; then a keytab, a kinit ccache, whoAmI,
 * a sasl ACL and the typed error of a wrong password; last, a Kerberos program under Deno's
 * scoped permissions (limitations.ts) and with the KDC asked by TCP (udp_preference_limit = 1).
 */
import assert from 'node:assert/strict';
import { channel } from 'node:diagnostics_channel';
import { inspect } from 'node:util';
import { AuthFailedError, ChannelName, NoAuthError, Perm, PreauthFailedError, ZooKeeper } from '@zk/protocol';
import { explain, runOnRuntime } from './program-checks.mjs';

/** The four enctypes the package implements, strongest first. */
const ENCTYPES = [
  [20, 'aes256-cts-hmac-sha384-192', 'RFC 8009'],
  [19, 'aes128-cts-hmac-sha256-128', 'RFC 8009'],
  [18, 'aes256-cts-hmac-sha1-96', 'RFC 3962'],
  [17, 'aes128-cts-hmac-sha1-96', 'RFC 3962'],
];

/** A GSSAPI client of the Kerberized server (closed after the check). */
function krbClient(ctx, sasl) {
  const { connect, krb5Conf } = ctx.config.kerberos;
  return ZooKeeper.connect(connect, { sessionTimeout: 10_000, connectTimeout: 5000, sasl: { mechanism: 'GSSAPI', krb5Conf, ...sasl } }).then((zk) => ctx.track(zk));
}

/** Runs `fn`; resolves with its result and the zk:kerberos messages (KerberosMessage) published meanwhile. */
async function traced(fn) {
  const steps = [];
  const ch = channel(ChannelName.kerberos);
  const listen = (m) => steps.push(m);
  ch.subscribe(listen);
  try {
    return { result: await fn(), steps };
  } finally {
    ch.unsubscribe(listen);
  }
}

/** The `sasl` identities whoAmI lists. */
const saslIds = async (zk) => (await zk.whoAmI()).filter((id) => id.authScheme === 'sasl').map((id) => id.user);

/** The errors of `err`'s cause chain. */
function causes(err) {
  const out = [];
  for (let e = err; e instanceof Error && out.length < 8; e = e.cause) out.push(e);
  return out;
}

/**
 * Runs suite/krb-scoped.mjs (a keytab login, with `krb5Conf` and `serviceHost`) on the runtime; on Deno with only
 * the grants `net` (host:port pairs) and `read` (krb5.conf and the keytab), elsewhere as any program.
 */
function runScoped(ctx, net, krb5Conf, serviceHost) {
  const { connect, keytab } = ctx.config.kerberos;
  const [cmd] = ctx.config.run;
  const scoped = ctx.config.kind === 'deno' ? { ...ctx.config, run: [cmd, 'run', `--allow-net=${net.join(',')}`, `--allow-read=${krb5Conf},${keytab.file}`] } : ctx.config;
  return runOnRuntime(scoped, ['suite/krb-scoped.mjs', connect, keytab.principal, keytab.file, krb5Conf, ...(serviceHost ? [serviceHost] : [])], 20_000 * ctx.scale);
}

/**
 * A check running suite/krb-scoped.mjs granted the server's and the KDC's host:port and what
 * `more(address)` adds (`address`: the server's); with the krb5.conf that asks the KDC by TCP
 * first when `tcp`, and the `serviceHost` option when given.
 */
const scopedCheck = (name, more, { tcp = false, serviceHost } = {}) => ({
  name,
  async run(ctx) {
    const { connect, kdc, keytab, realm, krb5Conf, tcpKrb5Conf } = ctx.config.kerberos;
    const ran = await runScoped(ctx, [connect, kdc, ...more(connect.slice(0, connect.lastIndexOf(':')))], tcp ? tcpKrb5Conf : krb5Conf, serviceHost);
    assert.equal(ran.code, 0, explain('suite/krb-scoped.mjs', ran));
    assert.equal(ran.stdout.trim(), `${keytab.principal}@${realm}`);
  },
});

/**
 * Deno's limitation (limitations.ts): a program granted only the host:port pairs, then with the
 * UDP socket's grant but not the reverse lookup's, then with both (the README's workaround), then
 * the UDP grant and the service host named instead of the lookup's grant. Elsewhere they would be
 * the same program four times, so they run on Deno only; the udp_preference_limit check after
 * them runs everywhere.
 */
const denoScopedChecks = [
  scopedCheck("a Kerberos program allowed only the server's and the KDC's host:port (Deno: --allow-net=ZK,KDC --allow-read=krb5.conf,keytab)", () => []),
  scopedCheck("a Kerberos program allowed the server's and the KDC's host:port and 0.0.0.0:0 (Deno: not the server's address for its reverse lookup)", () => ['0.0.0.0:0']),
  scopedCheck("a Kerberos program with the README's grants for Deno: also 0.0.0.0:0 (the KDC over UDP) and the server's address with port 0 (its reverse lookup)", (address) => ['0.0.0.0:0', `${address}:0`]),
  scopedCheck("a Kerberos program naming the service host (serviceHost: 'localhost'), on Deno granted 0.0.0.0:0 but not the server's address with port 0", () => ['0.0.0.0:0'], { serviceHost: 'localhost' }),
];

/** The checks, none without config.kerberos. */
export function kerberosChecks(config) {
  if (!config.kerberos) return [];
  return [
    ...ENCTYPES.map(([n, name, rfc]) => ({
      name: `Kerberos ${name} (${rfc}): a password's string-to-key, AS and TGS exchanges, the SASL layer's Wrap tokens`,
      async run(ctx) {
        const { byEnctype, realm } = ctx.config.kerberos;
        const { principal, password } = byEnctype[n];
        // The principal's only key is of this enctype, and the client asks for no other: the AS
        // reply is decrypted with the password's key of this enctype, both session keys are of it.
        const { result: zk, steps } = await traced(() => krbClient(ctx, { principal, password, enctypes: [n] }));
        assert.deepEqual(
          steps.map((s) => `${s.step} ${s.ok} ${s.enctype}`),
          [`as true ${n}`, `tgs true ${n}`],
          JSON.stringify(steps),
        );
        assert.deepEqual(await saslIds(zk), [`${principal}@${realm}`]);
        const path = `${ctx.config.base}-krb-e${n}`;
        await zk.create(path, name, { acl: [{ perms: Perm.ALL, id: { scheme: 'sasl', id: `${principal}@${realm}` } }] });
        assert.equal((await zk.getData(path)).data.toString(), name);
        await zk.delete(path);
        assert.ok(!inspect(zk, { depth: 6 }).includes(password), 'the password in util.inspect of the client');
      },
    })),
    {
      name: 'Kerberos keytab: whoAmI shows its principal; a sasl ACL node read back, NoAuth to an unauthenticated session',
      async run(ctx) {
        const { keytab, realm, connect } = ctx.config.kerberos;
        const { result: zk, steps } = await traced(() => krbClient(ctx, { principal: keytab.principal, keytab: keytab.file }));
        assert.deepEqual(
          steps.map((s) => `${s.step} ${s.ok}`),
          ['as true', 'tgs true'],
        );
        const id = `${keytab.principal}@${realm}`;
        assert.deepEqual(await saslIds(zk), [id]);
        const path = `${ctx.config.base}-krb-acl`;
        await zk.create(path, 'sasl-only', { acl: [{ perms: Perm.ALL, id: { scheme: 'sasl', id } }] });
        try {
          assert.equal((await zk.getData(path)).data.toString(), 'sasl-only');
          assert.deepEqual((await zk.getACL(path)).acl, [{ perms: Perm.ALL, id: { scheme: 'sasl', id } }]);
          const plain = ctx.track(await ZooKeeper.connect(connect, { sessionTimeout: 10_000 }));
          assert.deepEqual(await saslIds(plain), []);
          await assert.rejects(plain.getData(path), NoAuthError);
        } finally {
          await zk.delete(path);
        }
      },
    },
    {
      name: 'Kerberos kinit ccache (FILE:): the TGT read from it, whoAmI shows its principal',
      async run(ctx) {
        const { ccache, realm } = ctx.config.kerberos;
        const { result: zk, steps } = await traced(() => krbClient(ctx, { ccache: `FILE:${ccache.file}` }));
        assert.deepEqual(
          steps.map((s) => `${s.step} ${s.ok} ${s.client}`),
          [`ccache true ${ccache.principal}@${realm}`, `tgs true ${ccache.principal}@${realm}`],
        );
        assert.deepEqual(await saslIds(zk), [`${ccache.principal}@${realm}`]);
      },
    },
    {
      name: 'Kerberos wrong password: AuthFailedError caused by PreauthFailedError, without the password',
      async run(ctx) {
        const { byEnctype, realm } = ctx.config.kerberos;
        const { principal } = byEnctype[17];
        const wrong = 'not-the-Pw-of-rt-e17';
        const err = await krbClient(ctx, { principal, password: wrong }).then(
          () => assert.fail('a wrong password connected'),
          (e) => e,
        );
        assert.ok(err instanceof AuthFailedError, inspect(err, { depth: 6 }));
        const preauth = causes(err).find((e) => e instanceof PreauthFailedError);
        assert.ok(preauth, inspect(err, { depth: 6 }));
        assert.match(preauth.message, new RegExp(`pre-authentication failed for ${principal}@${realm.replace('.', '\\.')}`));
        assert.ok(!`${String(err)} ${inspect(err, { depth: 9 })}`.includes(wrong), 'the password in the error');
      },
    },
    ...(config.kind === 'deno' ? denoScopedChecks : []),
    scopedCheck("a Kerberos program with krb5.conf's udp_preference_limit = 1 (the KDC by TCP): on Deno no 0.0.0.0:0 grant, only the server's address with port 0", (address) => [`${address}:0`], { tcp: true }),
  ];
}
