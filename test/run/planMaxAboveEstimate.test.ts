import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { planCampaign } from '../../lib/run/planCampaign.js';
import { loadContext, REPO_ROOT, tempDir, writeCampaign } from '../helpers/campaigns.js';

// `plan` shows what a run is expected to cost ("est. cost") and what it reserves ("max
// (reserved)"): the reservation is a bound on the cost, so no line may show it below the estimate.

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => ({ dir: root, cleanup } = await tempDir('plan-max')));
afterAll(() => cleanup?.());

async function ptrueCampaign(maxTokens: number): Promise<string> {
  const source = path.join(REPO_ROOT, 'examples/ptrue/demo.yaml');
  const doc = parse(await readFile(source, 'utf8')) as Record<string, Record<string, unknown>>;
  doc['design']!['items'] = path.join(REPO_ROOT, 'examples/ptrue/items.jsonl');
  doc['design']!['max_tokens'] = maxTokens;
  const file = path.join(root, `ptrue-${maxTokens}.yaml`);
  await writeFile(file, stringify(doc));
  return file;
}

describe('plan: max (reserved) is never below est. cost', () => {
  it.each([16, 256])('P(True) with max_tokens %i, verify and judge included', async (maxTokens) => {
    const plan = planCampaign(await loadContext(await ptrueCampaign(maxTokens)));
    expect(plan.lines.map((l) => l.phase)).toContain('verify');
    for (const l of plan.lines) expect(l.maxCostUsd, `${l.model} ${l.phase}`).toBeGreaterThanOrEqual(l.costUsd);
    expect(plan.totals.maxCostUsd).toBeGreaterThanOrEqual(plan.totals.costUsd);
  });

  it('FAR-6, generate, judge and audit', async () => {
    const plan = planCampaign(await loadContext(await writeCampaign(root, 'small.yaml')));
    for (const l of plan.lines) expect(l.maxCostUsd, `${l.model} ${l.phase}`).toBeGreaterThanOrEqual(l.costUsd);
  });
});
