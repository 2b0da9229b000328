/**
 * 64-bit ids in hex, as ZooKeeper's own logs print them: unsigned. A session id is a Java long,
 * negative when the server's myid is 128 or more (the id starts with it), and `toString(16)` of a
 * negative bigint would print `-...`.
 */

/** `v` (a signed 64-bit id, such as a session id) as unsigned hex, without `0x`. */
export function hex64(v: bigint): string {
  return BigInt.asUintN(64, v).toString(16);
}
