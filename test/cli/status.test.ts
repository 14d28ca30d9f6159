import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../lib/run/planCampaign.js';
import { EmbeddedLedger, LocalBlobStore, ParquetWriter, layout } from '../../lib/store/index.js';
import type { Ledger, ReplyRow } from '../../lib/store/types.js';
import { STACK, useAwsFakes } from '../helpers/awsFakes.js';
import { loadContext, writeCampaign } from '../helpers/campaigns.js';
import { planCampaign } from '../../lib/run/planCampaign.js';
import { runMain } from '../helpers/cli.js';
import { replyRow } from '../helpers/replyRow.js';
import { executionName } from '../../lib/cli/aws.js';

const aws = useAwsFakes('cli-status');

/** What the run would have planned: 10 generate items over two partitions, 3 judge items. */
function planOf(campaign: string): Plan {
  const line = { provider: 'simulated', inputTokens: 0, outputTokens: 0, costUsd: 0.1, batchCostUsd: null, maxCostUsd: 0.2 };
  return {
    campaign,
    battery: 'far6',
    budgetUsd: 2,
    phases: ['generate', 'judge'],
    lines: [
      { ...line, model: 'alpha', phase: 'generate', items: 6 },
      { ...line, model: 'beta', phase: 'generate', items: 4 },
      { ...line, model: 'judge', phase: 'judge', items: 3 },
    ],
    totals: { items: 13, costUsd: 0.3, maxCostUsd: 0.6 },
    partitions: [
      { model: 'alpha', language: 'en', items: { generate: 6, judge: 2 } },
      { model: 'beta', language: 'en', items: { generate: 4, judge: 1 } },
    ],
  };
}

/**
 * The same ledger state on either backend: 8 of the 10 planned generate items registered, 5 done
 * and 1 failed in one part costing $0.25; $0.10 reserved by a call in flight (g7) and $0.05 by an
 * open provider batch (g8). The 2 planned items never registered (a run stopped at the cap before
 * their partition) are pending all the same.
 */
async function fill(ledger: Ledger, campaign: string): Promise<void> {
  await ledger.initCampaign(campaign, 2, 'run-1');
  await ledger.registerItems(campaign, { phase: 'generate', model: 'm', language: 'en' }, ['g1', 'g2', 'g3', 'g4', 'g5', 'g6', 'g7', 'g8']);
  await ledger.commitPart({ campaign, phase: 'generate', model: 'm', language: 'en', partKey: 'part-0001', done: ['g1', 'g2', 'g3', 'g4', 'g5'], failed: ['g6'], costUsd: 0.25 });
  const en = { phase: 'generate', model: 'alpha', language: 'en' };
  expect(await ledger.reserve(campaign, 'call-1', 0.1, { ...en, itemIds: ['g7'] })).toBe(true);
  expect(await ledger.reserve(campaign, 'batch-res', 0.05, { ...en, itemIds: ['g8'] })).toBe(true);
  await ledger.recordBatch({ campaign, phase: 'generate', model: 'alpha', language: 'en', batchId: 'batch_abc', handleJson: '{}', reservationId: 'batch-res' });
}

function reply(campaign: string, item: string, attempt: number, at: string, error?: [string, string]): ReplyRow {
  return replyRow({ campaign, item_id: item, attempt, created_at: at }, error);
}

/** The lines both modes share: the phase table, spend and open batches. */
function sharedLines(stdout: string): string[] {
  const lines = stdout.split('\n');
  return lines.slice(lines.indexOf('') + 1, lines.findIndex((l) => l.startsWith('failures:')));
}

