/** Flags: --help on every command, unknown flags, empty and absurd values, missing and extra arguments. */
import path from 'node:path';
import { tinyCampaign } from './inputs.js';
import { ROOT, SECRET } from './types.js';
import type { Case, Expect } from './types.js';

export function flagCases(): Case[] {
  const out: Case[] = [];
  const commands = ['run', 'plan', 'analyze', 'start', 'status', 'stop', 'results', 'purge', 'batteries', 'new', 'view', 'schema'];
  const add = (name: string, expect: Expect, argv: (dir: string) => Promise<string[]> | string[], names?: string): void => {
    out.push({ group: 'flags', name: `flags/${name}`, expect, ...(names ? { names } : {}), setup: async (dir) => { await tinyCampaign(dir); return argv(dir); } });
  };
  add('no-command', 'either', () => []);
  add('unknown-command', 'refuse', () => ['frobnicate'], 'frobnicate');
  add('top-help', 'either', () => ['--help']);
  for (const c of commands) {
    add(`${c}/--help`, 'either', () => [c, '--help']);
    add(`${c}/-h`, 'either', () => [c, '-h']);
    add(`${c}/unknown-flag`, 'refuse', () => [c, 'demo.yaml', '--bogus-flag'], 'bogus-flag');
    add(`${c}/secret-as-flag`, 'refuse', () => [c, `--api-key=${SECRET}`]);
    add(`${c}/end-of-options`, 'either', () => [c, 'demo.yaml', '--']);
  }
  const run = (...flags: string[]) => (): string[] => ['run', 'demo.yaml', '--quiet', '--data-dir', 'data', ...flags];
  for (const [flag, values] of [['--threads', ['0', '-1', 'abc', '1.5', '', '1e9', 'Infinity']], ['--max-wait', ['-1', 'abc', '', 'NaN', 'Infinity']], ['--poll-interval', ['0', '-1', 'abc', '', 'NaN']]] as const) {
    for (const v of values) add(`run/${flag}=${v || 'empty'}`, 'refuse', run(`${flag}=${v}`), flag.slice(2));
  }
  add('run/data-dir-empty', 'refuse', () => ['run', 'demo.yaml', '--data-dir=']);
  add('run/data-dir-is-campaign', 'refuse', () => ['run', 'demo.yaml', '--quiet', '--data-dir', 'demo.yaml'], 'demo.yaml');
  add('run/two-campaigns', 'refuse', () => ['run', 'demo.yaml', 'demo.yaml', '--quiet']);
  add('run/flag-twice', 'either', run('--threads', '1', '--threads', '2'));
  add('run/no-campaign', 'refuse', () => ['run']);
  add('run/campaign-is-folder', 'refuse', () => ['run', '.']);
  add('run/ok', 'either', run('--threads', '1'));
  const byo = (...flags: string[]) => (): string[] => ['analyze', '--battery', 'ptrue', '--replies', path.join(ROOT, 'examples/ptrue/byo-rows.csv'), '--out', 'out', ...flags];
  // P(True) takes 0 draws (no bootstrap; its settings' minDraws).
  for (const v of ['0', '-5', 'abc', '1.5', '', '1e12', '99999999999999999999']) add(`analyze/--draws=${v || 'empty'}`, v === '0' ? 'either' : 'refuse', byo(`--draws=${v}`), 'draws');
  for (const v of ['abc', '', '1e400', '-1.5', 'NaN']) add(`analyze/--seed=${v || 'empty'}`, 'refuse', byo('--draws', '20', `--seed=${v}`), 'seed');
  add('analyze/battery-unknown', 'refuse', () => ['analyze', '--battery', 'far7', '--replies', 'x.csv', '--out', 'out'], 'far7');
  add('analyze/battery-empty', 'refuse', () => ['analyze', '--battery=', '--replies', path.join(ROOT, 'examples/ptrue/byo-rows.csv'), '--out', 'out']);
  add('analyze/replies-without-out', 'refuse', () => ['analyze', '--battery', 'ptrue', '--replies', path.join(ROOT, 'examples/ptrue/byo-rows.csv')]);
  add('analyze/out-without-replies', 'refuse', () => ['analyze', '--battery', 'ptrue', '--out', 'out']);
  add('analyze/replies-without-battery', 'refuse', () => ['analyze', '--replies', path.join(ROOT, 'examples/ptrue/byo-rows.csv'), '--out', 'out']);
  add('analyze/replies-and-campaign', 'refuse', () => ['analyze', 'demo.yaml', '--battery', 'ptrue', '--replies', path.join(ROOT, 'examples/ptrue/byo-rows.csv'), '--out', 'out']);
  add('analyze/input-no-equals', 'refuse', byo('--draws', '20', '--input', 'qa_pairs'), 'qa_pairs');
  add('analyze/input-empty-file', 'refuse', byo('--draws', '20', '--input', 'qa_pairs='), 'qa_pairs');
  add('analyze/out-empty', 'refuse', () => ['analyze', '--battery', 'ptrue', '--replies', path.join(ROOT, 'examples/ptrue/byo-rows.csv'), '--out=']);
  add('analyze/campaign-no-data', 'either', () => ['analyze', 'demo.yaml', '--data-dir', 'nothing-here']);
  add('analyze/drop-bad-rows-with-campaign', 'refuse', () => ['analyze', 'demo.yaml', '--drop-bad-rows']);
  for (const v of ['abc', '-1', '', '1e9']) add(`status/--failures=${v || 'empty'}`, 'refuse', () => ['status', 'demo.yaml', `--failures=${v}`], 'failures');
  add('status/nothing-collected', 'either', () => ['status', 'demo.yaml']);
  add('stop/nothing-running', 'either', () => ['stop', 'demo.yaml']);
  add('purge/without-yes', 'either', () => ['purge', 'demo.yaml']);
  add('purge/data-dir-is-root', 'refuse', () => ['purge', 'demo.yaml', '--data-dir', '/', '--yes']);
  add('purge/data-dir-is-campaign-folder', 'refuse', () => ['purge', 'demo.yaml', '--data-dir', '.', '--yes']);
  for (const v of ['abc', '-1', '99999', '', '1.5']) add(`view/--port=${v || 'empty'}`, 'refuse', () => ['view', 'demo.yaml', `--port=${v}`], 'port');
  add('new/dir-is-a-file', 'refuse', () => ['new', 'battery', 'mine', '--dir', 'demo.yaml'], 'demo.yaml');
  // `new` writes a battery of one's own; a built-in battery's name is answered with its demo.
  add('new/built-in-battery', 'refuse', () => ['new', 'far6', '--dir', 'demo.yaml'], 'far6');
  add('new/unknown-battery', 'refuse', () => ['new', 'far7', '--dir', 'n'], 'far7');
  add('new/no-battery', 'either', () => ['new']);
  add('results/without-aws-stack', 'refuse', () => ['results', 'demo.yaml', '--outputs', 'nowhere.json']);
  add('start/without-aws', 'refuse', () => ['start', 'demo.yaml']);
  add('schema/extra-positional', 'either', () => ['schema', 'extra']);
  add('batteries/extra-positional', 'either', () => ['batteries', 'extra']);
  add('plan/aws', 'either', () => ['plan', 'demo.yaml', '--aws']);
  return out;
}
