// Run with --enable-source-maps: bad input throws inside @zk/protocol before anything is sent,
// and the stack must point at the shipped TypeScript (node_modules/@zk/protocol/src/...).
import { ZooKeeper } from '@zk/protocol';

try {
  await ZooKeeper.connect('127.0.0.1:2181', { sessionTimeout: -1 });
} catch (err) {
  console.log((err as Error).stack);
}
