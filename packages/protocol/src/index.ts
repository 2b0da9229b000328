/**
 * `@zk/protocol`: a ZooKeeper client written from the wire protocol up.
 * @packageDocumentation
 */
export {
  ErrorCode,
  errorCodeName,
  ZooKeeperError,
  DecodeError,
  InvalidArgumentError,
  PacketTooLargeError,
  ClientClosedError,
  fromCode,
} from './errors.js';
export type { ErrorCodeName, ErrorCodeValue, ErrorContext } from './errors.js';
