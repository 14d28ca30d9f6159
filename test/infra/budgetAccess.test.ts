/**
 * Who may write the cap. The plan sets it (initCampaign, for `sondage start --aws`); the worker
 * Lambda and the GPU job write the budget table only through PutItem, UpdateItem and DeleteItem
 * limited by `dynamodb:Attributes` (ForAllValues:StringEquals) to COMPUTE_BUDGET_ATTRIBUTES, which
 * leaves out `cap_usd`. Checked on the synthesized template (CDK assertions, cdk-nag clean), and
 * against the writes the real worker sends while the synthesized state machine runs a campaign
 * through a crash and a rerun: every attribute it names is in the policy, so the policy cannot
 * silently break the worker.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTEXT } from '../../lib/config/index.js';
import { DynamoLedger } from '../../lib/store/DynamoLedger.js';
import { COMPUTE_BUDGET_ATTRIBUTES } from '../../lib/store/dynamo/budgetAttributes.js';
import { tempDir } from '../helpers/campaigns.js';
import { writtenAttributes } from '../helpers/pipeline/dynamoWrites.js';
import { far6Campaign, oneStoryFar6 } from '../helpers/pipeline/campaignFiles.js';
import { startPipeline } from '../helpers/pipeline/pipelineHarness.js';
import { startDynamoServer } from '../store/dynamoServer.js';
import { synthesize } from './synth.js';
import type { Synthesized } from './synth.js';

const BUDGET_WRITES = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];

interface RawStatement {
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
  readonly Condition?: Record<string, Record<string, string | string[]>>;
}

/** The Allow statements of the policies whose logical id starts with `policyPrefix`. */
function statementsOf(s: Synthesized, policyPrefix: string): RawStatement[] {
  return Object.entries(s.template.findResources('AWS::IAM::Policy'))
    .filter(([id]) => id.startsWith(policyPrefix))
    .flatMap(([, p]) => (p as { Properties: { PolicyDocument: { Statement: RawStatement[] } } }).Properties.PolicyDocument.Statement)
    .filter((st) => st.Effect === 'Allow');
}

/** The budget table's logical id. */
function budgetTableId(s: Synthesized): string {
  const ids = Object.keys(s.template.findResources('AWS::DynamoDB::GlobalTable')).filter((id) => id.startsWith('CampaignDataBudget'));
  expect(ids).toHaveLength(1);
  return ids[0]!;
}

/** Statements that grant a write action on the budget table (its ARN, not its indexes). */
function budgetWrites(s: Synthesized, policyPrefix: string): RawStatement[] {
  const table = budgetTableId(s);
  return statementsOf(s, policyPrefix).filter(
    (st) => [st.Action].flat().some((a) => BUDGET_WRITES.includes(a)) && JSON.stringify([st.Resource].flat()).includes(`"${table}"`),
  );
}

/** The attributes a budget-write statement allows; undefined when it allows any. */
function allowedAttributes(st: RawStatement): string[] | undefined {
  const list = st.Condition?.['ForAllValues:StringEquals']?.['dynamodb:Attributes'];
  return list === undefined ? undefined : [list].flat();
}

let plain: Synthesized;
let gpu: Synthesized;
beforeAll(() => {
  plain = synthesize();
  gpu = synthesize({ [CONTEXT.gpu]: 'true', [CONTEXT.gpuInstanceTypes]: 'g6e.xlarge', [CONTEXT.gpuImage]: 'sha256:' + 'ab'.repeat(32) });
});

