/**
 * The ```ts blocks of the READMEs (and, when asked, the ```js ones: plain JavaScript variants),
 * as programs the consumer test compiles and runs. A block that is a fragment, not a program,
 * says so on the line before its fence:
 *
 *     <!-- not-runnable: the reason -->
 */
import { readFileSync } from 'node:fs';
import { basename, dirname, relative } from 'node:path';

/** One ```ts block of a README. */
export interface ReadmeBlock {
  /** Where it is, as `path:line` of its opening fence (path relative to `root`). */
  readonly where: string;
  /** `ts` for a ```ts block, `js` for a ```js one (plain JavaScript, run as written). */
  readonly lang: 'ts' | 'js';
  /** A file name for it: `<package>-<line>.ts`, or `.mjs` for a js block (`root` for the repository README). */
  readonly fileName: string;
  readonly code: string;
  /** The reason given by a `<!-- not-runnable: ... -->` marker; undefined for a program. */
  readonly notRunnable: string | undefined;
}

const NOT_RUNNABLE = /^<!--\s*not-runnable:\s*(.+?)\s*-->$/;

/** Every ```ts (or ```typescript) block of the markdown file `path`; with `js`, the ```js (```javascript) blocks too. */
export function readmeBlocks(path: string, root: string, options: { js?: boolean } = {}): ReadmeBlock[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const rel = relative(root, path);
  const name = dirname(rel) === '.' ? 'root' : basename(dirname(rel));
  const blocks: ReadmeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*(\S*)/.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, lang] = open;
    let end = i + 1;
    while (end < lines.length && lines[end]!.trim() !== fence) end++;
    const kind = lang === 'ts' || lang === 'typescript' ? 'ts' : options.js && (lang === 'js' || lang === 'javascript') ? 'js' : undefined;
    if (kind !== undefined) {
      let before = i - 1;
      while (before >= 0 && lines[before]!.trim() === '') before--;
      const marker = before >= 0 ? NOT_RUNNABLE.exec(lines[before]!.trim()) : null;
      blocks.push({
        where: `${rel}:${i + 1}`,
        lang: kind,
        fileName: `${name}-${i + 1}.${kind === 'ts' ? 'ts' : 'mjs'}`,
        code: lines.slice(i + 1, end).map((l) => l.slice(indent!.length)).join('\n') + '\n',
        notRunnable: marker?.[1],
      });
    }
    i = end;
  }
  return blocks;
}

/**
 * Points the connect strings of `code` (string literals such as `'zk1:2181,zk2:2181/app'` or
 * `'127.0.0.1:2181'`) at `hosts`, keeping each literal's chroot below `base`: `'h:2181/app'`
 * becomes `'<hosts><base>/app'`. Returns the code and how many literals it replaced.
 */
export function pointAt(code: string, hosts: string, base: string): { code: string; replaced: number } {
  let replaced = 0;
  const hostPort = String.raw`(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):\d+`;
  const literal = new RegExp(String.raw`(['"\x60])(${hostPort}(?:,${hostPort})*)(/[^'"\x60]*)?\1`, 'g');
  const out = code.replace(literal, (_m, quote: string, _hosts: string, chroot: string | undefined) => {
    replaced++;
    return `${quote}${hosts}${base}${chroot ?? ''}${quote}`;
  });
  return { code: out, replaced };
}
