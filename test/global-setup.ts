/**
 * Global setup of the integration project: one shared standalone server for every suite (each
 * test works in its own chroot), provided as `zkConnect` / `zkSource`. ZK_CONNECT names an
 * existing ensemble instead; tests that must kill servers start their own with startZooKeeper
 * and skip when ZK_CONNECT is set.
 */
import { connect } from 'node:net';
import type { TestProject } from 'vitest/node';
import { findLocalInstall, startZooKeeper, timing, type ZooKeeperEnsemble } from './harness/index.js';
import { keepLatestRun } from './faults/summary.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The shared server's (or ZK_CONNECT's) connect string. */
    zkConnect: string;
    /** Where it came from: `external`, `testcontainers` or `local`. */
    zkSource: string;
  }
}

let ensemble: ZooKeeperEnsemble | undefined;

/** Starts (or finds) the shared server; the returned teardown stops what was started. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // One id for the fault-summary rows of this run, inherited by every test fork; the rows file
  // keeps only the previous run's rows besides this one's.
  process.env.ZK_FAULTS_RUN ??= `${new Date().toISOString()}-${process.pid}`;
  keepLatestRun();
  ensemble = await startZooKeeper({ servers: 1 });
  if (ensemble.source === 'external') {
    // Fail once, here, with the reason, rather than in every suite with a connection timeout.
    const reachable = await Promise.all(ensemble.servers.map((s) => accepts(s.host, s.port, timing(5_000))));
    if (!reachable.some(Boolean)) throw new Error(`ZK_CONNECT=${ensemble.connectString}: no server accepts a connection`);
  } else {
    const version = ensemble.source === 'local' ? ` ${findLocalInstall()?.version ?? ''}` : '';
    process.stderr.write(`[zk] ${ensemble.source}${version} standalone server at ${ensemble.connectString} (started in ${Math.round(ensemble.startMs)} ms)\n`);
  }
  project.provide('zkConnect', ensemble.connectString);
  project.provide('zkSource', ensemble.source);
  return async () => {
    await ensemble?.close();
  };
}

/** True when host:port accepts a TCP connection within `timeoutMs`. */
function accepts(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