describe('the budget table\'s write grants', () => {
  it('the plan may write any attribute of the budget table: it sets the cap', () => {
    const writes = budgetWrites(plain, 'PipelinePlan');
    expect(writes.flatMap((st) => [st.Action].flat())).toEqual(expect.arrayContaining(['dynamodb:UpdateItem', 'dynamodb:PutItem']));
    expect(writes.some((st) => st.Condition === undefined)).toBe(true);
  });

  it.each([
    ['the worker', 'PipelineWorker', () => plain],
    ['the GPU job', 'GpuBatchJobRole', () => gpu],
  ] as const)('%s writes the budget table only under a dynamodb:Attributes allow list without cap_usd', (_who, prefix, stack) => {
    const writes = budgetWrites(stack(), prefix);
    expect(writes).toHaveLength(1);
    const [st] = writes;
    expect([st!.Action].flat().sort()).toEqual(['dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    expect(Object.keys(st!.Condition ?? {})).toEqual(['ForAllValues:StringEquals']);
    const allowed = allowedAttributes(st!)!;
    expect(allowed.sort()).toEqual([...COMPUTE_BUDGET_ATTRIBUTES].sort());
    expect(allowed).not.toContain('cap_usd');
    // The key attributes are named by every write: without them nothing would be allowed.
    expect(allowed).toEqual(expect.arrayContaining(['pk', 'sk']));
  });

  it('cdk-nag stays clean with the GPU job role\'s condition', () => {
    expect(gpu.nagFindings).toEqual([]);
    expect(plain.nagFindings).toEqual([]);
  });

  it('the plan\'s cap write would be refused to a compute role, the worker\'s overrun flag allowed (the same recording and check as below)', async () => {
    // prepare: a ledger whose client records its writes, against the DynamoDB stand-in
    const server = await startDynamoServer();
    const writes: { command: string; input: unknown }[] = [];
    const client = new DynamoDBClient({ endpoint: server.url, region: 'us-east-1', credentials: { accessKeyId: 't', secretAccessKey: 't' } });
    client.middlewareStack.add((next, context) => async (args) => {
      writes.push({ command: context.commandName!, input: args.input });
      return next(args);
    }, { step: 'initialize' });
    const ledger = new DynamoLedger({ ledgerTable: 'ledger', budgetTable: 'budget', client });
    try {
      // act: the plan's initCampaign, then the worker's flagOverrun
      await ledger.initCampaign('c', 10, 'run-1');
      const planWrites = writtenAttributes(writes.filter((w) => /Item/.test(w.command))).get('budget')!;
      writes.length = 0;
      await ledger.flagOverrun('c', 'm', 0.5);
      const overrunWrites = writtenAttributes(writes).get('budget')!;
      // assess
      expect([...planWrites.attributes].filter((a) => !COMPUTE_BUDGET_ATTRIBUTES.includes(a))).toEqual(['cap_usd']);
      expect([...overrunWrites.attributes].filter((a) => !COMPUTE_BUDGET_ATTRIBUTES.includes(a))).toEqual([]);
    } finally {
      client.destroy();
      await ledger.close();
      await server.close();
    }
  });
});

describe('the worker\'s real budget writes fit its policy', () => {
  let cleanup: () => Promise<void>;
  let root: string;
  beforeAll(async () => {
    ({ dir: root, cleanup } = await tempDir('budget-access'));
  });
  afterAll(() => cleanup());

  it('a campaign through the synthesized state machine, with a worker that throws at a commit (salvage) and a rerun: every budget write names only allowed attributes', async () => {
    // prepare: a deployment whose worker throws while committing its second part
    const dir = path.join(root, 'campaign');
    await mkdir(dir, { recursive: true });
    const file = await far6Campaign(dir, 'budget-access', (doc) => {
      oneStoryFar6(doc);
      for (const m of doc.models) m['rpm'] = 6;
    });
    const p = await startPipeline();
    try {
      await p.upload(file);
      p.fleet.crashNextWorker({ kind: 'throw', at: 'commit', after: 1 });
      // act: `sondage start --aws`, then `--retry-failed` if it failed
      const first = await p.execute({ campaign: 'budget-access' });
      const last = first.result.status === 'SUCCEEDED' ? first : await p.execute({ campaign: 'budget-access', retryFailed: true });
      expect(last.result.status).toBe('SUCCEEDED');
      // assess: the policy of the synthesized worker role, against what the worker sent
      const allowed = new Set(allowedAttributes(budgetWrites(plain, 'PipelineWorker')[0]!));
      const budget = writtenAttributes(p.fleet.workerDynamoWrites).get(p.standIns.names.budgetTable);
      expect(budget).toBeDefined();
      // The worker reserved, settled and committed parts: the money attributes are among its writes.
      expect([...budget!.attributes]).toEqual(expect.arrayContaining(['headroom_usd', 'reserved_usd', 'spent_usd', 'amount_usd']));
      expect([...budget!.attributes].filter((a) => !allowed.has(a))).toEqual([]);
      expect([...budget!.actions].filter((a) => !['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:ConditionCheckItem'].includes(a))).toEqual([]);
    } finally {
      await p.close();
    }
  }, 180_000);
});
