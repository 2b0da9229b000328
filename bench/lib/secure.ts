/**
 * The bench on a secured ensemble (`--connect` or ZK_CONNECT, with zk-lock's variables:
 * `ZK_TLS*`, `ZK_DIGEST_FILE`, `ZK_SASL_USER` + `ZK_SASL_PASSWORD_FILE`; and `--acl spec` for every
 * node it creates). Our client is given them: every `ZooKeeper.connect` of this process (and of
 * the leader-failover participants it starts, which read the same variables and
 * `ZK_BENCH_ACL`) adds them to its own options. The peers cannot be given them all
 * (node-zookeeper-client has neither TLS nor SASL; the Java driver would need a JAAS file and a
 * keystore), so a secured run measures our client alone and says so; the fresh-process connect
 * row, which measures module loading, is left out too.
 */
import { ZooKeeper, type ACL, type ClientOptions } from '@zk/protocol';
import { parseAcl, securityFromEnv } from '@zk/locks';

/** What a secured run uses: a summary without secrets (undefined: a plain run). */
export interface Secured {
  readonly summary: string;
}

/**
 * Reads the environment and `aclSpec`; when either asks for anything, makes every connect of
 * our client use it. Throws (UsageError) naming the variable when a file cannot be read.
 */
export function secureOurClient(aclSpec: string | undefined, env: NodeJS.ProcessEnv = process.env): Secured | undefined {
  const security = securityFromEnv(env);
  const acl: ACL[] | undefined = aclSpec === undefined ? undefined : parseAcl(aclSpec);
  if (Object.keys(security.options).length === 0 && acl === undefined) return undefined;
  const extra: ClientOptions = { ...security.options, ...(acl ? { acl } : {}) };
  const connect = ZooKeeper.connect.bind(ZooKeeper);
  // The workloads call ZooKeeper.connect in many places; one wrapper gives them all the settings.
  Object.defineProperty(ZooKeeper, 'connect', { value: (cs: string, o: ClientOptions = {}) => connect(cs, { ...extra, ...o }), configurable: true, writable: true });
  if (aclSpec !== undefined) process.env.ZK_BENCH_ACL = aclSpec;
  return { summary: `${security.summary}${aclSpec ? `, --acl ${aclSpec}` : ''}` };
}
