import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Each layer knows only the one below it (style guide, principle 1). Checked by scanning imports.
const root = fileURLToPath(new URL('../../', import.meta.url));

/** The source files under `dir`, tests left out; src/testing (fakes for tests) only with `testing`. */
function sources(dir: string, { testing = false } = {}): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'testing' && !testing ? [] : sources(p, { testing });
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [p] : [];
  });
}

function imports(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/^\s*(?:import|export)[^'"]*from\s+'([^']+)'/gm)].map((m) => m[1] as string);
}

const protocol = join(root, 'protocol/src');
const locks = join(root, 'locks/src');

describe('layers - imports', () => {
  it('the codec and framing do no I/O', () => {
    for (const file of [...sources(join(protocol, 'jute')), join(protocol, 'framing.ts')]) {
      expect(imports(file).filter((i) => i.startsWith('node:')), relative(root, file)).toEqual([]);
    }
  });

  it('only connection/transport.ts touches sockets (and kerberos/kdc-transport.ts, for the KDC)', () => {
    const allowed = [join('connection', 'transport.ts'), join('kerberos', 'kdc-transport.ts')];
    for (const file of sources(protocol)) {
      const net = imports(file).filter((i) => i === 'node:net' || i === 'node:tls' || i === 'node:dgram');
      if (!allowed.includes(relative(protocol, file))) expect(net.filter((i) => i !== 'node:tls'), relative(root, file)).toEqual([]);
    }
  });

  it('kerberos/ (issue 40) imports only Node built-ins and its own files', () => {
    for (const file of sources(join(protocol, 'kerberos'))) {
      expect(imports(file).filter((i) => !i.startsWith('node:') && !(i.startsWith('./') && !i.includes('/', 2))), relative(root, file)).toEqual([]);
    }
  });

  it('the session layer never imports the client layer above it', () => {
    for (const file of sources(join(protocol, 'session'))) {
      expect(imports(file).filter((i) => i.includes('/client/')), relative(root, file)).toEqual([]);
    }
  });

  it('util/ (path, abort and timer helpers) imports nothing but errors and itself', () => {
    for (const file of sources(join(protocol, 'util'))) {
      expect(imports(file).filter((i) => i.startsWith('.') && !i.startsWith('./') && i !== '../errors.js'), relative(root, file)).toEqual([]);
    }
  });

  it('the tree cache sits above the client: it imports only the public API (from the files that define it), util helpers and its own files', () => {
    // What index.ts exports, by the file it exports it from: the cache may import exactly those names
    // from those files (not the index itself, which re-exports the cache: that would be a cycle).
    const published = new Map<string, Set<string>>();
    for (const m of readFileSync(join(protocol, 'index.ts'), 'utf8').matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}\s*from\s+'\.\/([^']+)'/gm)) {
      const names = published.get(m[2] as string) ?? new Set<string>();
      for (const n of (m[1] as string).split(',')) if (n.trim()) names.add(n.trim().replace(/^type\s+/, '').split(/\s+as\s+/)[0] as string);
      published.set(m[2] as string, names);
    }
    // Besides: the class every Stat of the client is made of, so that the Stats the caches rebuild
    // serialise as the client's own do (issue 37 item 6: toJSON on its prototype).
    for (const n of ['StatRecord', 'copyStat']) published.get('jute/data.js')?.add(n);
    for (const file of sources(join(protocol, 'cache'))) {
      const text = readFileSync(file, 'utf8');
      const own = (i: string) => i.startsWith('../util/') || (i.startsWith('./') && !i.includes('/', 2)) || i.startsWith('node:');
      const named = [...text.matchAll(/^\s*import\s+(?:type\s+)?\{([^}]*)\}\s*from\s+'\.\.\/([^']+)'/gm)];
      const unpublished = named.flatMap((m) => {
        if (own(`../${m[2]}`)) return [];
        const names = (m[1] as string).split(',').map((n) => n.trim().replace(/^type\s+/, '')).filter(Boolean);
        return names.filter((n) => !published.get(m[2] as string)?.has(n)).map((n) => `${n} from ../${m[2]}`);
      });
      expect(unpublished, relative(root, file)).toEqual([]);
      const elsewhere = imports(file).filter((i) => !own(i) && !named.some((m) => `../${m[2]}` === i));
      expect(elsewhere, relative(root, file)).toEqual([]);
    }
    // and nothing below it knows it, except the public index that exports it
    for (const file of sources(protocol)) {
      if (file.includes(`${join(protocol, 'cache')}/`) || file === join(protocol, 'index.ts')) continue;
      expect(imports(file).filter((i) => i.includes('/cache/')), relative(root, file)).toEqual([]);
    }
  });

  it('@zk/locks: the floor (internal/ and lease.ts, with errors.ts and diagnostics.ts) imports nothing above it', () => {
    const floor = new Set([...sources(join(locks, 'internal')), ...['lease.ts', 'errors.ts', 'diagnostics.ts'].map((f) => join(locks, f))]);
    for (const file of floor) {
      const above = imports(file)
        .filter((i) => i.startsWith('.'))
        .map((i) => resolve(dirname(file), i.replace(/\.js$/, '.ts')))
        .filter((t) => !floor.has(t));
      expect(above.map((t) => relative(root, t)), relative(root, file)).toEqual([]);
    }
  });

  it('@zk/locks: one folder per recipe family; the top level holds at most 8 source files', () => {
    const top = readdirSync(locks).filter((n) => n.endsWith('.ts') && !n.endsWith('.test.ts'));
    expect(top.length, top.join(' ')).toBeLessThanOrEqual(8);
  });

  it('no source file of any package passes 500 lines (the Jute record table aside)', () => {
    // Files that fit in one head (issue 36): a file that grows past this splits along a seam.
    const long = readdirSync(root)
      .filter((n) => existsSync(join(root, n, 'src')))
      .flatMap((pkg) => sources(join(root, pkg, 'src'), { testing: true }))
      .filter((f) => relative(root, f) !== join('protocol', 'src', 'jute', 'proto.ts'))
      .map((f) => ({ file: relative(root, f), lines: readFileSync(f, 'utf8').split('\n').length - 1 }))
      .filter(({ lines }) => lines > 500)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    expect(long).toEqual([]);
  });

  it('no import cycles in any package, type imports included', () => {
    // Every relative import of the packages' sources (src/testing too, not the tests): static, type-only,
    // re-exports and import('...') types. Strongly connected groups of files, as paths from src/.
    const found: string[] = [];
    for (const pkg of readdirSync(root).filter((n) => existsSync(join(root, n, 'src')))) {
      const src = join(root, pkg, 'src');
      const files = sources(src, { testing: true });
      const edges = new Map(
        files.map((f) => {
          const text = readFileSync(f, 'utf8');
          const specs = [...text.matchAll(/^\s*(?:import|export)\b[^'";]*?(?:from\s+)?'(\.[^']+)'|\bimport\(\s*'(\.[^']+)'\s*\)/gm)].map((m) => (m[1] ?? m[2]) as string);
          return [f, specs.map((i) => resolve(dirname(f), i.replace(/\.js$/, '.ts'))).filter((t) => files.includes(t))];
        }),
      );
      // Tarjan's strongly connected components.
      const index = new Map<string, number>();
      const low = new Map<string, number>();
      const stack: string[] = [];
      let next = 0;
      const visit = (v: string): void => {
        index.set(v, next);
        low.set(v, next++);
        stack.push(v);
        for (const w of edges.get(v) ?? []) {
          if (!index.has(w)) {
            visit(w);
            low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
          } else if (stack.includes(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
        }
        if (low.get(v) !== index.get(v)) return;
        const group: string[] = [];
        for (let w = stack.pop(); ; w = stack.pop()) {
          group.push(relative(src, w as string));
          if (w === v) break;
        }
        if (group.length > 1 || (edges.get(v) ?? []).includes(v)) found.push(`${pkg}: ${group.sort().join(' ')}`);
      };
      for (const f of files) if (!index.has(f)) visit(f);
    }
    // None left: Transaction's @internal constructor takes the narrow TransactionHost
    // (client/transaction-host.ts) that the client satisfies, not the ZooKeeper type.
    expect(found.sort()).toEqual([]);
  });

  it('@zk/locks uses only @zk/protocol’s public entry point and Node built-ins', () => {
    for (const file of sources(locks)) {
      const outside = imports(file).filter((i) => !i.startsWith('.') && !i.startsWith('node:') && i !== '@zk/protocol');
      expect(outside, relative(root, file)).toEqual([]);
      expect(imports(file).filter((i) => i.includes('protocol/src')), relative(root, file)).toEqual([]);
    }
  });
});
