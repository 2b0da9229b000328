import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (p: string) => fileURLToPath(new URL(p, import.meta.url));

// Tests import the packages by name; point those names at the sources so a test run never
// depends on a stale build.
const alias = {
  '@zk/protocol': src('./packages/protocol/src/index.ts'),
  '@zk/locks': src('./packages/locks/src/index.ts'),
  '@zk/otel': src('./packages/otel/src/index.ts'),
};

export default defineConfig({
  test: {
    // At least two files at a time in each pool (vitest's default is one fork per core but one:
    // one on a 2-core machine). The fault files (the threads pool below) wait on their own
    // ensembles' timers most of the time, and so do most integration files (on servers, JVMs and
    // timeouts): one at a time, the fault pool was 16 of the main pass's 19 minutes, and with two
    // fault threads the integration files' single fork became as long. The fault files stay at
    // two: their liveness floors (test/faults/rates.ts) were measured so.
    poolOptions: { threads: { maxThreads: 2, minThreads: 1 }, forks: { maxForks: Math.max(2, availableParallelism() - 1), minForks: 1 } },
    projects: [
      {
        resolve: { alias },
        test: {
          name: 'unit',
          include: ['packages/*/src/**/*.test.ts', 'bench/lib/**/*.test.ts'],
          testTimeout: 10_000,
          // One worker, the modules loaded once for every file: each unit file in a fresh process
          // cost more than its tests (the project alone: 87 s of CPU isolated, 29 s so, on a CI
          // machine whose main pass keeps both cores busy). The threads pool runs its singleThread
          // project after the fault files, which end minutes before the forks pool does.
          pool: 'threads',
          poolOptions: { threads: { singleThread: true, isolate: false } },
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: ['**/node_modules/**', 'test/dist/**', 'test/faults/**'],
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Suites share the server(s) started in global setup; files run in parallel forks.
          pool: 'forks',
        },
      },
      {
        resolve: { alias },
        test: {
          // The fault suite: long files that mostly wait on their own ensembles' timers. They
          // run in a pool of their own (vitest keeps one pool per kind, the forks pool sized to
          // the machine, this one by poolOptions above), so on a 2-core machine two fault files
          // run beside one integration file instead of after all of them.
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          globalSetup: ['test/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          pool: 'threads',
        },
      },
    ],
  },
});
