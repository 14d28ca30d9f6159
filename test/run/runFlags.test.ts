import { describe, expect, it } from 'vitest';
import { parse } from '../../lib/cli/args.js';
import { parsePollInterval, parseThreads, runCommand } from '../../lib/cli/commands/run.js';
import { commandHelp } from '../../lib/cli/help.js';
import { SondageError } from '../../lib/errors.js';

/** A number-valued flag of `sondage run`: how its text is read, and what it refuses. */
interface NumberFlag {
  readonly flag: string;
  readonly read: (raw: string | undefined) => number | undefined;
  /** Texts it takes, with the number each gives. */
  readonly takes: readonly [string, number][];
  readonly refuses: readonly string[];
  /** What the error says after the flag and the value. */
  readonly says: string;
  /** A bad value given on the command line. */
  readonly bad: string;
}

const FLAGS: readonly NumberFlag[] = [
  {
    // seconds, fractions included, given as milliseconds
    flag: '--poll-interval',
    read: parsePollInterval,
    takes: [
      ['30', 30_000],
      ['0.5', 500],
      ['86400', 86_400_000],
    ],
    refuses: ['0', '-5', 'abc', '', '10s', 'Infinity', 'NaN', '1e9', '86401'],
    says: 'is not a valid number of seconds; give a positive number up to 86400',
    bad: 'soon',
  },
  {
    // a whole number of threads
    flag: '--threads',
    read: parseThreads,
    takes: [
      ['1', 1],
      [' 4 ', 4],
      ['16', 16],
    ],
    refuses: ['0', '-1', '1.5', 'two', '', '17', '1e1'],
    says: 'is not a whole number from 1 to 16',
    bad: 'many',
  },
];

describe.each(FLAGS)('sondage run $flag', ({ flag, read, takes, refuses, says, bad }) => {
  it('is undefined when the flag is not given', () => {
    expect(read(undefined)).toBeUndefined();
  });

  it.each(takes)('takes %j as %j', (raw, value) => {
    expect(read(raw)).toBe(value);
  });

  it.each(refuses)('refuses %j with the flag, the value and what it takes', (raw) => {
    expect(() => read(raw)).toThrow(SondageError);
    expect(() => read(raw)).toThrow(`${flag} ${JSON.stringify(raw)} ${says}`);
  });

  it('refuses a bad value before reading the campaign file', async () => {
    await expect(runCommand(parse('run', ['does-not-exist.yaml', flag, bad]))).rejects.toThrow(`${flag} ${JSON.stringify(bad)}`);
  });
});

describe('sondage run: the number flags on the command line', () => {
  it('hands --poll-interval and --threads on as given', () => {
    expect(parse('run', ['c.yaml', '--poll-interval', '45']).pollInterval).toBe('45');
    expect(parse('run', ['c.yaml', '--threads', '2']).values['threads']).toBe('2');
  });

  it('lists --threads in `sondage run --help`', () => {
    expect(commandHelp('run')).toContain('--threads N');
  });
});
