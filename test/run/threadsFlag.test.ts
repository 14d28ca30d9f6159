import { describe, expect, it } from 'vitest';
import { parse } from '../../lib/cli/args.js';
import { parseThreads, runCommand } from '../../lib/cli/commands/run.js';
import { commandHelp } from '../../lib/cli/help.js';
import { SondageError } from '../../lib/errors.js';

describe('sondage run --threads', () => {
  it('takes a whole number of threads', () => {
    expect(parseThreads(undefined)).toBeUndefined();
    expect(parseThreads('1')).toBe(1);
    expect(parseThreads(' 4 ')).toBe(4);
    expect(parseThreads('16')).toBe(16);
    expect(parse('run', ['c.yaml', '--threads', '2']).values['threads']).toBe('2');
  });

  it.each(['0', '-1', '1.5', 'two', '', '17', '1e1'])('refuses %j with the flag, the value and what it takes', (raw) => {
    expect(() => parseThreads(raw)).toThrow(SondageError);
    expect(() => parseThreads(raw)).toThrow(`--threads ${JSON.stringify(raw)} is not a whole number from 1 to 16`);
  });

  it('refuses a bad value before reading the campaign file', async () => {
    await expect(runCommand(parse('run', ['does-not-exist.yaml', '--threads', 'many']))).rejects.toThrow(/--threads "many"/);
  });

  it('is in `sondage run --help`', () => {
    expect(commandHelp('run')).toContain('--threads N');
  });
});
