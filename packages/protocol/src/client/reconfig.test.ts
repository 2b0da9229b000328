import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../errors.js';
import type { Stat } from '../jute/data.js';
import { JuteReader } from '../jute/reader.js';
import { JuteWriter } from '../jute/writer.js';
import { readReconfigRequest, writeReconfigRequest } from '../jute/proto.js';
import { clientHosts, parseConfig, parseMemberLine, reconfigBody, serverListOf, type ReconfigChange } from './reconfig.js';

const stat = {} as Stat;

// As a 3.8 server writes /zookeeper/config (QuorumVerifier.toString()).
const TEXT = [
  'server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181',
  'server.2=zk2:2888:3888:participant;0.0.0.0:2182',
  'server.3=[fe80::1]:2888:3888:observer;[::1]:2183',
  'server.4=10.0.0.4:2888:3888:participant',
  'server.5=10.0.0.5:2888:3888|10.1.0.5:2888:3888:observer;2185',
  'version=1000000a3',
].join('\n');

describe('reconfig - parseConfig', () => {
  it('reads members, roles, client addresses and the hexadecimal version', () => {
    const c = parseConfig(TEXT, stat);
    expect(c.version).toBe(0x1000000a3n);
    expect(c.raw).toBe(TEXT);
    expect(c.members.map((m) => [m.id, m.host, m.quorumPort, m.electionPort, m.role, m.client])).toEqual([
      [1, '127.0.0.1', 2888, 3888, 'participant', { host: '127.0.0.1', port: 2181 }],
      [2, 'zk2', 2888, 3888, 'participant', { host: '0.0.0.0', port: 2182 }],
      [3, 'fe80::1', 2888, 3888, 'observer', { host: '::1', port: 2183 }],
      [4, '10.0.0.4', 2888, 3888, 'participant', undefined],
      [5, '10.0.0.5', 2888, 3888, 'observer', { host: '0.0.0.0', port: 2185 }],
    ]);
    expect(c.members[0]?.spec).toBe('server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181');
  });

  it('an empty node (standalone, reconfig never used) has no members and version -1', () => {
    expect(parseConfig('', stat)).toMatchObject({ members: [], version: -1n });
  });

  it.each(['server.x=a:1:2', 'server.1=a:1', 'server.1=a:1:2:voter', 'server.1=a:0:2', 'server.1=a:1:2;b:c', 'server.1=[::1:1:2'])('skips an unreadable line %j', (line) => {
    expect(parseMemberLine(line)).toBeUndefined();
  });
});

describe('reconfig - clientHosts', () => {
  it('uses the quorum host for a wildcard client address, keeps observers, drops members without a client port', () => {
    expect(clientHosts(parseConfig(TEXT, stat))).toEqual([
      { host: '127.0.0.1', port: 2181 },
      { host: 'zk2', port: 2182 },
      { host: '::1', port: 2183 },
      { host: '10.0.0.5', port: 2185 },
    ]);
  });
});

describe('reconfig - reconfigBody', () => {
  it('incremental: joining lines and objects, leaving ids, nulls for what is absent', () => {
    expect(
      reconfigBody({
        joining: ['server.6=h6:1:2;3', { id: 7, host: '::1', quorumPort: 4, electionPort: 5, role: 'observer', client: { host: '::1', port: 6 } }],
        leaving: [1, 2],
        fromConfig: 0x100000003n,
      }),
    ).toEqual({ joiningServers: 'server.6=h6:1:2;3,server.7=[::1]:4:5:observer;[::1]:6', leavingServers: '1,2', newMembers: null, curConfigId: 0x100000003n });
    expect(reconfigBody({ leaving: [3] })).toEqual({ joiningServers: null, leavingServers: '3', newMembers: null, curConfigId: -1n });
  });

  it('non-incremental: the whole membership', () => {
    expect(reconfigBody({ members: ['server.1=a:1:2;3', 'server.2=b:1:2;3'] })).toEqual({ joiningServers: null, leavingServers: null, newMembers: 'server.1=a:1:2;3,server.2=b:1:2;3', curConfigId: -1n });
  });

  it('the body round-trips through the ReconfigRequest codec, nulls kept', () => {
    const body = reconfigBody({ leaving: [4] });
    const w = new JuteWriter();
    writeReconfigRequest(w, body);
    expect(readReconfigRequest(new JuteReader(w.toBuffer()))).toEqual(body);
  });

  const bad: Array<[string, ReconfigChange]> = [
    ['nothing', {}],
    ['empty lists', { joining: [], leaving: [] }],
    ['both kinds', { members: ['server.1=a:1:2'], leaving: [2] }],
    ['empty members', { members: [] }],
    ['bad line', { joining: ['server.1=a:1'] }],
    ['two in one entry', { joining: ['server.1=a:1:2,server.2=b:1:2'] }],
    ['duplicate id', { joining: ['server.1=a:1:2', 'server.1=b:1:2'] }],
    ['bad id', { leaving: [-1] }],
    ['fractional id', { leaving: [1.5] }],
    ['joining and leaving', { joining: ['server.2=a:1:2'], leaving: [2] }],
    ['version not bigint', { leaving: [1], fromConfig: 3 as unknown as bigint }],
    ['version below -1', { leaving: [1], fromConfig: -2n }],
    ['bad role', { joining: [{ id: 1, host: 'a', quorumPort: 1, electionPort: 2, role: 'voter' as 'observer' }] }],
    ['empty host', { joining: [{ id: 1, host: '', quorumPort: 1, electionPort: 2 }] }],
  ];
  it.each(bad)('refuses %s', (_name, change) => {
    expect(() => reconfigBody(change)).toThrow(InvalidArgumentError);
  });
});

describe('reconfig - serverListOf', () => {
  it('takes a connect string (no chroot or the client’s) or addresses', () => {
    expect(serverListOf('a:1,b:2', '')).toEqual([{ host: 'a', port: 1 }, { host: 'b', port: 2 }]);
    expect(serverListOf('a:1/app', '/app')).toEqual([{ host: 'a', port: 1 }]);
    expect(serverListOf([{ host: 'a', port: 1 }], '/app')).toEqual([{ host: 'a', port: 1 }]);
  });

  it.each<[string, string | Array<{ host: string; port: number }>]>([
    ['another chroot', 'a:1/other'],
    ['no host', ''],
    ['empty array', []],
    ['bad port', [{ host: 'a', port: 0 }]],
    ['empty host', [{ host: '', port: 1 }]],
  ])('refuses %s', (_name, input) => {
    expect(() => serverListOf(input, '/app')).toThrow(InvalidArgumentError);
  });
});
