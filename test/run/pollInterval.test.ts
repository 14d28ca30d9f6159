import { describe, expect, it } from 'vitest';
import { parse } from '../../lib/cli/args.js';
import { parsePollInterval, runCommand } from '../../lib/cli/commands/run.js';
import { SondageError } from '../../lib/errors.js';

describe('sondage run --poll-interval', () => {
  it('takes seconds, fractions included, and gives milliseconds', () => {
    expect(parsePollInterval(undefined)).toBeUndefined();
    expect(parsePollInterval('30')).toBe(30_000);
    expect(parsePollInterval('0.5')).toBe(500);
    expect(parsePollInterval('86400')).toBe(86_400_000);
    expect(parse('run', ['c.yaml', '--poll-interval', '45']).pollInterval).toBe('45');
  });

  it.each(['0', '-5', 'abc', '', '10s', 'Infinity', 'NaN', '1e9', '86401'])('refuses %j with the flag, the value and what it takes', (raw) => {
    expect(() => parsePollInterval(raw)).toThrow(SondageError);
    expect(() => parsePollInterval(raw)).toThrow(`--poll-interval ${JSON.stringify(raw)} is not a valid number of seconds; give a positive number up to 86400`);
  });

  it('refuses a bad value before reading the campaign file', async () => {
    const args = parse('run', ['does-not-exist.yaml', '--poll-interval', 'soon']);
    await expect(runCommand(args)).rejects.toThrow(/--poll-interval "soon"/);
  });
});
