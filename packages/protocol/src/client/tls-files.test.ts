import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors.js';
import { tlsFromFiles } from './tls-files.js';

const dir = mkdtempSync(join(tmpdir(), 'zk-tls-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const write = (name: string, text: string) => {
  // As a rotation does it: a new file renamed over the old one.
  writeFileSync(join(dir, `${name}.tmp`), text);
  renameSync(join(dir, `${name}.tmp`), join(dir, name));
  return join(dir, name);
};

describe('tlsFromFiles', () => {
  it('reads the files at every call: a rotated file is picked up by the next one', async () => {
    const tls = tlsFromFiles({ ca: write('ca.pem', 'CA 1'), cert: write('c.pem', 'CERT 1'), key: write('k.pem', 'KEY 1'), passphrase: write('pass', 'pw-1\n') }, { servername: 'zk.internal' });
    expect(await tls()).toEqual({ servername: 'zk.internal', ca: Buffer.from('CA 1'), cert: Buffer.from('CERT 1'), key: Buffer.from('KEY 1'), passphrase: 'pw-1' });
    write('ca.pem', 'CA 2');
    write('c.pem', 'CERT 2');
    expect(await tls()).toMatchObject({ ca: Buffer.from('CA 2'), cert: Buffer.from('CERT 2'), key: Buffer.from('KEY 1') });
  });

  it('a file missing at a call rejects that call with the read error; the next call reads again', async () => {
    const tls = tlsFromFiles({ pfx: join(dir, 'later.p12') });
    await expect(tls()).rejects.toMatchObject({ code: 'ENOENT' });
    write('later.p12', 'PFX');
    expect(await tls()).toEqual({ pfx: Buffer.from('PFX') });
  });

  it.each([
    [{ ca: '' }, /files\.ca/],
    [{ cert: '/c.pem' }, /cert and key go together/],
    [{ pfx: '/p.p12', cert: '/c.pem', key: '/k.pem' }, /exclude each other/],
  ])('refuses %j before reading anything', (files, message) => {
    expect(() => tlsFromFiles(files)).toThrow(InvalidArgumentError);
    expect(() => tlsFromFiles(files)).toThrow(message);
  });
});
