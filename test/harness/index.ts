/**
 * The real-ZooKeeper harness: servers, a fault proxy, four-letter words, timing.
 */
export { startZooKeeper, type ServerHandle, type StartOptions, type ZooKeeperEnsemble } from './zookeeper.js';
export { TcpProxy, UNDECODABLE_FRAME, type Latency, type TcpProxyOptions } from './proxy.js';
export { ServerLinks, rewriteElectionAddress, type LinkFault, type LinkProxies, type OneWayFault } from './server-links.js';
export { fourLetter, modeOf, probeMode, type ServerMode } from './fourletter.js';
export { freePorts } from './ports.js';
export { findLocalInstall, INSTALL_HINT } from './local-install.js';
export { dockerAvailable } from './containers.js';
export { outcome, timing, waitFor } from './timing.js';
export { makeCertificate, makeClientCertificate, serverTlsProperties, type TestCertificate, type TestClientCertificate } from './tls.js';
export { waitForState } from './faults.js';
export { compileCurator, compileJava, curatorMissing, curatorVersion, CURATOR_JAR, JARS, SLF4J_NOP_JAR, type CompiledJava } from './java.js';
export { DEFAULT_LINE, isZooKeeper34, versionManifest, zookeeperLine, type VersionManifest } from './versions.js';
export { SecuredSpace, securedConnect, startSecuredZooKeeper, SECURED_DIGEST_USERS, SECURED_SASL_USERS, type SecuredClientCertificate, type SecuredIdentity, type SecuredZooKeeper } from './secured.js';
export { startPostgres, POSTGRES_HINT, type PostgresServer } from './postgres.js';
export { startRedis, REDIS_HINT, type RedisServer } from './redis.js';
export { kdcMissing, kerberizedClientJvmOptions, kerberizedServerOptions, startKdc, KDC_HINT, type TestKdc } from './kdc.js';
