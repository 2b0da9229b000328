/**
 * `@zk/locks`: ZooKeeper lock recipes, wire-compatible with Apache Curator.
 *
 * Read {@link Lease} first: what a lock can and cannot promise.
 * @packageDocumentation
 */
export { Mutex, DEFAULT_MAX_LOCAL_HANDOFFS } from './locks/mutex.js';
export type { MutexOptions } from './locks/mutex.js';
export { ReadWriteLock, ReadLock, WriteLock } from './locks/read-write-lock.js';
export { ExclusiveLock } from './locks/exclusive-lock.js';
export { LockBase } from './locks/lock.js';
export type { AcquireOptions, LockOptions } from './locks/lock.js';
export { Semaphore } from './semaphore/semaphore.js';
export { SemaphoreMutex } from './semaphore/semaphore-mutex.js';
export type { Leases, SemaphoreAcquireOptions, SemaphoreOptions } from './semaphore/semaphore.js';
export { SharedCount, encodeCount, decodeCount } from './shared/shared-count.js';
export type { SharedCountOptions, SharedCountReader } from './shared/shared-count.js';
export { LeaderLatch } from './leader/leader-latch.js';
export type { LeaderLatchOptions, LeaderLatchState, LeadershipChange, LeadershipOptions } from './leader/leader-latch.js';
export { LeaderSelector } from './leader/leader-selector.js';
export type { LeaderSelectorOptions, RunOptions, StartOptions } from './leader/leader-selector.js';
export { Leadership, MAX_PARTICIPANT_ID_BYTES } from './leader/leadership.js';
export type { Participant } from './leader/leadership.js';
export { observeLeader } from './leader/observe.js';
export type { ObserveLeaderOptions } from './leader/observe.js';
export { Lease } from './lease.js';
export type { GuardOptions } from './lease.js';
export { MultiLock, MultiLease } from './locks/multi-lock.js';
export { revoke, revokeHolders, REVOKE_MESSAGE } from './locks/revocation.js';
export { LockError, LockTimeoutError, LockAbortedError, LockUpgradeError, NotHeldError, LeaseLostError, LockStateError, UnsafeLockPathError } from './errors.js';
export { LeaseEndedError, LeaseReleasedError, LeaseRevokedError } from './errors.js';
export type { LeaseEndCode } from './errors.js';
export type { LeaseJSON } from './lease.js';
export { SharedCountError } from './errors.js';
export { BarrierTimeoutError, BarrierAbortedError } from './errors.js';
export type { BarrierOperation } from './errors.js';
export { Barrier } from './barriers/barrier.js';
export type { BarrierOptions, BarrierWaitOptions } from './barriers/barrier.js';
export { DoubleBarrier, READY_NODE } from './barriers/double-barrier.js';
export type { DoubleBarrierOptions } from './barriers/double-barrier.js';
export { AtomicLong, encodeLong, decodeLong } from './atomic/atomic-long.js';
export type { AtomicCallOptions, AtomicLongOptions, AtomicResult, AtomicRetry, AtomicStats, PromotedToLock } from './atomic/atomic-long.js';
export type { AtomicOptions } from './atomic/atomic-engine.js';
export { AtomicInteger, encodeInt, decodeInt } from './atomic/atomic-integer.js';
export type { AtomicIntegerOptions } from './atomic/atomic-integer.js';
export { AtomicValue } from './atomic/atomic-value.js';
export type { AtomicValueOptions } from './atomic/atomic-value.js';
export { AtomicValueError } from './errors.js';
export { RevocationRequestedError } from './errors.js';
export { inspectLock, inspectExclusive, inspectSemaphore } from './locks/inspect.js';
export { LockChannelName } from './diagnostics.js';
export type { AcquireTrace, HoldMessage, LeadershipMessage, LeaseLostMessage, LockKind, RevocationMessage } from './diagnostics.js';
// The ZK_* settings of a secured ensemble, as zk-lock reads them (for your own tools too)
export { securityFromEnv } from './cli/credentials.js';
export type { Security } from './cli/credentials.js';
export { parseAcl, UsageError } from './cli/args.js';
export type { LockEntry, LockState } from './locks/inspect.js';
// Persistent nodes and groups
export { RenewingClient } from './renewing-client.js';
export { PersistentNode } from './nodes/persistent-node.js';
export type { InitialWaitOptions, PersistentNodeEvent, PersistentNodeMode, PersistentNodeOptions } from './nodes/persistent-node.js';
export { PersistentTtlNode, TTL_TOUCH_NODE } from './nodes/persistent-ttl-node.js';
export type { PersistentTtlNodeOptions } from './nodes/persistent-ttl-node.js';
export { GroupMember } from './nodes/group-member.js';
export type { GroupChange, GroupMemberOptions } from './nodes/group-member.js';
export { PersistentNodeTimeoutError, PersistentNodeAbortedError } from './errors.js';
// Queues
export { Queue } from './queues/queue.js';
export { PriorityQueue } from './queues/priority-queue.js';
export { DelayQueue } from './queues/delay-queue.js';
export { IdQueue } from './queues/id-queue.js';
export { QueueBase } from './queues/base.js';
export type { QueueOptions, QueueWaitOptions } from './queues/base.js';
export { QueueItem } from './queues/item.js';
export { QueueIterator } from './queues/iterator.js';
export { bytesSerializer, stringSerializer, jsonSerializer, encodeItems, decodeItems, ItemFramingError } from './queues/item-codec.js';
export type { QueueSerializer } from './queues/item-codec.js';
export { QueueTimeoutError, QueueAbortedError, QueueItemError } from './errors.js';
// Service discovery
export { ServiceDiscovery } from './discovery/service-discovery.js';
export type { ClientSource, ServiceDiscoveryOptions } from './discovery/service-discovery.js';
export { ServiceCache } from './discovery/cache.js';
export type { DiscoveryWaitOptions, ServiceCacheEvent, ServiceCacheListener } from './discovery/cache.js';
export { ServiceProvider, RandomStrategy, RoundRobinStrategy, StickyStrategy } from './discovery/provider.js';
export type { ProviderStrategy, ServiceProviderOptions } from './discovery/provider.js';
export { encodeInstance, decodeInstance } from './discovery/instance.js';
export type { JsonValue, ServiceInstance, ServiceInstanceInput, ServiceType } from './discovery/instance.js';
export { parseUriSpec, buildUri } from './discovery/uri-spec.js';
export type { UriFields, UriSpec, UriSpecPart } from './discovery/uri-spec.js';
export { DiscoveryError, DiscoveryTimeoutError, DiscoveryAbortedError } from './errors.js';
// Fencing tokens checked by the resource: Postgres, Redis and HTTP (no driver dependency)
export { StaleTokenError } from './fencing/stale-token-error.js';
export { MAX_FENCING_TOKEN, parseToken } from './fencing/token.js';
export type { Fence } from './fencing/token.js';
export { fence, fencedWrite, fencingTableSql, DEFAULT_FENCING_TABLE } from './fencing/postgres.js';
export type { FencedTx, PgClientLike, PgPoolLike, PgFenceOptions, PostgresJsLike, PostgresJsTxLike } from './fencing/postgres.js';
export { fencedGet, fencedSet, fencingTokenKey, hashTag, FENCED_SET_SCRIPT } from './fencing/redis.js';
export type { FencedSetOptions, IoredisLike, NodeRedisLike, RedisCommand, RedisLike } from './fencing/redis.js';
export { fencingGuard, checkFencingToken, MemoryTokenStore, FENCING_TOKEN_HEADER, FENCING_RESOURCE_HEADER, STALE_TOKEN_PROBLEM } from './fencing/http-guard.js';
export type { FencingGuard, FencingGuardOptions, TokenStore } from './fencing/http-guard.js';
export { fencedFetch } from './fencing/http-fetch.js';
export type { FencedFetchOptions, FencingHolder } from './fencing/http-fetch.js';
