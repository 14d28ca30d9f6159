import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/campaigns.js';

// "What must hold": bench/ptrue-aws-plan.ts prices P(True)'s panel on runs_on: gpu as `plan --aws`
// does, one command, whatever the size: every model of the panel gets its generate and verify
// lines, the judge its line on its 4-GPU instance, the totals count what the design asks (items ×
// 6 × 6 per model, six probes a reply), GPU hours are instance hours times the GPUs, and
// measured prompts/s replace the assumed ones.

/** The 30 example items once: multiple-choice and short-answer (the judge reads these) both. */
const ITEMS = 30;
const MODELS = 10;

let out = '';

beforeAll(async () => {
  const run = promisify(execFile);
  const script = path.join(REPO_ROOT, 'bench/ptrue-aws-plan.ts');
  ({ stdout: out } = await run(process.execPath, ['--import', 'tsx', script, '--items', String(ITEMS), '--generate', '8'], { cwd: REPO_ROOT }));
}, 120_000);

/** The bench's table by phase: prompts, instance hours, GPU hours. */
function totals(phase: string): { prompts: number; instanceHours: number; gpuHours: number } {
  const row = out.split('\n').find((l) => l.startsWith(`| ${phase} |`));
  expect(row, out).toBeDefined();
  const [prompts, instanceHours, gpuHours] = row!
    .split('|')
    .slice(2, 5)
    .map((c) => Number(c.trim().replaceAll(',', '')));
  return { prompts: prompts!, instanceHours: instanceHours!, gpuHours: gpuHours! };
}

describe('bench:ptrue-aws-plan', () => {
  it('prices every model of the panel and the judge on GPU, at the counts the design asks', () => {
    const lines = out.split('\n').filter((l) => / (generate|verify|judge) +g\d/.test(l));
    expect(lines.filter((l) => / generate /.test(l))).toHaveLength(MODELS);
    expect(lines.filter((l) => / verify /.test(l))).toHaveLength(MODELS);
    const judge = lines.filter((l) => / judge /.test(l));
    expect(judge).toHaveLength(1);
    expect(judge[0]).toContain('g6e.12xlarge');
    expect(totals('generate').prompts).toBe(ITEMS * 36 * MODELS);
    expect(totals('verify').prompts).toBe(ITEMS * 36 * MODELS * 6);
    const judged = totals('judge');
    expect(judged.prompts).toBeGreaterThan(0);
    // Each to a tenth of an hour.
    expect(Math.abs(judged.gpuHours - 4 * judged.instanceHours)).toBeLessThanOrEqual(0.25);
    expect(judged.gpuHours).toBeGreaterThan(judged.instanceHours);
    expect(totals('generate').gpuHours).toBe(totals('generate').instanceHours);
  });

  it('takes a measured rate in place of the assumed one, for the phase it names only', () => {
    const generate = out.split('\n').filter((l) => / generate +g\d/.test(l));
    const verify = out.split('\n').filter((l) => / verify +g\d/.test(l));
    for (const l of generate) expect(l).toMatch(/ 8 +\d+ /);
    for (const l of verify) expect(l).toContain('20 (assumed)');
    expect(out).toMatch(/the paper's final runs: ~1,717 GPU hours/i);
  });
});
