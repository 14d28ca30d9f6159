import { describe, expect, it } from 'vitest';
import { COMMAND_HELP } from '../../lib/cli/help.js';
import { OPTIONS } from '../../lib/cli/args.js';
import { allBatteries } from '../../lib/batteries/index.js';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { runMain } from '../helpers/cli.js';
import { REPO_ROOT } from '../helpers/campaigns.js';

const COMMANDS = Object.keys(OPTIONS);

describe('--help on every command', () => {
  it('every command the parser knows has help, and every help names a command the parser knows', () => {
    expect(Object.keys(COMMAND_HELP).sort()).toEqual([...COMMANDS].sort());
  });

  it.each(COMMANDS.map((c) => [c]))('sondage %s --help prints its usage and every option it takes, and exits 0', async (command) => {
    for (const flag of ['--help', '-h']) {
      const { code, stdout, stderr } = await runMain([command, flag]);
      expect(code).toBe(0);
      expect(stderr).toBe('');
      expect(stdout).toMatch(new RegExp(`^Usage:\\n  sondage ${command}\\b`));
      // The help and the parser agree: each accepted option is explained.
      for (const option of Object.keys(OPTIONS[command]!)) expect(stdout, `--${option}`).toContain(`--${option}`);
    }
  });

  it('`sondage help <command>` is the same text; `--version` prints the version', async () => {
    expect((await runMain(['help', 'plan'])).stdout).toBe((await runMain(['plan', '--help'])).stdout);
    const v = await runMain(['--version']);
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/^sondage \d+\.\d+\.\d+\n$/);
  });

  it('a usage error shows the help of the command it concerns', async () => {
    const { code, stderr } = await runMain(['plan', 'c.yaml', '--replies', 'x']);
    expect(code).toBe(1);
    expect(stderr).toContain("sondage plan: Unknown option '--replies'");
    expect(stderr).toContain('Usage:\n  sondage plan <campaign.yaml>');
  });
});

describe('sondage batteries', () => {
  it('lists every battery with its languages, phases, who answers them and their readers', async () => {
    const { code, stdout } = await runMain(['batteries']);
    expect(code).toBe(0);
    for (const b of allBatteries()) {
      expect(stdout).toContain(`${b.name} — ${b.title}`);
      expect(stdout).toContain(`languages: ${b.languages.join(' ')}`);
      for (const p of b.phaseCatalog) expect(stdout).toMatch(new RegExp(`\\n    ${p.name}( \\(some designs\\))?: answered by .*; read by ${p.readers.join(', ').replace(/[*+]/g, '\\$&')}\\n`));
    }
    expect(stdout).toContain('verify: answered by the model under test, after generate; read by ptrue');
    expect(stdout).toContain('judge: answered by the judge, after generate; read by judge:*');
    expect(stdout).toContain('--input qa_pairs=FILE');
  });

  it('shows one battery by name, and names the known ones for an unknown name', async () => {
    const one = await runMain(['batteries', 'xvalue']);
    expect(one.stdout).toMatch(/^xvalue — /);
    expect(one.stdout).not.toContain('far6 — ');
    const bad = await runMain(['batteries', 'x-value']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('no battery named "x-value"; sondage knows far6, xvalue, ptrue');
  });

  it('quotes labels that hold a space, so that each list reads one way', async () => {
    const { stdout } = await runMain(['batteries', 'xvalue']);
    expect(stdout).toContain('parse#A: Pass "Biased Prompting" "Factual Error" invalid');
    // Split as a shell splits words, every line of labels gives back the battery's vocabulary.
    const xvalue = allBatteries().find((b) => b.name === 'xvalue')!;
    for (const [reader, labels] of Object.entries(xvalue.vocabulary)) {
      const line = stdout.split('\n').find((l) => l.startsWith(`    ${reader}: `))!;
      const words = [...line.slice(`    ${reader}: `.length).matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) => (m[1] !== undefined ? JSON.parse(`"${m[1]}"`) : m[2]) as string);
      if (labels.length <= 12) expect(words).toEqual(labels);
    }
  });
});

describe('--retry-failed', () => {
  it('run --help and docs/local-run.md name the same failures it asks again, and the same it does not need to', async () => {
    const help = COMMAND_HELP['run']!.options['--retry-failed']!;
    const docs = await readFile(path.join(REPO_ROOT, 'docs/local-run.md'), 'utf8');
    const permanent = /- permanent \(([^)]*)\)/.exec(docs)![1]!;
    const transient = /- transient \(([^)]*)\)/.exec(docs)![1]!;
    const classes = (text: string) => [...text.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
    for (const c of classes(permanent)) expect(help.split(';')[0]).toContain(c);
    expect(permanent).toContain('empty reply');
    expect(help.split(';')[0]).toContain('empty reply');
    for (const c of classes(transient)) expect(help.split(';')[1]).toContain(c);
  });
});
