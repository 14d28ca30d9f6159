/**
 * A sweep of hostile inputs against the CLI, on the local path only (simulated providers, no
 * network): mutated campaign files, design data files, bring-your-own reply files and flags, each
 * made from the three demos in a temporary copy (examples/ is never edited). Every case runs the
 * real binary in its own process with a timeout and is sorted into
 *   ok        exit 0 and its invariant holds (output equal to the unmutated run's where the
 *             mutation must not matter), or a clear refusal (exit non-zero, a message, no stack)
 *   wrong     exit 0 where a refusal was due, or results that differ from the unmutated run's
 *   vague     refused, but without naming the file the case broke
 *   crash     a stack trace, or an exit code the CLI does not document
 *   hang      still running at the timeout
 *   secret    a planted secret appears in the output
 *
 *   node --import tsx scripts/hostile-sweep.ts [--only GROUP[,GROUP]] [--out DIR] [--jobs N] [--timeout S] [--list]
 *
 * Groups: yaml, design, byo, flags, store (a campaign's stored Parquet parts, damaged). Kept out of the test suite on purpose: it takes minutes.
 * The parts, one concern each, are in scripts/hostile-sweep/: the cases of each group, the inputs
 * they edit, and the runner that judges one case.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { byoCases } from './hostile-sweep/byoCases.js';
import { designCases } from './hostile-sweep/designCases.js';
import { flagCases } from './hostile-sweep/flagCases.js';
import { judge } from './hostile-sweep/judge.js';
import { storeCases } from './hostile-sweep/storeCases.js';
import { BIN, GROUPS } from './hostile-sweep/types.js';
import type { Case, Outcome } from './hostile-sweep/types.js';
import { yamlCases } from './hostile-sweep/yamlCases.js';

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { only: { type: 'string' }, out: { type: 'string' }, jobs: { type: 'string' }, timeout: { type: 'string' }, list: { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, match: { type: 'string' } } });
  if (values.help) {
    process.stdout.write(`usage: node --import tsx scripts/hostile-sweep.ts [--only GROUP[,GROUP]] [--match TEXT] [--out DIR] [--jobs N] [--timeout S] [--list]

Runs the CLI on several hundred hostile inputs made from the three demos (in temporary copies) and
sorts each outcome: ok (exit 0 with its invariant, or a clear refusal), wrong (exit 0 where a
refusal was due, or results unlike the unmutated run's), vague (a refusal not naming the file),
crash (stack trace or undocumented exit code), hang (timeout), secret (a planted secret echoed).
  --only    groups: ${GROUPS.join(', ')} (default: all)
  --match   only the cases whose name contains TEXT
  --out     keep the case folders and write report.tsv there (default: a temporary folder, removed)
  --jobs    cases at a time (default 2)
  --timeout seconds per case before it counts as a hang (default 60)
  --list    print the case names and stop
Exit status: 0 when every case is ok, 1 otherwise.
`);
    return 0;
  }
  const only = values.only ? values.only.split(',') : [...GROUPS];
  for (const g of only) if (!(GROUPS as readonly string[]).includes(g)) throw new Error(`--only: unknown group ${g} (groups: ${GROUPS.join(', ')})`);
  const all = [...yamlCases(), ...designCases(), ...byoCases(), ...flagCases(), ...storeCases()];
  let cases = all.filter((c) => only.includes(c.group));
  if (values.match) cases = cases.filter((c) => c.name.includes(values.match!) || c.name.endsWith('/baseline'));
  // Baselines of the selected cases run first: the others compare with them.
  const needed = new Set(cases.map((c) => c.baseline).filter(Boolean));
  cases = [...all.filter((c) => needed.has(c.name) && !cases.includes(c)), ...cases];
  const ordered = [...cases.filter((c) => c.name === c.baseline), ...cases.filter((c) => c.name !== c.baseline)];
  if (values.list) {
    process.stdout.write(`${ordered.map((c) => `${c.name}\t${c.expect}`).join('\n')}\n`);
    return 0;
  }
  const jobs = Math.max(1, Number(values.jobs ?? 2));
  const timeoutMs = Math.max(1, Number(values.timeout ?? 60)) * 1000;
  const root = values.out ? path.resolve(values.out) : await mkdtemp(path.join(os.tmpdir(), 'hostile-sweep-'));
  await mkdir(root, { recursive: true });
  const baselines = new Map<string, string>();
  const outcomes: Outcome[] = [];
  const started = Date.now();
  const runOne = async (c: Case, i: number): Promise<void> => {
    const dir = path.join(root, `${String(i).padStart(4, '0')}-${c.name.replace(/[^\w.=-]+/g, '_').slice(0, 80)}`);
    await mkdir(dir, { recursive: true });
    const outcome = await judge(c, dir, timeoutMs, baselines);
    if (c.name === c.baseline) {
      if (outcome.verdict !== 'ok') throw new Error(`baseline ${c.name} failed: ${outcome.why}`);
      baselines.set(c.name, outcome.fingerprint);
    }
    outcomes.push(outcome);
    process.stderr.write(`\r${outcomes.length}/${ordered.length} ${Math.round((Date.now() - started) / 1000)} s `);
  };
  const baselineCases = ordered.filter((c) => c.name === c.baseline);
  const rest = ordered.filter((c) => c.name !== c.baseline);
  let next = 0;
  const pool = async (list: readonly Case[], offset: number): Promise<void> => {
    next = 0;
    await Promise.all(Array.from({ length: jobs }, async () => {
      while (next < list.length) {
        const i = next++;
        await runOne(list[i]!, offset + i);
      }
    }));
  };
  await pool(baselineCases, 0);
  await pool(rest, baselineCases.length);
  process.stderr.write('\n');

  const verdicts = ['ok', 'wrong', 'vague', 'crash', 'hang', 'secret'] as const;
  const lines = [`group\tcases\t${verdicts.join('\t')}`];
  for (const g of GROUPS.filter((x) => only.includes(x) || ordered.some((c) => c.group === x))) {
    const mine = outcomes.filter((o) => o.c.group === g);
    lines.push(`${g}\t${mine.length}\t${verdicts.map((v) => mine.filter((o) => o.verdict === v).length).join('\t')}`);
  }
  lines.push(`total\t${outcomes.length}\t${verdicts.map((v) => outcomes.filter((o) => o.verdict === v).length).join('\t')}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  const bad = outcomes.filter((o) => o.verdict !== 'ok').sort((a, b) => a.c.name.localeCompare(b.c.name));
  for (const o of bad) {
    process.stdout.write(`\n${o.verdict.toUpperCase()} ${o.c.name} (exit ${o.code}): ${o.why}\n  reproduce: cd ${o.dir} && node ${BIN} ${o.argv.map((a) => (/^[\w./=-]+$/.test(a) ? a : JSON.stringify(a.length > 80 ? `${a.slice(0, 80)}…` : a))).join(' ')}\n`);
  }
  process.stdout.write(`\n${outcomes.length} cases in ${Math.round((Date.now() - started) / 1000)} s; ${bad.length} not clean\n`);
  if (values.out) {
    await writeFile(path.join(root, 'report.tsv'), `case\texpect\tverdict\texit\twhy\n${outcomes.map((o) => [o.c.name, o.c.expect, o.verdict, o.code, o.why.replace(/\s+/g, ' ')].join('\t')).join('\n')}\n`);
  } else {
    await rm(root, { recursive: true, force: true });
  }
  return bad.length === 0 ? 0 : 1;
}

process.exitCode = await main();
