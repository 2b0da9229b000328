/**
 * ZooKeeper's error codes and their Java names: the table of `KeeperException.Code`.
 */

/**
 * ZooKeeper error codes, as `KeeperException.Code` in the Java client defines them.
 * Negative numbers travel in the `err` field of a reply header or of a multi result.
 */
export const ErrorCode = {
  OK: 0,
  SYSTEMERROR: -1,
  RUNTIMEINCONSISTENCY: -2,
  DATAINCONSISTENCY: -3,
  CONNECTIONLOSS: -4,
  MARSHALLINGERROR: -5,
  UNIMPLEMENTED: -6,
  OPERATIONTIMEOUT: -7,
  BADARGUMENTS: -8,
  UNKNOWNSESSION: -12,
  NEWCONFIGNOQUORUM: -13,
  RECONFIGINPROGRESS: -14,
  APIERROR: -100,
  NONODE: -101,
  NOAUTH: -102,
  BADVERSION: -103,
  NOCHILDRENFOREPHEMERALS: -108,
  NODEEXISTS: -110,
  NOTEMPTY: -111,
  SESSIONEXPIRED: -112,
  INVALIDCALLBACK: -113,
  INVALIDACL: -114,
  AUTHFAILED: -115,
  SESSIONMOVED: -118,
  NOTREADONLY: -119,
  EPHEMERALONLOCALSESSION: -120,
  NOWATCHER: -121,
  REQUESTTIMEOUT: -122,
  RECONFIGDISABLED: -123,
  SESSIONCLOSEDREQUIRESASLAUTH: -124,
  QUOTAEXCEEDED: -125,
  THROTTLEDOP: -127,
} as const;

/** The Java name of an error code (`'NONODE'`, `'BADVERSION'`, ...). */
export type ErrorCodeName = keyof typeof ErrorCode;
/** A numeric ZooKeeper error code. */
export type ErrorCodeValue = (typeof ErrorCode)[ErrorCodeName];

const codeNames = new Map<number, ErrorCodeName>(
  (Object.keys(ErrorCode) as ErrorCodeName[]).map((name) => [ErrorCode[name], name]),
);

/** The Java name of a numeric code, or `'UNKNOWN(<n>)'` for a code this client does not know. */
export function errorCodeName(code: number): string {
  return codeNames.get(code) ?? `UNKNOWN(${code})`;
}

/** True when `code` is one of the {@link ErrorCode} values (0, OK, included). */
export function isErrorCode(code: number): code is ErrorCodeValue {
  return codeNames.has(code);
}
