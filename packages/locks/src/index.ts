/**
 * `@zk/locks`: ZooKeeper lock recipes, wire-compatible with Apache Curator.
 * @packageDocumentation
 */
export {};