describe('sondage status', () => {
  let localOut = '';

  it('local: counts per phase against the plan, spend, open batches and the failed items with their last error', async () => {
    const campaign = 'status-local';
    const dataDir = path.join(aws.dir, 'data');
    const store = new LocalBlobStore(dataDir);
    await store.put(layout.planKey(campaign), JSON.stringify(planOf(campaign)));
    const ledger = new EmbeddedLedger(dataDir);
    try {
      await fill(ledger, campaign);
    } finally {
      await ledger.close();
    }
    const writer = await ParquetWriter.create({ tmpDir: path.join(aws.dir, 'tmp') });
    try {
      await writer.writePart(store, { campaign, phase: 'generate', table: 'replies', model: 'alpha', language: 'en', partName: 'part-0001.parquet' }, [
        reply(campaign, 'g1', 1, '2026-11-30T07:00:01.000Z', ['rate_limit', 'slow down']),
        reply(campaign, 'g1', 2, '2026-11-30T07:00:02.000Z'),
        reply(campaign, 'g6', 1, '2026-11-30T07:00:03.000Z', ['rate_limit', 'slow down']),
        reply(campaign, 'g6', 2, '2026-11-30T07:00:05.000Z', ['server_error', 'overloaded\n  (503)']),
        reply(campaign, 'g7', 1, '2026-11-30T07:00:04.000Z', ['timeout', 'no answer in 60 s']),
      ]);
    } finally {
      await writer.close();
    }

    const { code, stdout, stderr } = await runMain(['status', campaign, '--data-dir', dataDir]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    localOut = stdout;
    expect(stdout).toContain(`campaign status-local (local ${dataDir})`);
    expect(stdout).toContain('run: not running');
    expect(sharedLines(stdout)).toEqual([
      'phase     done  failed  in flight  pending  planned  progress',
      'generate     5       1          2        2       10     50.0%',
      'judge        0       0          0        3        3      0.0%',
      '',
      'spend: $0.2500 of $2.0000 cap (12.5% counting what may have been billed), $0.1500 reserved for calls in flight',
      'open provider batches: 1',
      '  generate alpha/en: batch_abc',
    ]);
    // g1 failed once and then succeeded: not a failure. g6's last error is the one shown.
    expect(stdout).toContain('failures: 2 items not done whose last attempt failed (last error of each):');
    const failures = stdout.split('\n').filter((l) => l.startsWith('  2026'));
    expect(failures).toEqual([
      '  2026-11-30T07:00:05Z  generate alpha/en g6  server_error: overloaded (503)',
      '  2026-11-30T07:00:04Z  generate alpha/en g7  timeout: no answer in 60 s',
    ]);

    const one = await runMain(['status', campaign, '--data-dir', dataDir, '--failures', '1']);
    expect(one.stdout).toContain('failures: 2 items not done whose last attempt failed (last error of each), last 1:');
    expect(one.stdout.split('\n').filter((l) => l.startsWith('  2026'))).toHaveLength(1);
  });

  it('aws: the same layout and numbers from DynamoDB, the latest execution of this campaign, recorded step failures', async () => {
    const campaign = 'status-aws';
    aws.s3.objects.set(`${STACK.bucket}/${layout.planKey(campaign)}`, Buffer.from(JSON.stringify(planOf(campaign))));
    await aws.withLedger(async (ledger) => {
      await fill(ledger, campaign);
      for (const [at, error] of [
        ['2026-11-30T06:00:00Z', 'Lambda.Unknown'],
        ['2026-11-30T06:10:00Z', 'States.Timeout'],
        ['2026-11-30T06:20:00Z', 'States.TaskFailed'],
      ] as const) {
        await ledger.recordFailure({ campaign, execution: `${STACK.stateMachineArn.replace(':stateMachine:', ':execution:')}:status-aws-x`, at, error, cause: `{"errorMessage":"${error} happened"}` });
      }
    });
    aws.sfn.add(STACK.stateMachineArn, executionName('status-aws', new Date('2026-11-30T05:00:00Z')), { campaign }, 'SUCCEEDED');
    const latest = aws.sfn.add(STACK.stateMachineArn, executionName('status-aws', new Date('2026-11-30T06:00:00Z')), { campaign });
    // Newer, but another campaign's.
    aws.sfn.add(STACK.stateMachineArn, executionName('status-aws-2', new Date('2026-11-30T07:00:00Z')), { campaign: 'status-aws-2' });
    aws.sfn.pageSize = 1;

    const { code, stdout, stderr } = await runMain(['status', campaign, '--aws', '--outputs', aws.outputsFile, '--failures', '2']);
    aws.sfn.pageSize = 100;
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(`campaign status-aws (aws s3://${STACK.bucket}, ${STACK.ledgerTable})`);
    expect(stdout).toContain(`run: execution ${latest.name} RUNNING since `);
    expect(sharedLines(stdout)).toEqual(sharedLines(localOut));
    expect(stdout).toContain('failures: 3 failed execution steps recorded in the ledger, last 2:');
    const failures = stdout.split('\n').filter((l) => l.startsWith('  2026'));
    expect(failures).toEqual([
      '  2026-11-30T06:20:00Z  status-aws-x  States.TaskFailed: {"errorMessage":"States.TaskFailed happened"}',
      '  2026-11-30T06:10:00Z  status-aws-x  States.Timeout: {"errorMessage":"States.Timeout happened"}',
    ]);
  });

  it('aws, by campaign file before any execution: the plan comes from the file, nothing spent yet', async () => {
    const file = await writeCampaign(aws.dir, 'small.yaml', (doc) => {
      doc['name'] = 'status-fresh';
    }, 'fresh.yaml');
    const ctx = await loadContext(file);
    const plan = planCampaign(ctx);
    const planned = (phase: string): number => plan.lines.filter((l) => l.phase === phase).reduce((n, l) => n + l.items, 0);
    expect(planned('generate')).toBeGreaterThan(0);

    const { code, stdout, stderr } = await runMain(['status', file, '--aws', '--outputs', aws.outputsFile]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('run: no execution yet');
    // Nothing registered yet, and all of it pending: planned = done + failed + in flight + pending.
    expect(stdout).toMatch(new RegExp(`^generate +0 +0 +0 +${planned('generate')} +${planned('generate')} +0\\.0%$`, 'm'));
    // The judge's items depend on replies not yet there: the battery's estimate, marked ~.
    expect(stdout).toMatch(new RegExp(`^judge +0 +0 +0 +${planned('judge')} +~${planned('judge')} +0\\.0%$`, 'm'));
    expect(stdout).toContain("~ the battery's estimate");
    expect(stdout).toContain('spend: nothing recorded yet');
    expect(stdout).toContain('open provider batches: 0');
    expect(stdout).toContain('failures: none');
  });

  it('a campaign that never ran here is reported, and no ledger is created', async () => {
    const dataDir = path.join(aws.dir, 'empty');
    const { code, stderr } = await runMain(['status', 'never-ran', '--data-dir', dataDir]);
    expect(code).toBe(1);
    expect(stderr).toContain('never-ran has not run in');
    // The folder as seen from the working directory: no absolute local path in what a command prints.
    expect(stderr).toContain(`has not run in ${path.relative(process.cwd(), dataDir)} `);
    const stillNone = await runMain(['status', 'never-ran', '--data-dir', dataDir]);
    expect(stillNone.stderr).toContain('no ledger.sqlite there');
  });

  it('a campaign name without --data-dir or --aws says what to give', async () => {
    const { code, stderr } = await runMain(['status', 'some-campaign']);
    expect(code).toBe(1);
    expect(stderr).toContain('give the campaign file, or --data-dir with the name');
  });

  it.each(['lots', '', '1e3', '-0', '2.0'])('a bad --failures (%j) is an error', async (value) => {
    const { code, stderr } = await runMain(['status', 'x', '--data-dir', aws.dir, `--failures=${value}`]);
    expect(code).toBe(1);
    expect(stderr).toContain(`--failures ${value} is not a whole number`);
  });
});
