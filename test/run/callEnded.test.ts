import { describe, expect, it } from 'vitest';
import { callEnded } from '../../lib/run/attemptVerdict.js';

// Whether a killed run's journal shows an item's call ended (its orphaned reservations then count
// nothing for it) or a retry may have been on the wire at the kill (they count it at what it reserved).

const row = (attempt: number, status: 'ok' | 'empty' | 'error', error_class: string | null = null) => ({ attempt, status, error_class });

describe('callEnded', () => {
  it.each([
    ['a reply', row(1, 'ok'), false, true],
    ['an empty reply', row(2, 'empty'), false, true],
    ['a refusal (permanent)', row(1, 'error', 'refusal'), false, true],
    ['a rejected key', row(1, 'error', 'auth'), false, true],
    ['the last attempt the policy allows, unanswered', row(3, 'error', 'timeout'), true, true],
    ['the last attempt the policy allows, a 500', row(3, 'error', 'server_error'), false, true],
    ['an attempt sent and never answered, retries left', row(1, 'error', 'connection'), true, false],
    ['a 429 with retries left (its retry may have been in flight)', row(1, 'error', 'rate_limit'), false, false],
    ['a 500 with retries left', row(2, 'error', 'server_error'), false, false],
  ] as const)('%s', (_what, last, unanswered, ended) => {
    expect(callEnded(last, unanswered, 3)).toBe(ended);
  });
});
