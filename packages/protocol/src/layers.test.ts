import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Each layer knows only the one below it (style guide, principle 1). Checked by scanning imports.
const root = fileURLToPath(new URL('../../', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'testing' ? [] : sources(p);
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

  it('only connection/transport.ts touches sockets', () => {
    for (const file of sources(protocol)) {
      const net = imports(file).filter((i) => i === 'node:net' || i === 'node:tls');
      if (relative(protocol, file) !== join('connection', 'transport.ts')) expect(net.filter((i) => i === 'node:net'), relative(root, file)).toEqual([]);
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

  it('the tree cache sits above the client: it imports only the public index, util helpers and its own files', () => {
    for (const file of sources(join(protocol, 'cache'))) {
      const allowed = (i: string) => i === '../index.js' || i.startsWith('../util/') || (i.startsWith('./') && !i.includes('/', 2)) || i.startsWith('node:');
      expect(imports(file).filter((i) => !allowed(i)), relative(root, file)).toEqual([]);
    }
    // and nothing below it knows it, except the public index that exports it
    for (const file of sources(protocol)) {
      if (file.includes(`${join(protocol, 'cache')}/`) || file === join(protocol, 'index.ts')) continue;
      expect(imports(file).filter((i) => i.includes('/cache/')), relative(root, file)).toEqual([]);
    }
  });

  it('@zk/locks: the floor (internal/ and lease.ts, with errors.ts and diagnostics.ts) imports nothing above it', () => {
    const floor = new Set([...sources(join(locks, 'internal')), ...['lease.ts', 'errors.ts', 'diagnostics.ts'].map((f) => join(locks, f))]);
    // The one known exception: the atomic engine builds Curator's PromotedToLock on a Mutex. It is
    // the atomic family's engine and belongs in atomic/; it moves there once internal/ may move (issue 36).
    const known = new Set([`${join('internal', 'atomic-engine.ts')} -> ${join('locks', 'mutex.ts')}`]);
    for (const file of floor) {
      const above = imports(file)
        .filter((i) => i.startsWith('.'))
        .map((i) => resolve(dirname(file), i.replace(/\.js$/, '.ts')))
        .filter((t) => !floor.has(t) && !known.has(`${relative(locks, file)} -> ${relative(locks, t)}`));
      expect(above.map((t) => relative(root, t)), relative(root, file)).toEqual([]);
    }
  });

  it('@zk/locks: one folder per recipe family; the top level holds at most 8 source files', () => {
    const top = readdirSync(locks).filter((n) => n.endsWith('.ts') && !n.endsWith('.test.ts'));
    expect(top.length, top.join(' ')).toBeLessThanOrEqual(8);
  });

  it('@zk/locks uses only @zk/protocol’s public entry point and Node built-ins', () => {
    for (const file of sources(locks)) {
      const outside = imports(file).filter((i) => !i.startsWith('.') && !i.startsWith('node:') && i !== '@zk/protocol');
      expect(outside, relative(root, file)).toEqual([]);
      expect(imports(file).filter((i) => i.includes('protocol/src')), relative(root, file)).toEqual([]);
    }
  });
});
