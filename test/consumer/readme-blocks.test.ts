import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pointAt, readmeBlocks } from './readme-blocks.js';

const dir = mkdtempSync(join(tmpdir(), 'zk-readme-blocks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('consumer: README block extraction', () => {
  it('takes every ts block, with its marker, and nothing else', () => {
    mkdirp('packages/locks');
    const md = [
      '# t',
      '```sh',
      'npm test',
      '```',
      '```ts',
      "const a = '```';",
      '```',
      '',
      '<!-- not-runnable: a fragment -->',
      '',
      '```typescript',
      'b();',
      '```',
      '````ts',
      'const c = `',
      '```',
      '`;',
      '````',
      '```js',
      'd();',
      '```',
    ].join('\n');
    writeFileSync(join(dir, 'packages/locks/README.md'), md);
    const blocks = readmeBlocks(join(dir, 'packages/locks/README.md'), dir);
    expect(blocks.map((b) => [b.where, b.fileName, b.notRunnable ?? null])).toEqual([
      ['packages/locks/README.md:5', 'locks-5.ts', null],
      ['packages/locks/README.md:11', 'locks-11.ts', 'a fragment'],
      ['packages/locks/README.md:14', 'locks-14.ts', null],
    ]);
    expect(blocks[0]!.code).toBe("const a = '```';\n");
    expect(blocks[2]!.code).toBe('const c = `\n```\n`;\n');
    // With js: the plain JavaScript variants too, as .mjs files.
    const withJs = readmeBlocks(join(dir, 'packages/locks/README.md'), dir, { js: true });
    expect(withJs.map((b) => [b.where, b.lang, b.fileName])).toEqual([
      ['packages/locks/README.md:5', 'ts', 'locks-5.ts'],
      ['packages/locks/README.md:11', 'ts', 'locks-11.ts'],
      ['packages/locks/README.md:14', 'ts', 'locks-14.ts'],
      ['packages/locks/README.md:19', 'js', 'locks-19.mjs'],
    ]);
    expect(withJs[3]!.code).toBe('d();\n');
  });

  it('points connect string literals at the test server, keeping their chroot below the namespace', () => {
    const code = [
      "ZooKeeper.connect('127.0.0.1:2181/app', { sessionTimeout: 10_000 });",
      'ZooKeeper.connect("zk1:2181,zk2:2181,zk3:2181");',
      'ZooKeeper.connect(`[::1]:2181`);',
      "const path = '/locks/a:1'; const url = 'http://x';",
    ].join('\n');
    const { code: out, replaced } = pointAt(code, '127.0.0.1:41000', '/t-1');
    expect(replaced).toBe(3);
    expect(out.split('\n')).toEqual([
      "ZooKeeper.connect('127.0.0.1:41000/t-1/app', { sessionTimeout: 10_000 });",
      'ZooKeeper.connect("127.0.0.1:41000/t-1");',
      'ZooKeeper.connect(`127.0.0.1:41000/t-1`);',
      "const path = '/locks/a:1'; const url = 'http://x';",
    ]);
  });
});

function mkdirp(rel: string): void {
  rmSync(join(dir, rel), { recursive: true, force: true });
  mkdirSync(join(dir, rel), { recursive: true });
}
