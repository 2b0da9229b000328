import { describe, expect, it } from 'vitest';
import { ConnectionLossError, InvalidArgumentError, NoAuthError, NodeExistsError, NoNodeError, NotEmptyError } from '../errors.js';
import { ancestorsOf, Budget, createWithParents, deleteRecursive, ensurePath, type TreeClient } from './tree.js';

/** An in-memory tree answering like a server, with hooks to fail or interfere with calls. */
class FakeTree implements TreeClient {
  readonly nodes = new Set<string>(['/']);
  readonly log: string[] = [];
  failCreate: (path: string) => Error | undefined = () => undefined;
  beforeDelete: (path: string) => void = () => {};

  async create(path: string): Promise<string> {
    this.log.push(`create ${path}`);
    const injected = this.failCreate(path);
    if (injected) throw injected;
    if (this.nodes.has(path)) throw new NodeExistsError(undefined, { op: 'create', path });
    if (!this.nodes.has(parent(path))) throw new NoNodeError(undefined, { op: 'create', path });
    this.nodes.add(path);
    return path;
  }
  async delete(path: string): Promise<void> {
    this.beforeDelete(path);
    if (!this.nodes.has(path)) throw new NoNodeError(undefined, { op: 'delete', path });
    if (this.children(path).length > 0) throw new NotEmptyError(undefined, { op: 'delete', path });
    this.nodes.delete(path);
  }
  async exists(path: string): Promise<object | null> {
    return this.nodes.has(path) ? {} : null;
  }
  async getChildren(path: string): Promise<string[]> {
    if (!this.nodes.has(path)) throw new NoNodeError(undefined, { op: 'getChildren', path });
    return this.children(path).map((c) => c.slice(path.length + 1));
  }
  children(path: string): string[] {
    return [...this.nodes].filter((n) => n !== '/' && parent(n) === path);
  }
}

