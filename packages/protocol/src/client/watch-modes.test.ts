import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../errors.js';
import { WatcherType } from '../constants.js';
import { WatchRegistry } from '../session/watches.js';
import { hasWatchModes, needs39 } from './server-features.js';
import { chooseWatcherType } from './watch-modes.js';

const noop = (): void => {};

describe('watch modes - which WatcherType a persistent removal or check sends', () => {
  it('a persistent kind alone on its path goes as Any (every 3.5+ server), beside another kind by its mode', () => {
    const watches = new WatchRegistry();
    watches.add('persistent', '/p', noop);
    expect(chooseWatcherType('persistent', ['persistent'], WatcherType.Any, watches, '/p')).toEqual({ type: WatcherType.Any, needs39: false });
    watches.add('data', '/p', noop);
    expect(chooseWatcherType('persistent', ['persistent'], WatcherType.Any, watches, '/p')).toEqual({ type: WatcherType.Persistent, needs39: true });
    // A watch on another path does not count.
    watches.add('persistentRecursive', '/r', noop);
    watches.add('child', '/other', noop);
    expect(chooseWatcherType('persistentRecursive', ['persistentRecursive'], WatcherType.Any, watches, '/r')).toEqual({ type: WatcherType.Any, needs39: false });
    // Two persistent modes on one path (3.9 keeps both): each by its mode.
    watches.add('persistent', '/r', noop);
    expect(chooseWatcherType('persistentRecursive', ['persistentRecursive'], WatcherType.Any, watches, '/r')).toEqual({ type: WatcherType.PersistentRecursive, needs39: true });
  });

  it('the other kinds are sent as they always were', () => {
    const watches = new WatchRegistry();
    watches.add('persistent', '/p', noop);
    watches.add('data', '/p', noop);
    expect(chooseWatcherType('data', ['data', 'exist'], WatcherType.Data, watches, '/p')).toEqual({ type: WatcherType.Data, needs39: false });
    expect(chooseWatcherType('any', ['data', 'exist', 'child', 'persistent', 'persistentRecursive'], WatcherType.Any, watches, '/p')).toEqual({ type: WatcherType.Any, needs39: false });
  });

  it('the probe: OK or NOWATCHER is a 3.9 server, MARSHALLINGERROR (3.5-3.8) or UNIMPLEMENTED (3.4) an older one', () => {
    expect(WatcherType.Persistent).toBe(4);
    expect(WatcherType.PersistentRecursive).toBe(5);
    expect(hasWatchModes(ErrorCode.OK)).toBe(true);
    expect(hasWatchModes(ErrorCode.NOWATCHER)).toBe(true);
    expect(hasWatchModes(ErrorCode.MARSHALLINGERROR)).toBe(false);
    expect(hasWatchModes(ErrorCode.UNIMPLEMENTED)).toBe(false);
    expect(hasWatchModes(ErrorCode.CONNECTIONLOSS)).toBeUndefined();
  });

  it('the refusal is an UnimplementedError naming the operation, the path and 3.9', () => {
    const err = needs39('createWithStat', '/a', "a create's Stat inside a transaction", false);
    expect(err.code).toBe(ErrorCode.UNIMPLEMENTED);
    expect(err.name).toBe('UnimplementedError');
    expect(err.message).toBe("UNIMPLEMENTED (createWithStat /a): a create's Stat inside a transaction needs ZooKeeper 3.9 or newer; this server is older");
    expect(needs39('checkWatches', '/p', 'x', true).message).toMatch(/this server is 3\.4$/);
  });
});
