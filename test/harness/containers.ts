/**
 * The Testcontainers variant of the harness: the official `zookeeper` image, used only when a
 * Docker engine answers. Detection is a quick ping of the engine's socket, so machines without
 * Docker pay nothing (testcontainers itself is imported only when an engine answers).
 */
import { existsSync } from 'node:fs';
import { request } from 'node:http';
import { Ensemble, type ServerHandle, type ZooKeeperEnsemble } from './zookeeper.js';
import { fourLetter, modeOf } from './fourletter.js';

const IMAGE = process.env.ZK_IMAGE ?? 'zookeeper:3.8';

/** True when a Docker engine answers `/_ping` within a second. `ZK_NO_DOCKER=1` skips the check. */
export async function dockerAvailable(): Promise<boolean> {
  if (process.env.ZK_NO_DOCKER === '1') return false;
  const host = process.env.DOCKER_HOST;
  const socketPath = host?.startsWith('unix://') ? host.slice('unix://'.length) : host ? undefined : '/var/run/docker.sock';
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

/** Starts `count` containers (a standalone server or an ensemble on a private network). */
export async function startContainers(count: number, started: number): Promise<ZooKeeperEnsemble> {
  const tc = await import('testcontainers');
  const network = count > 1 ? await new tc.Network().start() : undefined;
  const servers = count > 1 ? Array.from({ length: count }, (_, i) => `server.${i + 1}=zk${i + 1}:2888:3888;2181`).join(' ') : '';
  const containers = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      let c = new tc.GenericContainer(IMAGE)
        .withExposedPorts(2181)
        .withEnvironment({ ZOO_4LW_COMMANDS_WHITELIST: '*', ZOO_MY_ID: String(i + 1), ZOO_TICK_TIME: '500', ...(servers ? { ZOO_SERVERS: servers, ZOO_STANDALONE_ENABLED: 'false' } : {}), JVMFLAGS: '-Dzookeeper.extendedTypesEnabled=true' })
        .withWaitStrategy(tc.Wait.forLogMessage(/binding to port|Started AdminServer|LEADING|FOLLOWING/));
      if (network) c = c.withNetwork(network).withNetworkAliases(`zk${i + 1}`);
      return c.start();
    }),
  );
  type Started = Awaited<ReturnType<InstanceType<typeof tc.GenericContainer>['start']>>;
  const current: Array<Started | undefined> = [...containers];
  const handles = containers.map((container, i): ServerHandle => {
    const host = container.getHost();
    const port = container.getMappedPort(2181);
    return {
      id: i + 1,
      host,
      port,
      connectString: `${host}:${port}`,
      stop: async () => void (await current[i]?.stop({ remove: false })),
      kill: async () => void (await current[i]?.stop({ remove: false, timeout: 0 })),
      start: async () => {
        await current[i]?.restart();
      },
      restart: async () => {
        await current[i]?.restart();
      },
      mode: async () => {
        try {
          return modeOf(await fourLetter(host, port, 'srvr')) ?? 'down';
        } catch {
          return 'down';
        }
      },
      logs: async () => {
        const stream = await current[i]?.logs();
        if (!stream) return '';
        const chunks: string[] = [];
        await new Promise<void>((resolve) => {
          stream.on('data', (d: Buffer) => chunks.push(d.toString()));
          stream.on('end', () => resolve());
          setTimeout(resolve, 500);
        });
        return chunks.join('');
      },
    };
  });
  const ensemble = new Ensemble(handles, 'testcontainers', true, async () => {
    await Promise.all(current.map((c) => c?.stop()));
    await network?.stop();
  });
  await ensemble.waitForQuorum();
  ensemble.startMs = performance.now() - started;
  return ensemble;
}
