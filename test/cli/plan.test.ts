import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { costUsd } from '../../lib/pricing/pricing.js';
import { loadContext, useTempDir, writeCampaign, rootItems } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';

// `sondage plan` prints the inventory and the cost per model and phase, and writes nothing.

const tmp = useTempDir('cli-plan');

interface PlanRow {
  readonly items: number;
  readonly inTokens: number;
  readonly outTokens: number;
  readonly cost: number;
}

/** The row of the plan table that starts with `label` and has `phase` as its phase. */
function row(stdout: string, label: string, phase: string): PlanRow {
  const escaped = label.replace(/[()]/g, '\\$&');
  const m = new RegExp(`^${escaped}\\s+${phase}\\s+simulated\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+\\$([\\d.]+)\\s+—\\s+\\$([\\d.]+)\\s*$`, 'm').exec(stdout);
  if (!m) throw new Error(`no plan row for ${label} / ${phase} in:\n${stdout}`);
  return { items: Number(m[1]), inTokens: Number(m[2]), outTokens: Number(m[3]), cost: Number(m[4]) };
}

describe('sondage plan', () => {
  it('prints the inventory size and the cost per model and phase, and writes nothing', async () => {
    const file = await writeCampaign(tmp.dir, 'small.yaml');
    const ctx = await loadContext(file);

    const { code, stdout, stderr } = await runMain(['plan', file]);

    expect(stderr).toBe('');
    expect(code).toBe(0);
    // The inventory, counted here from the battery itself.
    let total = 0;
    for (const model of ctx.campaign.models) {
      let generate = 0;
      let judged = 0;
      for (const language of ctx.design.languages) {
        for (const item of rootItems(ctx, model, language)) {
          generate++;
          if (ctx.graph.get('judge').consumes!(item)) judged++;
        }
      }
      total += generate + judged;
      const gen = row(stdout, model.id, 'generate');
      expect(gen.items).toBe(generate);
      // The cost is the model's list price over the tokens shown (printed to 4 decimals).
      const cost = costUsd(model.price, { input_tokens: gen.inTokens, output_tokens: gen.outTokens });
      expect(gen.cost).toBeCloseTo(cost, 4);
      const jud = row(stdout, `judge (judging ${model.id})`, 'judge');
      expect(jud.items).toBe(judged);
      expect(jud.cost).toBeCloseTo(costUsd(ctx.campaign.roles['judge']!.price, { input_tokens: jud.inTokens, output_tokens: jud.outTokens }), 4);
    }
    expect(stdout).toContain(`run-small (far6): ${total} requests in 4 model × language partitions`);
    expect(stdout).toMatch(new RegExp(`^total\\s+${total}\\s+\\$`, 'm'));
    expect(stdout).toContain('budget: $5.00 (hard cap');
    expect(stdout).not.toContain('exceeds the budget');
    // Nothing written: no data folder (data_dir: data beside the file), no other file.
    expect(await readdir(tmp.dir)).toEqual(['campaign.yaml']);
  });

  it('says when `sondage run` would refuse to start, and still writes nothing', async () => {
    const file = await writeCampaign(tmp.dir, 'small.yaml', (doc) => {
      doc.budget_usd = 0.1;
    });

    const { code, stdout } = await runMain(['plan', file]);

    expect(code).toBe(0);
    expect(stdout).toContain('budget: $0.1000');
    expect(stdout).toContain('the expected cost exceeds the budget: `sondage run` will refuse to start without --allow-partial');
    expect(await readdir(tmp.dir)).toEqual(['campaign.yaml']);
  });

  it('with --aws adds what one execution on the deployed stack costs, beside the model cost and as a share of it', async () => {
    const file = await writeCampaign(tmp.dir, 'small.yaml');

    const plain = await runMain(['plan', file]);
    const { code, stdout, stderr } = await runMain(['plan', file, '--aws']);

    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(plain.stdout).not.toContain('On AWS');
    // The local plan comes first, unchanged.
    expect(stdout.startsWith(plain.stdout)).toBe(true);
    const aws = stdout.slice(plain.stdout.length);
    expect(aws).toContain('On AWS (one execution of the deployed stack');
    // what the worker's reservation needs of the account (a deploy refused on a quota of 10)
    expect(aws).toMatch(/^Worker concurrency: the stack reserves \d+ concurrent executions for the worker .*quota to be at least \d+/m);
    for (const service of ['Lambda', 'Step Functions', 'S3', 'DynamoDB', 'Athena', 'CloudWatch Logs']) expect(aws).toMatch(new RegExp(`^${service}\\s`, 'm'));
    // The rows add up to the total, and the share is the total over the plan's model cost.
    const rows = [...aws.matchAll(/^(?:Lambda|Step Functions|S3|DynamoDB|Athena|CloudWatch Logs)\s.*\$([\d.]+)$/gm)].map((m) => Number(m[1]));
    const total = /^AWS total: \$([\d.]+) beside \$([\d.]+) of model calls \(([\d.]+) % of the model cost\)$/m.exec(aws);
    expect(total).not.toBeNull();
    const [awsUsd, modelUsd, share] = [Number(total![1]), Number(total![2]), Number(total![3])];
    expect(rows.reduce((a, b) => a + b, 0)).toBeCloseTo(awsUsd, 3);
    const planTotal = /^total\s+\d+\s+\$([\d.]+)/m.exec(stdout);
    expect(modelUsd).toBeCloseTo(Number(planTotal![1]), 4);
    expect(share).toBeCloseTo((awsUsd / modelUsd) * 100, 1);
    expect(aws).toMatch(/prices: us-east-1, version \d{4}-\d{2}-\d{2} \(unverified/);
    expect(await readdir(tmp.dir)).toEqual(['campaign.yaml']);
  });
});
