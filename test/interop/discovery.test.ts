/**
 * Service discovery with Apache Curator's curator-x-discovery (Debian's libcurator-discovery-java,
 * driven by java/CuratorDiscoveryParticipant.java: a ServiceDiscovery built the usual way with
 * `ServiceDiscoveryBuilder.builder(Map.class or a POJO)` and its default serializer) and
 * @zk/locks' ServiceDiscovery on the same base path.
 *
 * Checked field by field: Java prints each instance as it sees it (serialized back with every
 * field), we decode that and compare it with our own view, payload and its Java class included.
 * The node bytes Java wrote are also re-encoded by us byte for byte. Negative controls: Node
 * instances written naively (the `name` field renamed; a payload without Jackson's `@class`)
 * fail the same checks on the Java side.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { decodeInstance, encodeInstance, RenewingClient, ServiceDiscovery, type ServiceInstance } from '@zk/locks';
import { waitFor } from '../harness/index.js';
import { connectString, type TestSpace } from '../harness/fixtures.js';
import { curatorDiscoveryMissing, type CompiledJava } from '../harness/java.js';
import { interopHooks, Participant } from './participants.js';

const JAVA_SOURCE = fileURLToPath(new URL('./java/CuratorDiscoveryParticipant.java', import.meta.url));
const POJO = 'CuratorDiscoveryParticipant$Pojo';
const BASE = '/services';

const missing = curatorDiscoveryMissing();

let compiled: CompiledJava | undefined;
let space: TestSpace;

/** A Curator discovery on BASE with payload class Map (`map`) or the POJO (`pojo`), once READY. */
async function java(mode: 'map' | 'pojo', sessionTimeout = 10_000): Promise<Participant> {
  const p = Participant.java(compiled!, 'CuratorDiscoveryParticipant', [`${connectString()}${space.root}`, BASE, mode, String(sessionTimeout)]);
  await p.until('READY');
  return p;
}

/** Java's view of service `name`: its instances decoded from what it printed, by id; or its error line. */
async function javaQuery(p: Participant, name: string): Promise<Map<string, ServiceInstance> | string> {
  const line = await p.reply(`query ${name}`);
  if (!line.startsWith('INSTANCES ')) return line;
  const list = JSON.parse(line.slice('INSTANCES '.length)) as unknown[];
  return new Map(list.map((j) => decodeInstance(Buffer.from(JSON.stringify(j)), 'java')).map((i) => [i.id, i]));
}

/** How many of `ours` Java sees with every field equal. */
function sameOnBothSides(ours: readonly ServiceInstance[], theirs: Map<string, ServiceInstance>): number {
  return ours.filter((i) => {
    try {
      expect(theirs.get(i.id)).toEqual(i);
      return true;
    } catch {
      return false;
    }
  }).length;
}

/** A Node instance of service `api`, as the Java side makes its own (other address and payload). */
function nodeInstance(id: string, port: number, payload: Record<string, unknown>, payloadClass?: string) {
  return { name: 'api', id, address: `node-${id}.example`, port, sslPort: port + 1, payload: payload as never, uriSpec: '{scheme}://{address}:{port}/v1', ...(payloadClass ? { payloadClass } : {}) };
}

/** The data of a service instance written naively: plain JSON.stringify, `name` renamed, no type information on the payload. */
function naiveJson(i: ServiceInstance): string {
  const { name, payloadClass: _, enabled: __, ...rest } = i;
  return JSON.stringify({ serviceName: name, ...rest });
}

