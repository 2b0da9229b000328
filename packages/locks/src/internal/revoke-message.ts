/**
 * The revocation request on Curator's protocol, as bytes: what the floor (a revocable lease's
 * watch on its own node) recognises. Asking a holder to release is `locks/revocation.ts`.
 */

/** Curator's `LockInternals.REVOKE_MESSAGE`: the ASCII bytes of `__REVOKE__`. */
export const REVOKE_MESSAGE: Buffer = Buffer.from('__REVOKE__', 'latin1');

/** @internal True when `data` is the revocation request. */
export function isRevokeMessage(data: Uint8Array): boolean {
  return REVOKE_MESSAGE.equals(data);
}
