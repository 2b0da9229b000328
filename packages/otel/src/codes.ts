/**
 * ZooKeeper error codes by their Java names (`KeeperException.Code`), for `error.type`. The codes
 * are the wire protocol's, so this package needs nothing from `@zk/protocol` to name them.
 */
const names: ReadonlyMap<number, string> = new Map([
  [-1, 'SYSTEMERROR'], [-2, 'RUNTIMEINCONSISTENCY'], [-3, 'DATAINCONSISTENCY'], [-4, 'CONNECTIONLOSS'],
  [-5, 'MARSHALLINGERROR'], [-6, 'UNIMPLEMENTED'], [-7, 'OPERATIONTIMEOUT'], [-8, 'BADARGUMENTS'],
  [-12, 'UNKNOWNSESSION'], [-13, 'NEWCONFIGNOQUORUM'], [-14, 'RECONFIGINPROGRESS'], [-100, 'APIERROR'],
  [-101, 'NONODE'], [-102, 'NOAUTH'], [-103, 'BADVERSION'], [-108, 'NOCHILDRENFOREPHEMERALS'],
  [-110, 'NODEEXISTS'], [-111, 'NOTEMPTY'], [-112, 'SESSIONEXPIRED'], [-113, 'INVALIDCALLBACK'],
  [-114, 'INVALIDACL'], [-115, 'AUTHFAILED'], [-118, 'SESSIONMOVED'], [-119, 'NOTREADONLY'],
  [-120, 'EPHEMERALONLOCALSESSION'], [-121, 'NOWATCHER'], [-122, 'REQUESTTIMEOUT'], [-123, 'RECONFIGDISABLED'],
  [-124, 'SESSIONCLOSEDREQUIRESASLAUTH'], [-125, 'QUOTAEXCEEDED'], [-127, 'THROTTLEDOP'],
]);

/** The Java name of a ZooKeeper error code (`-101` gives `'NONODE'`), or `'UNKNOWN(<n>)'`. */
export function codeName(code: number): string {
  return names.get(code) ?? `UNKNOWN(${code})`;
}

/** The codes by name, for options that name them (`{ exists: ['NONODE'] }`). */
export function codeOf(name: string): number | undefined {
  for (const [code, n] of names) if (n === name) return code;
  return undefined;
}
