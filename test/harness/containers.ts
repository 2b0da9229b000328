/**
 * The Testcontainers variant of the harness: the official `zookeeper` image (or ZK_IMAGE), used
 * only when a Docker engine answers. Detection is a quick ping of the engine's socket, so machines
 * without Docker pay nothing (testcontainers itself is imported only when an engine answers).
 * ZK_DOCKER_NETWORK=host runs the containers on the host's network, on loopback ports chosen like
 * a local server's: for an engine started without a bridge (scripts/docker-zookeeper.sh).
 */
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ensemble, type ServerHandle, type StartOptions, type ZooKeeperEnsemble } from './zookeeper.js';
import { probeMode } from './fourletter.js';
import { timing, waitFor } from './timing.js';
import { freePorts } from './ports.js';

const IMAGE = process.env.ZK_IMAGE ?? 'zookeeper:3.8';
const HOST_NETWORK = process.env.ZK_DOCKER_NETWORK === 'host';

/** True when a Docker engine answers `/_ping` within a second. `ZK_NO_DOCKER=1` skips the check. */
export async function dockerAvailable(): Promise<boolean> {
  if (process.env.ZK_NO_DOCKER === '1') return false;
  const host = process.env.DOCKER_HOST;
  // Without DOCKER_HOST, the sockets Testcontainers also looks at: the system engine, rootless
  // Docker, Docker Desktop. A missing socket costs one stat, not a timeout.
  const candidates = [
    '/var/run/docker.sock',
    ...(process.env.XDG_RUNTIME_DIR ? [join(process.env.XDG_RUNTIME_DIR, 'docker.sock')] : []),
    join(homedir(), '.docker', 'run', 'docker.sock'),
  ];
  const socketPath = host?.startsWith('unix://') ? host.slice('unix://'.length) : host ? undefined : candidates.find((p) => existsSync(p));
  if (!host && !socketPath) return false;
  if (socketPath && !existsSync(socketPath)) return false;
  const target = socketPath ? { socketPath } : tcpTarget(host as string);
  if (!target) return false;
  return new Promise<boolean>((resolve) => {
    const req = request({ ...target, path: '/_ping', method: 'GET', timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

function tcpTarget(host: string): { host: string; port: number } | undefined {
  const m = /^tcp:\/\/([^:]+):(\d+)/.exec(host);
  return m && m[1] && m[2] ? { host: m[1], port: Number(m[2]) } : undefined;
}

/**
 * Starts `count` containers (a standalone server or an ensemble on a private network), with the
 * same zoo.cfg settings as a local server (tick, session bounds, four-letter words, options.config)
 * and options.systemProperties as JVMFLAGS. Paths in those options must exist inside the image.
 */
export async function startContainers(count: number, started: number, options: StartOptions = {}): Promise<ZooKeeperEnsemble> {
  const tc = await import('testcontainers');
  const runtime = await tc.getContainerRuntimeClient();
  const tickTime = options.tickTime ?? 500;
  // Host networking: every server on its own loopback ports (client, peer, election).
  const hostPorts = HOST_NETWORK ? await freePorts(count * 3) : undefined;
  const clientPort = (i: number) => (hostPorts ? (hostPorts[i * 3] as number) : 2181);
  const network = count > 1 && !hostPorts ? await new tc.Network().start() : undefined;
  const servers =
    count === 1
      ? ''
      : Array.from({ length: count }, (_, i) => (hostPorts ? `server.${i + 1}=127.0.0.1:${hostPorts[i * 3 + 1]}:${hostPorts[i * 3 + 2]};127.0.0.1:${clientPort(i)}` : `server.${i + 1}=zk${i + 1}:2888:3888;2181`)).join(' ');
  // The image's entrypoint appends ZOO_CFG_EXTRA (space-separated key=value) to zoo.cfg.
  const extra = { minSessionTimeout: 2 * tickTime, maxSessionTimeout: 60_000, ...options.config };
  const props = { 'zookeeper.extendedTypesEnabled': true, ...options.systemProperties };
  const environment = {
    ZOO_4LW_COMMANDS_WHITELIST: '*',
    ZOO_ADMINSERVER_ENABLED: 'false',
    ZOO_TICK_TIME: String(tickTime),
    ZOO_CFG_EXTRA: Object.entries(extra).map(([k, v]) => `${k}=${v}`).join(' '),
    JVMFLAGS: ['-Xmx256m', ...Object.entries(props).map(([k, v]) => `-D${k}=${v}`)].join(' '),
    ...(servers ? { ZOO_SERVERS: servers, ZOO_STANDALONE_ENABLED: 'false' } : {}),
  };
  const containers = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const own = hostPorts ? { ZOO_CFG_EXTRA: `${environment.ZOO_CFG_EXTRA} clientPort=${clientPort(i)} clientPortAddress=127.0.0.1` } : {};
      let c = new tc.GenericContainer(IMAGE)
        .withEnvironment({ ...environment, ...own, ZOO_MY_ID: String(i + 1) })
        .withWaitStrategy(tc.Wait.forLogMessage(/binding to port|LEADING|FOLLOWING/));
      // Host networking shares the host's temp dir too (read-only), where tests write the key
      // stores and JAAS files their options name: those paths must exist inside the container.
      c = hostPorts ? c.withNetworkMode('host').withBindMounts([{ source: tmpdir(), target: tmpdir(), mode: 'ro' }]) : c.withExposedPorts(2181);
      if (network) c = c.withNetwork(network).withNetworkAliases(`zk${i + 1}`);
      return c.start();
    }),
  );
  // Stop and kill go to the engine directly: StartedTestContainer.stop() answers every later call
  // from a cache, so a container stopped that way could be neither stopped again nor removed.
  // Start after either is restart(), which also re-reads the host port (Docker assigns a new one).
  const handles = containers.map((container, i): ServerHandle => {
    const engine = runtime.container.getById(container.getId());
    const host = () => (hostPorts ? '127.0.0.1' : container.getHost());
    const port = () => (hostPorts ? clientPort(i) : container.getMappedPort(2181));
    return {
      id: i + 1,
      get host() {
        return host();
      },
      get port() {
        return port();
      },
      get connectString() {
        return `${host()}:${port()}`;
      },
      stop: async () => {
        await runtime.container.stop(engine, { timeout: 10 });
      },
      kill: async () => {
        await engine.kill({ signal: 'SIGKILL' }).catch(() => undefined); // already stopped
        await engine.wait();
      },
      // The engine freezes the container's processes (cgroup freezer), like SIGSTOP.
      pause: async () => {
        await engine.pause();
      },
      resume: async () => {
        await engine.unpause();
      },
      start: async () => {
        if ((await runtime.container.inspect(engine)).State.Running) return;
        await container.restart();
        await waitFor(`container ${i + 1} to answer srvr`, async () => ((await probeMode(host(), port())) === 'down' ? undefined : true), timing(60_000));
      },
      restart: async () => {
        await runtime.container.stop(engine, { timeout: 10 });
        await container.restart();
        await waitFor(`container ${i + 1} to answer srvr`, async () => ((await probeMode(host(), port())) === 'down' ? undefined : true), timing(60_000));
      },
      mode: async () => probeMode(host(), port(), 2000),
      logs: async () => {
        const stream = await container.logs();
        const chunks: string[] = [];
        await new Promise<void>((resolve) => {
          stream.on('data', (d: Buffer | string) => chunks.push(d.toString()));
          stream.on('end', () => resolve());
          stream.on('error', () => resolve());
          // The log stream follows the container: take what arrived and stop listening.
          setTimeout(() => {
            (stream as { destroy?: () => void }).destroy?.();
            resolve();
          }, 500);
        });
        return chunks.join('');
      },
    };
  });
  const ensemble = new Ensemble(handles, 'testcontainers', true, async () => {
    await Promise.all(containers.map((c) => c.stop({ timeout: 0 })));
    await network?.stop();
  });
  try {
    await ensemble.waitForQuorum(undefined, { all: true });
  } catch (err) {
    const logs = await ensemble.logs();
    await ensemble.close();
    throw new Error(`ZooKeeper containers (${IMAGE}) did not start: ${(err as Error).message}\n${logs.slice(-4000)}`);
  }
  ensemble.startMs = performance.now() - started;
  return ensemble;
}