describe.skipIf(missing !== undefined)(`interop - Curator curator-x-discovery and @zk/locks ServiceDiscovery${missing ? ` (skipped: ${missing})` : ''}`, () => {
  interopHooks([JAVA_SOURCE], { compiled: (c) => (compiled = c), space: (s) => (space = s) });

  it('3 instances registered in Java are found by Node with every field equal, and Node re-encodes their bytes exactly', async () => {
    const j = await java('map');
    const expected: ServiceInstance[] = [];
    for (const [n, id] of ['j1', 'j2', 'j3'].entries()) {
      const line = await j.reply(`register api ${id} ${9000 + n}`);
      expect(line).toMatch(/^REGISTERED /);
      expected.push(decodeInstance(Buffer.from(line.slice('REGISTERED '.length)), 'java'));
    }
    const zk = await space.client();
    await using discovery = await ServiceDiscovery.open(zk, { basePath: BASE });
    const found = await discovery.queryForInstances('api');
    expect(found).toEqual(expected);
    expect(found[0]!.payload).toEqual({ lang: 'java', id: 'j1', port: 9000, tags: ['a', 'b'], nested: { ok: true, ratio: 0.5 }, none: null });
    expect(found[0]!.payloadClass).toBe('java.util.LinkedHashMap');
    const admin = await space.admin();
    for (const i of found) {
      const { data, stat } = await admin.getData(`${space.root}${BASE}/api/${i.id}`);
      expect(stat.ephemeralOwner).not.toBe(0n);
      expect(encodeInstance(i).toString()).toBe(data.toString()); // Java's bytes, rebuilt by us
    }
    await using cache = await discovery.cache('api');
    expect(cache.instances).toEqual(expected);
    console.log(`Java -> Node: ${found.length} instances, all fields equal, ${found.length} node payloads re-encoded byte for byte`);
  });

  it('3 instances registered in Node are found by Java with every field equal; a Java ServiceProvider picks them in turn', async () => {
    const zk = await space.client();
    await using discovery = await ServiceDiscovery.open(zk, { basePath: BASE });
    const ours: ServiceInstance[] = [];
    for (const [n, id] of ['n1', 'n2', 'n3'].entries()) {
      ours.push(await discovery.register(nodeInstance(id, 7000 + n, { lang: 'node', id, port: 7000 + n, tags: ['a'], nested: { ok: false, ratio: 1.25 }, none: null })));
    }
    const j = await java('map');
    const theirs = await javaQuery(j, 'api');
    expect(theirs).toBeInstanceOf(Map);
    expect(sameOnBothSides(ours, theirs as Map<string, ServiceInstance>)).toBe(3);
    // Java's serializer, given what it read, writes the bytes we wrote (plus `enabled`, which its default serializer omits).
    const raw = (JSON.parse((await j.reply('query api')).slice('INSTANCES '.length)) as { id: string }[]).map((x) => JSON.stringify(x));
    const admin = await space.admin();
    let sameBytes = 0;
    for (const json of raw) {
      const id = (JSON.parse(json) as { id: string }).id;
      const { data } = await admin.getData(`${space.root}${BASE}/api/${id}`);
      if (json.replace(/,"enabled":true}$/, '}') === data.toString()) sameBytes++;
    }
    expect(sameBytes).toBe(3);
    const picked = await j.reply('pick api 6 3');
    const ids = picked.slice('PICKED '.length).split(',');
    expect(ids.sort()).toEqual(['n1', 'n1', 'n2', 'n2', 'n3', 'n3']);
    console.log(`Node -> Java: 3 instances equal field by field, ${sameBytes} re-serialized by Java to our bytes; Java's round-robin provider picked ${picked.slice(7)}`);
  });

  it('a POJO payload: Node writes @class for Java builder(Pojo.class), and reads Java POJO instances', async () => {
    const zk = await space.client();
    await using discovery = await ServiceDiscovery.open(zk, { basePath: BASE });
    const ours: ServiceInstance[] = [];
    for (const [n, id] of ['p1', 'p2', 'p3'].entries()) ours.push(await discovery.register(nodeInstance(id, 6000 + n, { lang: 'node', id, weight: n, tags: ['t'] }, POJO)));
    const j = await java('pojo');
    const theirs = await javaQuery(j, 'api');
    expect(theirs).toBeInstanceOf(Map);
    expect(sameOnBothSides(ours, theirs as Map<string, ServiceInstance>)).toBe(3);
    const line = await j.reply('register api jp 6100');
    const javaPojo = (await discovery.queryForInstance('api', 'jp'))!;
    expect(javaPojo).toEqual(decodeInstance(Buffer.from(line.slice('REGISTERED '.length)), 'java'));
    expect(javaPojo.payloadClass).toBe(POJO);
    expect(javaPojo.payload).toEqual({ lang: 'java', id: 'jp', weight: 6100 % 7, tags: ['x', 'y'] });
  });

  it('a Java instance whose process is killed leaves the Node cache once its session expires', async () => {
    const j = await java('map', 4_000);
    await j.reply('register api doomed 5000');
    const zk = await space.client();
    await using discovery = await ServiceDiscovery.open(zk, { basePath: BASE });
    await using cache = await discovery.cache('api');
    await cache.waitFor((l) => l.some((i) => i.id === 'doomed'), { timeout: 10_000 });
    const removed = new Promise<number>((resolve) => cache.onChange((e) => e.type === 'removed' && e.previous.id === 'doomed' && resolve(performance.now())));
    const killedAt = performance.now();
    j.proc.kill('SIGKILL');
    await cache.waitFor((l) => l.length === 0, { timeout: 20_000 });
    console.log(`killed Java instance left the Node cache after ${Math.round((await removed) - killedAt)} ms (session timeout 4000 ms)`);
  });

  it('a Node instance on a RenewingClient whose session expires is back for Java under the next session', async () => {
    const sessions = new RenewingClient(() => space.client());
    try {
      await using discovery = await ServiceDiscovery.open(sessions, { basePath: BASE });
      const ours = await discovery.register(nodeInstance('phoenix', 3000, { id: 'phoenix' }));
      const j = await java('map');
      expect(sameOnBothSides([ours], (await javaQuery(j, 'api')) as Map<string, ServiceInstance>)).toBe(1);
      const first = discovery.zk.sessionId;
      await space.expire(discovery.zk);
      const admin = await space.admin();
      await waitFor('phoenix under a new session', async () => {
        const stat = await admin.exists(`${space.root}${BASE}/api/phoenix`);
        return stat && stat.ephemeralOwner !== first && stat.ephemeralOwner === discovery.zk.sessionId ? true : undefined;
      }, 15_000, 20);
      expect(sameOnBothSides([ours], (await javaQuery(j, 'api')) as Map<string, ServiceInstance>)).toBe(1);
    } finally {
      await sessions.close();
    }
  });

  it('negative controls: naive Node JSON (name renamed; payload without @class) fails the same checks in Java', async () => {
    const zk = await space.client();
    await using discovery = await ServiceDiscovery.open(zk, { basePath: BASE });
    const naive: ServiceInstance[] = [];
    for (const [n, id] of ['x1', 'x2', 'x3'].entries()) {
      // Built and checked as ours, then written naively.
      const i = decodeInstance(encodeInstance((await discovery.register(nodeInstance(id, 4000 + n, { id }))) as ServiceInstance), 'x');
      await discovery.unregister(id);
      await zk.create(`${BASE}/api/${id}`, naiveJson(i), { parents: true, mode: 1 });
      naive.push(i);
    }
    const j = await java('map');
    const theirs = await javaQuery(j, 'api');
    expect(theirs).toBeInstanceOf(Map); // Java reads them ...
    const equal = sameOnBothSides(naive, theirs as Map<string, ServiceInstance>);
    console.log(`control (name renamed): ${equal} of 3 instances equal in Java (name read as ${JSON.stringify((theirs as Map<string, ServiceInstance>).get('x1')?.name)})`);
    expect(equal).toBe(0); // ... with the name lost: the field check fails for all 3
    const p = await java('pojo');
    const pojoView = await javaQuery(p, 'api');
    console.log(`control (no @class, POJO reader): ${String(pojoView)}`);
    expect(pojoView).toMatch(/^ERROR ClassCastException/); // the whole query fails
    for (const id of ['x1', 'x2', 'x3']) await zk.delete(`${BASE}/api/${id}`);
  });
});
