/**
 * Global setup of the integration project: one shared server for every suite (each test works in
 * its own chroot). ZK_CONNECT names an existing ensemble instead.
 */
import type { TestProject } from 'vitest/node';
import { startZooKeeper, type ZooKeeperEnsemble } from './harness/index.js';

declare module 'vitest' {
  export interface ProvidedContext {
    zkConnect: string;
    zkSource: string;
  }
}

let ensemble: ZooKeeperEnsemble | undefined;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  ensemble = await startZooKeeper({ servers: 1 });
  project.provide('zkConnect', ensemble.connectString);
  project.provide('zkSource', ensemble.source);
  if (ensemble.source !== 'external') process.stderr.write(`[zk] ${ensemble.source} standalone server at ${ensemble.connectString} (started in ${Math.round(ensemble.startMs)} ms)\n`);
  return async () => {
    await ensemble?.close();
  };
}
