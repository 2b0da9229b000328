import { describe, expect, it } from 'vitest';
import { parseCons, parseWchp, watchNotifications } from './fourletter.js';

// Excerpts of ZooKeeper 3.8.0's answers on this machine.
const MNTR = [
  'zk_watch_count\t4',
  'zk_avg_node_created_watch_count\t1.0',
  'zk_sum_node_created_watch_count\t3',
  'zk_cnt_node_deleted_watch_count\t2',
  'zk_sum_node_deleted_watch_count\t5',
  'zk_max_node_children_watch_count\t7',
  'zk_sum_node_children_watch_count\t0',
  'zk_sum_node_changed_watch_count\t2',
  'zk_sum_dead_watchers_cleaner_latency\t40',
  '',
].join('\n');

describe('bench four-letter words', () => {
  it('mntr: the watchers reached are the sum of the four node_*_watch_count sums', () => {
    expect(watchNotifications(MNTR)).toBe(10);
    expect(watchNotifications('mntr is not executed because it is not in the whitelist.\n')).toBeUndefined();
  });

  it('wchp: sessions by path; a refusal or no answer is unknown, not "no watchers"', () => {
    const w = parseWchp('/e/x\n\t0x100001d8c0d0001\n\t0x100001d8c0d0002\n/e/y\n\t0x100001d8c0d0001\n\n');
    expect([...(w?.entries() ?? [])].map(([p, s]) => [p, [...s]])).toEqual([
      ['/e/x', ['0x100001d8c0d0001', '0x100001d8c0d0002']],
      ['/e/y', ['0x100001d8c0d0001']],
    ]);
    expect(parseWchp('')?.size).toBe(0);
    expect(parseWchp('wchp is not executed because it is not in the whitelist.\n')).toBeUndefined();
    expect(parseWchp(undefined)).toBeUndefined();
  });

  it('cons: the last operation and response time by session; a connection in its handshake has none', () => {
    const cons = parseCons(
      [
        ' /127.0.0.1:60628[0](queued=0,recved=1,sent=0)',
        ' /127.0.0.1:60624[1](queued=0,recved=91,sent=117,sid=0x20002e9455e0000,lop=GETC,est=1795970221415,to=2000,lcxid=0x57,lzxid=0x10000003e,lresp=48850819,llat=10,minlat=0,avglat=13,maxlat=77)',
        ' /127.0.0.1:60630[1](queued=0,recved=9,sent=9,sid=0x20002e9455e0001,lop=PING,est=1795970221500,to=2000,lcxid=0x2,lzxid=0xffffffffffffffff,lresp=48851002,llat=0,minlat=0,avglat=0,maxlat=1)',
        '',
      ].join('\n'),
    );
    expect([...(cons?.entries() ?? [])]).toEqual([
      ['0x20002e9455e0000', { lastOp: 'GETC', lastResponseMs: 48850819 }],
      ['0x20002e9455e0001', { lastOp: 'PING', lastResponseMs: 48851002 }],
    ]);
    expect(parseCons('')?.size).toBe(0);
    expect(parseCons('cons is not executed because it is not in the whitelist.\n')).toBeUndefined();
  });
});
