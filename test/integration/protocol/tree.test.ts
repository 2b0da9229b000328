import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CreateMode, digestACL, InvalidArgumentError, NoAuthError, NoNodeError, READ_ACL_UNSAFE, ZooKeeper } from '@zk/protocol';
import { connectString, TestSpace } from '../../harness/fixtures.js';

let space: TestSpace;

beforeEach(() => {
  space = new TestSpace();
});

afterEach(async () => {
  expect((await space.close()).leakedWatches).toBe(0);
});

describe('tree - create with parents', () => {
  it('creates missing ancestors as persistent nodes without data, and fails without parents (control)', async () => {
    const zk = await space.client();
    await expect(zk.create('/a/b/c', 'x')).rejects.toBeInstanceOf(NoNodeError);
    expect(await zk.create('/a/b/c', 'x', { parents: true })).toBe('/a/b/c');
    expect((await zk.getData('/a/b/c')).data.toString()).toBe('x');
    const parent = await zk.getData('/a/b');
    expect(parent.data.length).toBe(0);
    expect(parent.stat.ephemeralOwner).toBe(0n);
    // a second child under existing parents: the plain create path
    const seq = await zk.create('/a/b/n-', null, { parents: true, mode: CreateMode.EPHEMERAL_SEQUENTIAL });
    expect(seq).toMatch(/^\/a\/b\/n-\d{10}$/);
    await zk.delete(seq);
  });

  it('creates container ancestors with parents: container, which the server accepts as parents', async () => {
    const zk = await space.client();
    const { path, stat } = await zk.createWithStat('/locks/job/x', null, { parents: 'container', mode: CreateMode.EPHEMERAL });
    expect(path).toBe('/locks/job/x');
    expect(stat.ephemeralOwner).toBe(zk.sessionId);
    await zk.delete('/locks/job/x');
  });

  it('gives the ancestors parentAcl, and fails with its NoAuth when a parent refuses children', async () => {
    const zk = await space.client();
    await zk.create('/ro', null, { acl: READ_ACL_UNSAFE });
    const err = await zk.create('/ro/a/b', null, { parents: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoAuthError);
    expect((err as NoAuthError).path).toBe('/ro/a');
    const ann = await space.client({ auth: [{ scheme: 'digest', auth: 'ann:pw' }] });
    await ann.create('/open/a/b', null, { parents: true, parentAcl: digestACL('ann', 'pw') });
    expect((await ann.getACL('/open/a')).acl.map((a) => a.id.scheme)).toEqual(['digest']);
    expect((await zk.getACL('/open/a/b')).acl.map((a) => a.id.scheme)).toEqual(['world']);
    await expect(zk.create('/open/a/c')).rejects.toBeInstanceOf(NoAuthError);
  });

  it('refuses bad parents options before sending anything', async () => {
    const zk = await space.client();
    await expect(zk.create('/p', null, { parents: 'yes' as never })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(() => zk.transaction().create('/p', null, { parents: true } as never)).toThrow(InvalidArgumentError);
    expect(await zk.exists('/p')).toBeNull();
  });
});

describe('tree - ensurePath', () => {
  it('creates the path and its ancestors, and succeeds again when it exists', async () => {
    const zk = await space.client();
    await zk.ensurePath('/e/f/g');
    await zk.ensurePath('/e/f/g');
    await zk.ensurePath('/e');
    expect(await zk.getChildren('/e/f')).toEqual(['g']);
  });
});

describe('tree - deleteRecursive', () => {
  async function build(zk: ZooKeeper, root: string, width: number, depth: number): Promise<number> {
    let count = 1;
    await zk.create(root);
    let level = [root];
    for (let d = 0; d < depth; d++) {
      const next = level.flatMap((p) => Array.from({ length: width }, (_, i) => `${p}/n${i}`));
      await Promise.all(next.map((p) => zk.create(p, 'x')));
      count += next.length;
      level = next;
    }
    return count;
  }

  it('deletes a subtree children first and counts the nodes', async () => {
    const zk = await space.client();
    const total = await build(zk, '/tree', 6, 3); // 1 + 6 + 36 + 216
    expect(await zk.deleteRecursive('/tree')).toBe(total);
    expect(await zk.exists('/tree')).toBeNull();
    expect(await zk.deleteRecursive('/tree')).toBe(0);
  });

  it('two clients deleting one tree at once delete every node once between them', async () => {
    const a = await space.client();
    const b = await space.client();
    const total = await build(a, '/shared', 5, 3);
    const [na, nb] = await Promise.all([a.deleteRecursive('/shared'), b.deleteRecursive('/shared')]);
    expect(na + nb).toBe(total);
    expect(await a.exists('/shared')).toBeNull();
  });

  it("deletes other sessions' ephemeral nodes and refuses /", async () => {
    const zk = await space.client();
    const other = await space.client();
    await zk.create('/eph');
    await other.create('/eph/e', null, { mode: CreateMode.EPHEMERAL });
    expect(await zk.deleteRecursive('/eph')).toBe(2);
    await expect(zk.deleteRecursive('/')).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe('tree - chroot', () => {
  it('names a missing chroot in the NoNode error, and createChroot creates it on connect', async () => {
    const admin = await space.admin();
    const chroot = `${space.root}/fresh-${randomUUID().slice(0, 8)}/app`;
    await using bare = await ZooKeeper.connect(`${connectString()}${chroot}`);
    const err = await bare.create('/jobs', 'config').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoNodeError);
    expect((err as Error).message).toBe(`NONODE (create /jobs): the chroot ${chroot} does not exist (create it, or connect with { createChroot: true })`);
    const deeper = await bare.getData('/jobs/x').catch((e: unknown) => e);
    expect((deeper as Error).message).toBe(`NONODE (getData /jobs/x) under the chroot ${chroot}`);

    await using zk = await ZooKeeper.connect(`${connectString()}${chroot}`, { createChroot: true });
    await zk.create('/jobs', 'config');
    expect((await admin.getData(`${chroot}/jobs`)).data.toString()).toBe('config');
    // a second client finds it there
    await using again = await ZooKeeper.connect(`${connectString()}${chroot}`, { createChroot: true });
    expect(await again.getChildren('/')).toEqual(['jobs']);
  });

  it('fails the connect, naming the chroot, when the chroot cannot be created', async () => {
    const admin = await space.admin();
    await admin.create(`${space.root}/locked`, null, { acl: READ_ACL_UNSAFE });
    const chroot = `${space.root}/locked/app`;
    const err = await ZooKeeper.connect(`${connectString()}${chroot}`, { createChroot: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoAuthError);
    expect((err as Error).message).toMatch(new RegExp(`^could not create the chroot ${chroot}: NOAUTH \\(create ${chroot}\\)`));
  });
});
