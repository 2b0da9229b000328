/**
 * The session's public state and its transition table. One value, one place that changes it
 * (StateKeeper.transition, state-keeper.ts); this table says which changes are legal, so an
 * impossible sequence is a bug caught at once rather than a silent inconsistency.
 */

/**
 * - `connecting`: no session yet (first connection attempt).
 * - `connected`: a server holds our session; requests flow.
 * - `connectedReadOnly`: connected to a server cut off from the quorum (`canBeReadOnly`); reads only.
 * - `suspended`: the connection dropped; the session may still be alive on the ensemble.
 * - `lost`: no server answered for the whole negotiated session timeout, so the ensemble has
 *   probably expired the session; only a reconnect can tell (-> `connected` or `expired`).
 * - `expired`: the ensemble confirmed the session is gone, with its ephemeral nodes and watches.
 * - `authFailed`: the server refused our credentials.
 * - `closed`: closed by the application.
 */
export type SessionState =
  | 'connecting'
  | 'connected'
  | 'connectedReadOnly'
  | 'suspended'
  | 'lost'
  | 'expired'
  | 'authFailed'
  | 'closed';

/** The legal next states of each state. Terminal states lead only to `closed`. */
export const transitions: Readonly<Record<SessionState, readonly SessionState[]>> = {
  connecting: ['connected', 'connectedReadOnly', 'expired', 'authFailed', 'closed'],
  connected: ['suspended', 'expired', 'authFailed', 'closed'],
  connectedReadOnly: ['suspended', 'expired', 'authFailed', 'closed'],
  suspended: ['connected', 'connectedReadOnly', 'lost', 'expired', 'authFailed', 'closed'],
  lost: ['connected', 'connectedReadOnly', 'expired', 'authFailed', 'closed'],
  expired: ['closed'],
  authFailed: ['closed'],
  closed: [],
};

/** True when the state allows requests to be sent. */
export function isConnected(state: SessionState): boolean {
  return state === 'connected' || state === 'connectedReadOnly';
}

/** True when no further transition except `closed` can happen. */
export function isTerminal(state: SessionState): boolean {
  return state === 'expired' || state === 'authFailed' || state === 'closed';
}

/** Throws unless `from -> to` is in the table. */
export function assertTransition(from: SessionState, to: SessionState): void {
  if (!transitions[from].includes(to)) throw new Error(`illegal session state transition ${from} -> ${to}`);
}
