/**
 * The client-wide `acl` option against the real server: the ACL of every create that names
 * none (plain creates, `parents` ancestors, `ensurePath`, `createChroot`, transactions), and
 * CREATOR_ALL_ACL filled in by the server with the creator's digest identity.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CREATOR_ALL_ACL, CreateMode, digestId, InvalidACLError, NoAuthError, OPEN_ACL_UNSAFE, Perm, READ_ACL_UNSAFE, ZooKeeper, type ACL } from '@zk/protocol';
import { connectString, TestSpace } from '../../harness/fixtures.js';

const OWNER = { scheme: 'digest', auth: 'owner:owner-secret' };
/** What the server stores for CREATOR_ALL_ACL created by a session authenticated as OWNER. */
const OWNED: ACL[] = [{ perms: Perm.ALL, id: digestId('owner', 'owner-secret') }];

let space: TestSpace;
/** Nodes (server paths) to delete as the owner after the test: the admin cannot. */
let owned: string[];

beforeEach(() => {
  space = new TestSpace();
  owned = [];
});

afterEach(async () => {
  if (owned.length > 0) {
    await using root = await ZooKeeper.connect(connectString(), { auth: [OWNER] });
    for (const p of owned) await root.deleteRecursive(p);
  }
  expect((await space.close()).leakedWatches).toBe(0);
});

/** A client of the test's namespace authenticated as the owner, whose creates default to CREATOR_ALL_ACL. */
async function ownerClient(): Promise<ZooKeeper> {
  return space.client({ auth: [OWNER], acl: CREATOR_ALL_ACL });
}

describe('acl option - where the client\'s ACL lands', () => {
  it('acl option - a plain create, parents: true ancestors and ensurePath get CREATOR_ALL_ACL as the owner\'s digest', async () => {
    const zk = await ownerClient();
    owned.push(`${space.root}/a`, `${space.root}/e`);
    await zk.create('/a/b/c', 'x', { parents: true });
    await zk.ensurePath('/e/f/g');
    await zk.ensurePath('/e/containers/x', { container: true });
    for (const p of ['/a', '/a/b', '/a/b/c', '/e', '/e/f', '/e/f/g', '/e/containers', '/e/containers/x']) {
      expect({ p, acl: (await zk.getACL(p)).acl }).toEqual({ p, acl: OWNED });
    }
    // A create's own acl and parentAcl still win.
    await zk.create('/a/open/leaf', null, { parents: true, parentAcl: OPEN_ACL_UNSAFE, acl: READ_ACL_UNSAFE });
    expect((await zk.getACL('/a/open')).acl).toEqual(OPEN_ACL_UNSAFE);
    expect((await zk.getACL('/a/open/leaf')).acl).toEqual(READ_ACL_UNSAFE);
  });

  it('acl option - a transaction\'s creates get it, and forPath chooses per caller path', async () => {
    const zk = await space.client({ auth: [OWNER], acl: { default: CREATOR_ALL_ACL, forPath: (p) => (p.startsWith('/pub') ? [...CREATOR_ALL_ACL, ...READ_ACL_UNSAFE] : undefined) } });
    owned.push(`${space.root}/tx`, `${space.root}/pub`);
    await zk.transaction().create('/tx').create('/tx/child', 'c', { mode: CreateMode.PERSISTENT_SEQUENTIAL }).create('/pub').commit();
    expect((await zk.getACL('/tx')).acl).toEqual(OWNED);
    const [child] = await zk.getChildren('/tx');
    expect((await zk.getACL(`/tx/${child}`)).acl).toEqual(OWNED);
    expect((await zk.getACL('/pub')).acl).toEqual([...OWNED, ...READ_ACL_UNSAFE]);
    // What that means for others: the world may read /pub but not /tx.
    const anonymous = await space.client();
    expect((await anonymous.getData('/pub')).data.length).toBe(0);
    await expect(anonymous.getData('/tx')).rejects.toBeInstanceOf(NoAuthError);
    await expect(anonymous.create('/tx/mine')).rejects.toBeInstanceOf(NoAuthError);
    await expect(anonymous.delete(`/tx/${child}`)).rejects.toBeInstanceOf(NoAuthError);
  });

  it('acl option - createChroot gives the chroot and its ancestors the ACL for \'/\'', async () => {
    await space.admin();
    const asked: string[] = [];
    owned.push(`${space.root}/tenant`);
    await using zk = await ZooKeeper.connect(`${connectString()}${space.root}/tenant/app`, {
      auth: [OWNER],
      createChroot: true,
      acl: { default: OPEN_ACL_UNSAFE, forPath: (p) => (asked.push(p), p === '/' ? CREATOR_ALL_ACL : undefined) },
    });
    expect(asked).toEqual(['/']);
    await using root = await ZooKeeper.connect(connectString(), { auth: [OWNER] });
    expect((await root.getACL(`${space.root}/tenant`)).acl).toEqual(OWNED);
    expect((await root.getACL(`${space.root}/tenant/app`)).acl).toEqual(OWNED);
    await zk.create('/inside');
    expect((await zk.getACL('/inside')).acl).toEqual(OPEN_ACL_UNSAFE);
  });

  it('acl option - CREATOR_ALL_ACL without any identity but ip: the server refuses with InvalidACL', async () => {
    const zk = await space.client({ acl: CREATOR_ALL_ACL });
    await expect(zk.create('/nobody')).rejects.toBeInstanceOf(InvalidACLError);
  });
});
