import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_FRAME_SIZE } from '../constants.js';
import { InvalidArgumentError } from '../errors.js';
import { resolveOptions } from './options.js';

describe('options - resolveOptions', () => {
  it('applies defaults', () => {
    const o = resolveOptions('a:1/app', {});
    expect(o).toMatchObject({
      hosts: [{ host: 'a', port: 1 }],
      chroot: '/app',
      sessionTimeout: 30_000,
      connectTimeout: 10_000,
      requestTimeout: undefined,
      maxFrameSize: DEFAULT_MAX_FRAME_SIZE,
      canBeReadOnly: false,
      coalesceReads: 'auto',
      whileDisconnected: 'fail',
      auth: [],
    });
  });

  it('encodes string credentials as UTF-8', () => {
    const o = resolveOptions('a', { auth: [{ scheme: 'digest', auth: 'ü:p' }] });
    expect(o.auth[0]?.auth).toEqual(Buffer.from('ü:p', 'utf8'));
  });

  it('accepts the largest session timeout the handshake can carry, and long connect and request timeouts', () => {
    const o = resolveOptions('a', { sessionTimeout: 2 ** 31 - 1, connectTimeout: 1e10, requestTimeout: 1e12 });
    expect(o).toMatchObject({ sessionTimeout: 2 ** 31 - 1, connectTimeout: 1e10, requestTimeout: 1e12 });
  });

  it.each([
    [{ sessionTimeout: -1 }, 'sessionTimeout'],
    [{ sessionTimeout: 2 ** 31 }, 'sessionTimeout'],
    [{ sessionTimeout: 1e10 }, 'sessionTimeout'],
    [{ sessionTimeout: 1500.5 }, 'sessionTimeout'],
    [{ sessionTimeout: Number.NaN }, 'sessionTimeout'],
    [{ sessionTimeout: 0 }, 'sessionTimeout'],
    [{ sessionTimeout: '30000' as never }, 'sessionTimeout'],
    [{ connectTimeout: -5 }, 'connectTimeout'],
    [{ requestTimeout: '100' as never }, 'requestTimeout'],
    [{ auth: [{ scheme: 'digest', auth: 42 as never }] }, 'auth'],
    [{ connectTimeout: Number.NaN }, 'connectTimeout'],
    [{ requestTimeout: Infinity }, 'requestTimeout'],
    [{ maxFrameSize: 10 }, 'maxFrameSize'],
    [{ maxFrameSize: 1.5e6 + 0.5 }, 'maxFrameSize'],
    [{ auth: [{ scheme: '', auth: 'x' }] }, 'auth'],
    [{ whileDisconnected: 'later' as never }, 'whileDisconnected'],
    [{ coalesceReads: 'yes' as never }, 'coalesceReads'],
  ])('refuses %j', (opts, arg) => {
    try {
      resolveOptions('a', opts);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidArgumentError);
      expect((e as InvalidArgumentError).argument).toBe(arg);
    }
  });
});
