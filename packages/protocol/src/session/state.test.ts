import { describe, expect, it } from 'vitest';
import { assertTransition, isConnected, isTerminal, transitions, type SessionState } from './state.js';

const all = Object.keys(transitions) as SessionState[];

describe('state - transition table', () => {
  it('allows exactly the listed transitions', () => {
    for (const from of all) {
      for (const to of all) {
        const legal = transitions[from].includes(to);
        if (legal) expect(() => assertTransition(from, to)).not.toThrow();
        else expect(() => assertTransition(from, to), `${from} -> ${to}`).toThrow(`${from} -> ${to}`);
      }
    }
  });

  it('reaches closed from every state but closed', () => {
    for (const from of all) expect(transitions[from].includes('closed')).toBe(from !== 'closed');
  });

  it('leaves terminal states only to closed', () => {
    for (const from of all.filter(isTerminal)) expect(transitions[from].filter((s) => s !== 'closed')).toEqual([]);
  });

  it('never goes back to connecting, and never connects without passing a disconnect', () => {
    for (const from of all) expect(transitions[from]).not.toContain('connecting');
    expect(transitions.connected).not.toContain('connectedReadOnly');
    expect(transitions.connectedReadOnly).not.toContain('connected');
  });

  it('classifies connected states', () => {
    expect(all.filter(isConnected).sort()).toEqual(['connected', 'connectedReadOnly']);
  });
});