function parent(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

const plainCreate = (zk: FakeTree, path: string) => () => zk.create(path);

describe('tree - ancestors', () => {
  it('lists proper ancestors from the top, without the root', () => {
    expect(ancestorsOf('/a/b/c')).toEqual(['/a', '/a/b']);
    expect(ancestorsOf('/a')).toEqual([]);
    expect(ancestorsOf('/a/b/lock-')).toEqual(['/a', '/a/b']);
  });
});

describe('tree - create with parents', () => {
  it('sends every ancestor create, then the create itself, in one batch', async () => {
    const zk = new FakeTree();
    zk.nodes.add('/a');
    const path = await createWithParents(zk, '/a/b/c/d', true, undefined, new Budget({}), plainCreate(zk, '/a/b/c/d'));
    expect(path).toBe('/a/b/c/d');
    expect(zk.log).toEqual(['create /a', 'create /a/b', 'create /a/b/c', 'create /a/b/c/d']);
    expect(zk.nodes.has('/a/b/c')).toBe(true);
  });

  it('never takes an ancestor lost to ConnectionLoss for a success', async () => {
    const zk = new FakeTree();
    zk.failCreate = (p) => (p === '/a' ? new ConnectionLossError(undefined, { op: 'create', path: p }) : undefined);
    const err = await createWithParents(zk, '/a/b', true, undefined, new Budget({}), plainCreate(zk, '/a/b')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionLossError);
    expect((err as ConnectionLossError).path).toBe('/a');
  });

  it("returns the node when it was created even though an ancestor's create was refused", async () => {
    const zk = new FakeTree();
    zk.nodes.add('/a');
    zk.failCreate = (p) => (p === '/a' ? new NoAuthError(undefined, { op: 'create', path: p }) : undefined);
    await expect(createWithParents(zk, '/a/b', true, undefined, new Budget({}), plainCreate(zk, '/a/b'))).resolves.toBe('/a/b');
  });

  it('tries again when an ancestor is deleted in between, then gives up with NoNode', async () => {
    const zk = new FakeTree();
    let rounds = 0;
    // Someone deletes /a after every batch of ancestor creates, before the create itself.
    const create = async () => {
      rounds++;
      zk.nodes.delete('/a');
      return zk.create('/a/b');
    };
    await expect(createWithParents(zk, '/a/b', true, undefined, new Budget({}), create)).rejects.toBeInstanceOf(NoNodeError);
    expect(rounds).toBe(3);
  });
});

describe('tree - ensurePath', () => {
  it('reads only when the path exists, creates what is missing otherwise, and succeeds twice', async () => {
    const zk = new FakeTree();
    await ensurePath(zk, '/x/y', {});
    expect(zk.nodes.has('/x/y')).toBe(true);
    zk.log.length = 0;
    await ensurePath(zk, '/x/y', {});
    expect(zk.log).toEqual([]);
  });

  it('fails on an ancestor ConnectionLoss when the path was not created', async () => {
    const zk = new FakeTree();
    zk.failCreate = (p) => (p === '/x' ? new ConnectionLossError(undefined, { op: 'create', path: p }) : undefined);
    await expect(ensurePath(zk, '/x/y', {})).rejects.toBeInstanceOf(ConnectionLossError);
  });

  it('refuses a bad path or timeout before any call', async () => {
    const zk = new FakeTree();
    await expect(ensurePath(zk, 'x', {})).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(ensurePath(zk, '/x', { timeout: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(deleteRecursive(zk, '/x', { timeout: Number.NaN })).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(zk.log).toEqual([]);
  });
});

describe('tree - deleteRecursive', () => {
  function build(zk: FakeTree, width: number, depth: number, at = '/r'): number {
    zk.nodes.add(at);
    if (depth === 0) return 1;
    let n = 1;
    for (let i = 0; i < width; i++) n += build(zk, width, depth - 1, `${at}/c${i}`);
    return n;
  }

  it('deletes children first and counts what it deleted', async () => {
    const zk = new FakeTree();
    const total = build(zk, 4, 3);
    expect(await deleteRecursive(zk, '/r', {})).toBe(total);
    expect([...zk.nodes]).toEqual(['/']);
  });

  it('resolves 0 for a missing path and refuses /', async () => {
    const zk = new FakeTree();
    expect(await deleteRecursive(zk, '/none', {})).toBe(0);
    await expect(deleteRecursive(zk, '/', {})).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it('skips nodes another client deletes meanwhile', async () => {
    const zk = new FakeTree();
    const total = build(zk, 3, 2);
    zk.beforeDelete = (p) => {
      if (p === '/r/c1/c0') zk.nodes.delete(p);
    };
    expect(await deleteRecursive(zk, '/r', {})).toBe(total - 1);
    expect(zk.nodes.has('/r')).toBe(false);
  });

  it('empties a node again when a child appears meanwhile', async () => {
    const zk = new FakeTree();
    build(zk, 2, 1);
    let added = false;
    zk.beforeDelete = (p) => {
      if (p === '/r' && !added) {
        added = true;
        zk.nodes.add('/r/late');
      }
    };
    expect(await deleteRecursive(zk, '/r', {})).toBe(4);
    expect(zk.nodes.has('/r')).toBe(false);
  });

  it('fails with NotEmptyError when children keep appearing', async () => {
    const zk = new FakeTree();
    build(zk, 1, 1);
    let n = 0;
    zk.beforeDelete = (p) => {
      if (p === '/r') zk.nodes.add(`/r/late-${n++}`);
    };
    const err = await deleteRecursive(zk, '/r', {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotEmptyError);
    expect(n).toBe(5);
  });

  it('passes other errors on (a lost connection leaves part of the tree)', async () => {
    const zk = new FakeTree();
    build(zk, 2, 1);
    zk.beforeDelete = (p) => {
      if (p === '/r/c1') throw new ConnectionLossError(undefined, { op: 'delete', path: p });
    };
    await expect(deleteRecursive(zk, '/r', {})).rejects.toBeInstanceOf(ConnectionLossError);
    expect(zk.nodes.has('/r')).toBe(true);
  });
});
