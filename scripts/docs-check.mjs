#!/usr/bin/env node
/**
 * Checks the documentation site that `npm run docs` builds (docs/api), as a reader gets it:
 *
 * 1. Every local link resolves: for each href and src of every HTML page, and each entry of the
 *    sidebar (TypeDoc draws it from assets/navigation.js), a file exists; a link with a
 *    #fragment into an HTML page needs an element with that id (or name) there.
 * 2. In a real browser (headless Chromium, driven over the Chrome DevTools Protocol), the landing
 *    page and every guide page (documents/*.html: recipes, guides, migration) load with no console
 *    error, no uncaught exception, no failed request and no HTTP error, served over HTTP on
 *    127.0.0.1, and the sidebar is drawn (the site's scripts ran).
 * 3. The layout of each of those pages: exactly one h1, and nothing in the content column runs
 *    past its right edge (a wide table under the "On This Page" column, or off the screen) at a
 *    1280 px and a 1920 px wide window; what scrolls inside its own box (overflow-x) does not count.
 *
 *   node scripts/docs-check.mjs [DIR] [--page REL]...   check DIR (default docs/api)
 *   node scripts/docs-check.mjs --self-test             check a broken site made for the purpose;
 *                                                       passes only if every fault is reported
 *
 * Chromium: `chromium` (or `chromium-browser`, `google-chrome`) on PATH, or the CHROMIUM env var.
 * When none is found and we run as root on Debian (as .ci/run does on a fresh machine), it is
 * installed with `apt-get install chromium` (quietly; once). Otherwise the check says what to
 * install and fails.
 *
 * Node built-ins only. The DevTools Protocol speaks over a WebSocket: Node 22+ has a global
 * WebSocket; on Node 20 (>= 20.10) this script runs itself again with --experimental-websocket.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateSync } from 'node:zlib';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The pages loaded in the browser by default: the landing page and every guide page. */
const defaultPages = (root) => ['index.html', ...(existsSync(join(root, 'documents')) ? readdirSync(join(root, 'documents')).filter((f) => f.endsWith('.html')).sort().map((f) => `documents/${f}`) : [])];
/** Window widths at which the content column must hold its content. */
const WIDTHS = [1280, 1920];
/** How long a page may take to load and go quiet, in ms. */
const PAGE_BOUND_MS = 20_000;
/** A page is settled once no request has been in flight for this long, in ms. */
const QUIET_MS = 300;

if (typeof globalThis.WebSocket !== 'function') {
  // Node 20: the WebSocket client exists behind a flag (Node 22 made it global).
  if (process.execArgv.includes('--experimental-websocket')) fail('this Node has no WebSocket client: run the check with Node 22 or later');
  const again = spawnSync(process.execPath, ['--experimental-websocket', '--no-warnings', fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(again.status ?? 1);
}

/** Everything wrong with the site in `root`, as lines; `log` gets what was checked. */
async function checkSite(root, pages, log) {
  if (!existsSync(join(root, 'index.html'))) return [`${root}/index.html does not exist (run npm run docs first)`];
  const problems = checkLinks(root, log);
  for (const page of pages) {
    if (!existsSync(join(root, page))) problems.push(`${page}: the page to load does not exist`);
  }
  problems.push(...(await checkInBrowser(root, pages.filter((p) => existsSync(join(root, p))), log)));
  return problems;
}

// ---------------------------------------------------------------------------------------------
// 1. Local links

/** Broken local links of every HTML page under `root`, and of the sidebar's data. */
function checkLinks(root, log) {
  const problems = [];
  const pages = walk(root).filter((f) => f.endsWith('.html'));
  const ids = new Map(); // html file -> Set of ids
  const idsOf = (file) => {
    if (!ids.has(file)) {
      const set = new Set();
      for (const m of readFileSync(file, 'utf8').matchAll(/\s(?:id|name)="([^"]*)"/g)) set.add(decodeEntities(m[1]));
      ids.set(file, set);
    }
    return ids.get(file);
  };
  let links = 0;
  const check = (from, href, what) => {
    const target = localTarget(root, from, href);
    if (target === undefined) return;
    links++;
    const where = `${relative(root, from) || '.'}: ${what} ${href}`;
    if (target.outside) return void problems.push(`${where} leads outside the site`);
    if (!existsSync(target.file)) return void problems.push(`${where}: ${relative(root, target.file)} does not exist`);
    if (target.fragment && target.file.endsWith('.html') && !idsOf(target.file).has(target.fragment)) {
      problems.push(`${where}: ${relative(root, target.file)} has no element with id "${target.fragment}"`);
    }
  };
  for (const page of pages) {
    const html = readFileSync(page, 'utf8');
    for (const m of html.matchAll(/\s(href|src)="([^"]*)"/g)) check(page, decodeEntities(m[2]), m[1]);
  }
  // The sidebar is drawn by script from assets/navigation.js (paths relative to the site root).
  const navFile = join(root, 'assets', 'navigation.js');
  let entries = 0;
  if (existsSync(navFile)) {
    const data = /"([A-Za-z0-9+/=]+)"/.exec(readFileSync(navFile, 'utf8'));
    if (!data) problems.push('assets/navigation.js: no navigation data found');
    else {
      const walkNav = (nodes) => {
        for (const n of nodes) {
          if (n.path) {
            entries++;
            check(join(root, 'index.html'), n.path, `sidebar entry "${n.text}" ->`);
          }
          if (n.children) walkNav(n.children);
        }
      };
      walkNav(JSON.parse(inflateSync(Buffer.from(data[1], 'base64')).toString('utf8')));
    }
  }
  log(`links: ${links} local links in ${pages.length} pages and ${entries} sidebar entries checked`);
  return problems;
}

/** The file (and fragment) a local link of `from` points at; undefined for an external link. */
function localTarget(root, from, href) {
  if (href === '' || /^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) return undefined;
  const [pathAndQuery, fragment = ''] = href.split('#', 2);
  const path = decodeURIComponent(pathAndQuery.split('?', 1)[0]);
  let file = path === '' ? from : resolve(dirname(from), path);
  if (path.endsWith('/') || (existsSync(file) && statSync(file).isDirectory())) file = join(file, 'index.html');
  const outside = relative(root, file).startsWith('..');
  return { file, fragment: decodeURIComponent(fragment), outside };
}

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)]));
}

function decodeEntities(s) {
  return s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

// ---------------------------------------------------------------------------------------------
// 2. In the browser

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.md': 'text/plain; charset=utf-8',
  '.ico': 'image/x-icon',
};

/** Serves `root` on 127.0.0.1 (a port the OS chooses): files only, GET and HEAD. */
async function serve(root) {
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    let file = resolve(root, '.' + path);
    if (file !== root && !file.startsWith(root + sep)) return void res.writeHead(403).end();
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (!existsSync(file)) return void res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: ${path}\n`);
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    res.end(req.method === 'HEAD' ? undefined : readFileSync(file));
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  return { server, base: `http://127.0.0.1:${server.address().port}/` };
}

/** Loads each page in headless Chromium; returns what went wrong. */
async function checkInBrowser(root, pages, log) {
  const chromium = findChromium();
  const { server, base } = await serve(root);
  const profile = mkdtempSync(join(tmpdir(), 'zk-docs-check-'));
  const flags = ['--headless=new', '--remote-debugging-port=0', `--user-data-dir=${profile}`, '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--no-default-browser-check', '--disable-extensions', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
  if (process.getuid?.() === 0) flags.push('--no-sandbox'); // Chromium refuses to run as root with its sandbox
  const browser = spawn(chromium, [...flags, 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const problems = [];
  let cdp;
  try {
    const endpoint = await devtoolsEndpoint(browser);
    cdp = await Cdp.open(endpoint);
    const version = await cdp.send('Browser.getVersion');
    log(`browser: ${version.product} (${chromium}), site served at ${base}`);
    for (const page of pages) problems.push(...(await loadPage(cdp, base, page, log)));
  } catch (err) {
    problems.push(`browser: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    // Browser.close ends every Chromium process before the profile goes; SIGKILL if it hangs.
    const exited = new Promise((ok) => (browser.exitCode !== null || browser.signalCode !== null ? ok() : browser.once('exit', ok)));
    await cdp?.send('Browser.close').catch(() => {});
    cdp?.close();
    const killer = setTimeout(() => browser.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(killer);
    server.close();
    rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  }
  return problems;
}

/** Opens `page` in a new tab, waits for it to load and go quiet; reports errors seen meanwhile. */
async function loadPage(cdp, base, page, log) {
  const url = new URL(page, base).href;
  const t0 = performance.now();
  const { targetId } = await cdp.send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await cdp.send('Target.attachToTarget', { targetId, flatten: true });
  const problems = [];
  const inflight = new Set();
  let lastActivity = performance.now();
  let loaded = false;
  const off = cdp.listen(sessionId, (method, p) => {
    switch (method) {
      case 'Runtime.consoleAPICalled':
        if (p.type === 'error' || p.type === 'assert') problems.push(`${page}: console.${p.type}: ${p.args.map(remoteText).join(' ')}`);
        break;
      case 'Runtime.exceptionThrown': {
        const d = p.exceptionDetails;
        problems.push(`${page}: uncaught ${d.exception?.description?.split('\n')[0] ?? d.text} (${d.url ?? ''}:${d.lineNumber + 1})`);
        break;
      }
      case 'Log.entryAdded':
        if (p.entry.level === 'error') problems.push(`${page}: ${p.entry.source} error: ${p.entry.text}${p.entry.url ? ` (${p.entry.url})` : ''}`);
        break;
      case 'Network.requestWillBeSent':
        inflight.add(p.requestId);
        lastActivity = performance.now();
        break;
      case 'Network.responseReceived':
        if (p.response.status >= 400) problems.push(`${page}: HTTP ${p.response.status} for ${p.response.url}`);
        break;
      case 'Network.loadingFinished':
        inflight.delete(p.requestId);
        lastActivity = performance.now();
        break;
      case 'Network.loadingFailed':
        inflight.delete(p.requestId);
        lastActivity = performance.now();
        if (!p.canceled) problems.push(`${page}: request failed: ${p.errorText} (${p.type})`);
        break;
      case 'Page.loadEventFired':
        loaded = true;
        lastActivity = performance.now();
        break;
    }
  });
  try {
    for (const domain of ['Runtime', 'Log', 'Network', 'Page']) await cdp.send(`${domain}.enable`, {}, sessionId);
    const nav = await cdp.send('Page.navigate', { url }, sessionId);
    if (nav.errorText) problems.push(`${page}: navigation failed: ${nav.errorText}`);
    while (!(loaded && inflight.size === 0 && performance.now() - lastActivity >= QUIET_MS)) {
      if (performance.now() - t0 > PAGE_BOUND_MS) {
        problems.push(`${page}: did not finish loading within ${PAGE_BOUND_MS} ms (${loaded ? `${inflight.size} request(s) in flight` : 'no load event'})`);
        break;
      }
      await new Promise((ok) => setTimeout(ok, 50));
    }
    // What a reader sees: a title, a heading, and the sidebar the site's scripts draw.
    const { result } = await cdp.send('Runtime.evaluate', {
      expression: `JSON.stringify({ title: document.title, h1: document.querySelector('h1')?.textContent?.trim() ?? '', sidebar: document.querySelectorAll('#tsd-nav-container a, .tsd-navigation a').length })`,
      returnByValue: true,
    }, sessionId);
    const seen = JSON.parse(result.value);
    if (!seen.h1) problems.push(`${page}: no heading (h1) on the page`);
    problems.push(...(await checkLayout(cdp, sessionId, page)));
    if (seen.sidebar === 0) problems.push(`${page}: the sidebar was not drawn (no links in the navigation)`);
    log(`page: ${page}: "${seen.title}", h1 "${seen.h1}", ${seen.sidebar} sidebar links, ${Math.round(performance.now() - t0)} ms`);
  } finally {
    off();
    await cdp.send('Target.closeTarget', { targetId }).catch(() => {});
  }
  return problems;
}

/**
 * What a reader of `page` sees wrong in its layout: not exactly one h1, and at each width of
 * WIDTHS, the outermost elements of the content column (TypeDoc's .col-content) whose content's
 * right edge passes the column's, unless a box between them and the column scrolls or clips (overflow-x).
 */
async function checkLayout(cdp, sessionId, page) {
  const problems = [];
  const evaluate = async (expression) => JSON.parse((await cdp.send('Runtime.evaluate', { expression, returnByValue: true }, sessionId)).result.value);
  const h1 = await evaluate(`JSON.stringify([...document.querySelectorAll('h1')].map((h) => h.textContent.trim().slice(0, 60)))`);
  if (h1.length > 1) problems.push(`${page}: ${h1.length} h1 headings (one a page): ${h1.map((t) => JSON.stringify(t)).join(', ')}`);
  for (const width of WIDTHS) {
    await cdp.send('Emulation.setDeviceMetricsOverride', { width, height: 900, deviceScaleFactor: 1, mobile: false }, sessionId);
    await new Promise((ok) => setTimeout(ok, 100)); // a frame or two for the new layout
    const seen = await evaluate(OVERFLOW_PROBE);
    if (seen.missing) problems.push(`${page}: no content column (.col-content) at ${width} px`);
    else if (seen.out.length > 0) {
      const which = seen.out.slice(0, 3).map((o) => `<${o.tag}> "${o.text}" by ${o.by} px`);
      problems.push(`${page}: at ${width} px, ${seen.out.length} element(s) run past the content column's right edge: ${which.join('; ')}`);
    }
  }
  await cdp.send('Emulation.clearDeviceMetricsOverride', {}, sessionId);
  return problems;
}

/** Evaluated in the page: the outermost elements that overflow the content column (see checkLayout). */
const OVERFLOW_PROBE = `(() => {
  const col = document.querySelector('.col-content');
  if (!col) return JSON.stringify({ missing: true });
  const edge = col.getBoundingClientRect().right + 1;
  const clipped = (el) => {
    for (let a = el.parentElement; a && a !== col; a = a.parentElement) if (getComputedStyle(a).overflowX !== 'visible') return true;
    return false;
  };
  // An element's content edge: TypeDoc's headings reach into the column's padding with an empty
  // padding of their own (room for the anchor icon), which hides nothing.
  const right = (el) => { const cs = getComputedStyle(el); return el.getBoundingClientRect().right - parseFloat(cs.paddingRight) - parseFloat(cs.borderRightWidth); };
  const past = (el) => el.getBoundingClientRect().width > 0 && right(el) > edge;
  const out = [];
  for (const el of col.querySelectorAll('*')) {
    if (!past(el) || clipped(el) || (el.parentElement !== col && past(el.parentElement))) continue;
    out.push({ tag: el.tagName.toLowerCase(), text: (el.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 40), by: Math.round(right(el) - edge + 1) });
  }
  return JSON.stringify({ out });
})()`;

function remoteText(o) {
  return o.value !== undefined ? String(o.value) : (o.description ?? o.type);
}

/** The browser's DevTools WebSocket URL, from the line Chromium prints on stderr. */
function devtoolsEndpoint(browser) {
  return new Promise((ok, no) => {
    let err = '';
    const timer = setTimeout(() => no(new Error(`Chromium printed no DevTools endpoint within 30 s:\n${err}`)), 30_000);
    browser.stderr.setEncoding('utf8');
    browser.stderr.on('data', (chunk) => {
      err += chunk;
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        ok(m[1]);
      }
    });
    browser.once('exit', (code, signal) => {
      clearTimeout(timer);
      no(new Error(`Chromium exited (${signal ?? code}) before it listened:\n${err}`));
    });
  });
}

/** A minimal Chrome DevTools Protocol client over the global WebSocket (flat sessions). */
class Cdp {
  #ws;
  #next = 1;
  #pending = new Map();
  #listeners = new Set();

  static async open(url) {
    const ws = new WebSocket(url);
    await new Promise((ok, no) => {
      ws.addEventListener('open', ok, { once: true });
      ws.addEventListener('error', () => no(new Error(`could not open ${url}`)), { once: true });
    });
    return new Cdp(ws);
  }

  constructor(ws) {
    this.#ws = ws;
    ws.addEventListener('message', (e) => {
      const msg = JSON.parse(typeof e.data === 'string' ? e.data : Buffer.from(e.data).toString('utf8'));
      if (msg.id !== undefined) {
        const p = this.#pending.get(msg.id);
        this.#pending.delete(msg.id);
        if (msg.error) p?.no(new Error(`${p.method}: ${msg.error.message}`));
        else p?.ok(msg.result);
      } else {
        for (const l of this.#listeners) l(msg.sessionId, msg.method, msg.params);
      }
    });
    ws.addEventListener('close', () => {
      for (const p of this.#pending.values()) p.no(new Error(`${p.method}: the DevTools connection closed`));
      this.#pending.clear();
    });
  }

  send(method, params = {}, sessionId) {
    const id = this.#next++;
    this.#ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    return new Promise((ok, no) => this.#pending.set(id, { ok, no, method }));
  }

  /** Calls `fn(method, params)` for each event of `sessionId`; returns the unsubscribe. */
  listen(sessionId, fn) {
    const l = (sid, method, params) => sid === sessionId && fn(method, params);
    this.#listeners.add(l);
    return () => this.#listeners.delete(l);
  }

  close() {
    this.#ws.close();
  }
}

/** Chromium's path; installs it with apt-get when missing and we are root on Debian. */
function findChromium() {
  if (process.env.CHROMIUM) return process.env.CHROMIUM;
  const onPath = () => ['chromium', 'chromium-browser', 'google-chrome'].map(which).find(Boolean);
  let found = onPath();
  if (found) return found;
  if (process.getuid?.() !== 0 || !which('apt-get')) {
    fail('no Chromium found: install it (Debian: apt-get install chromium) or set CHROMIUM to its path');
  }
  console.log('docs-check: installing Chromium (apt-get install chromium)');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'chromium'], { env, encoding: 'utf8' });
  let done = install();
  if (done.status !== 0) {
    // A fresh machine may have no package lists yet.
    spawnSync('apt-get', ['update', '-qq'], { env, encoding: 'utf8' });
    done = install();
  }
  found = onPath();
  if (done.status !== 0 || !found) fail(`apt-get install chromium failed:\n${done.stdout}${done.stderr}`);
  return found;
}

function which(cmd) {
  try {
    return execFileSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || undefined;
  } catch {
    return undefined;
  }
}

function fail(message) {
  console.error(`docs-check: ${message}`);
  process.exit(1);
}

// ---------------------------------------------------------------------------------------------
// The self-test: a broken site, every fault of which must be reported.

async function selfTest() {
  const root = mkdtempSync(join(tmpdir(), 'zk-docs-broken-'));
  try {
    mkdirSync(join(root, 'documents'));
    mkdirSync(join(root, 'assets'));
    // As on TypeDoc's pages: an icon (else Chromium asks for /favicon.ico) and a sidebar.
    const nav = (prefix) => `<link rel="icon" href="data:,"><nav class="tsd-navigation"><a href="${prefix}index.html">Home</a></nav>`;
    writeFileSync(join(root, 'assets', 'ok.js'), '');
    writeFileSync(join(root, 'index.html'), `<!doctype html><title>broken</title>${nav('')}<div class="col-content"><h1 id="top">Landing</h1></div>
<a href="documents/Missing.html">a page that does not exist</a>
<a href="documents/Mutex.html#no-such-section">a section that does not exist</a>
<a href="documents/Mutex.html#ok">a section that exists</a>
<a href="https://example.org/">an external link (not checked)</a>
<script src="assets/ok.js"></script>`);
    writeFileSync(join(root, 'documents', 'Mutex.html'), `<!doctype html><title>recipe</title>${nav('../')}<div class="col-content" style="width: 600px"><h1 id="ok">Recipe</h1><h1>A second h1</h1>
<table><tr><td style="white-space: nowrap">${'a wide cell '.repeat(20)}</td></tr></table>
<div style="overflow-x: auto"><pre>${'scrolls in its own box '.repeat(20)}</pre></div></div>
<script src="../assets/missing.js"></script>
<script>console.error('something broke'); null.property;</script>`);
    const expected = [
      /index\.html: href documents\/Missing\.html: documents\/Missing\.html does not exist/,
      /index\.html: href documents\/Mutex\.html#no-such-section: documents\/Mutex\.html has no element with id "no-such-section"/,
      /documents\/Mutex\.html: src \.\.\/assets\/missing\.js: assets\/missing\.js does not exist/,
      /documents\/Mutex\.html: HTTP 404 for http:\/\/127\.0\.0\.1:\d+\/assets\/missing\.js/,
      /documents\/Mutex\.html: console\.error: something broke/,
      /documents\/Mutex\.html: uncaught TypeError: Cannot read properties of null/,
      /documents\/Mutex\.html: 2 h1 headings \(one a page\): "Recipe", "A second h1"/,
      /documents\/Mutex\.html: at 1280 px, 1 element\(s\) run past the content column's right edge: <table> "a wide cell/,
      /documents\/Mutex\.html: at 1920 px, 1 element\(s\) run past the content column's right edge: <table> "a wide cell/,
    ];
    const problems = await checkSite(root, defaultPages(root), (line) => console.log(`  (broken site) ${line}`));
    console.log(`docs-check --self-test: the broken site's problems, as reported:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    const missed = expected.filter((re) => !problems.some((p) => re.test(p)));
    const unexpected = problems.filter((p) => !expected.some((re) => re.test(p)) && !/network error|Failed to load resource/.test(p));
    if (missed.length > 0 || unexpected.length > 0) {
      fail(`self-test failed:\n${missed.map((re) => `  not reported: ${re}`).join('\n')}\n${unexpected.map((p) => `  not expected: ${p}`).join('\n')}`);
    }
    console.log(`docs-check --self-test: all ${expected.length} faults reported (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

// Last, so that the classes above are initialised before it runs.
const args = process.argv.slice(2);
const started = performance.now();
if (args.includes('--self-test')) {
  await selfTest();
} else {
  const pages = [];
  let dir = 'docs/api';
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--page') pages.push(args[++i]);
    else dir = args[i];
  }
  const problems = await checkSite(resolve(dir), pages.length > 0 ? pages : defaultPages(resolve(dir)), console.log);
  if (problems.length > 0) {
    console.error(`docs-check: ${problems.length} problem(s) in ${dir}:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    process.exit(1);
  }
  console.log(`docs-check: ${dir} is fine (${((performance.now() - started) / 1000).toFixed(1)} s)`);
}
