import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { EmbeddedLedger, layout } from '../../lib/store/index.js';
import { startOpenAIBatchServer } from '../run/batchServers.js';
import { STACK, useAwsFakes } from '../helpers/awsFakes.js';
import { loadContext, writeCampaign } from '../helpers/campaigns.js';
import { exited, runMain } from '../helpers/cli.js';
import { executionName } from '../../lib/cli/aws.js';
import { DynamoLedger } from '../../lib/store/DynamoLedger.js';

const aws = useAwsFakes('cli-stop');

describe('sondage stop --aws', () => {
  it("stops this campaign's running executions only, and says nothing collected is lost", async () => {
    const done = aws.sfn.add(STACK.stateMachineArn, executionName('stop-aws', new Date('2026-11-30T04:00:00Z')), { campaign: 'stop-aws' }, 'SUCCEEDED');
    const first = aws.sfn.add(STACK.stateMachineArn, executionName('stop-aws', new Date('2026-11-30T05:00:00Z')), { campaign: 'stop-aws' });
    const second = aws.sfn.add(STACK.stateMachineArn, executionName('stop-aws', new Date('2026-11-30T06:00:00Z')), { campaign: 'stop-aws' });
    const other = aws.sfn.add(STACK.stateMachineArn, executionName('stop-aws-2', new Date('2026-11-30T07:00:00Z')), { campaign: 'stop-aws-2' });

    const { code, stdout, stderr } = await runMain(['stop', 'stop-aws', '--aws', '--outputs', aws.outputsFile]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain(`stopped ${second.executionArn}\nstopped ${first.executionArn}\n`);
    expect(stdout).toContain('nothing collected is lost');
    expect([first.status, second.status, done.status, other.status]).toEqual(['ABORTED', 'ABORTED', 'SUCCEEDED', 'RUNNING']);
    expect(first.error).toBe('sondage.Stopped');

    const status = await runMain(['status', 'stop-aws', '--aws', '--outputs', aws.outputsFile]);
    expect(status.stdout).toContain(`run: execution ${second.name} ABORTED since `);
    expect(status.stdout).toContain('(sondage.Stopped: sondage stop stop-aws');

    const again = await runMain(['stop', 'stop-aws', '--aws', '--outputs', aws.outputsFile]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('stop-aws: no running execution');
    expect(aws.sfn.calls.get('StopExecution')).toBe(2);
  });

  it('moves the budget\'s fence: workers already invoked for the campaign reserve nothing more, and the next plan takes the fence over', async () => {
    // prepare: a campaign planned by one execution, whose worker reserves
    const planner = aws.ledger();
    await planner.initCampaign('stop-fence', 5, 'exec-1');
    const worker = new DynamoLedger({ ledgerTable: STACK.ledgerTable, budgetTable: STACK.budgetTable, runId: 'exec-1' });
    try {
      expect(await worker.reserve('stop-fence', 'before-stop', 0.5)).toBe(true);
      // act
      const { code, stdout } = await runMain(['stop', 'stop-fence', '--aws', '--outputs', aws.outputsFile]);
      // assess: fenced; the worker's next chunk is refused, its earlier one still settles
      expect(code).toBe(0);
      expect(stdout).toContain('stop-fence: fenced; workers already running stop at their next chunk');
      expect(await worker.reserve('stop-fence', 'after-stop', 0.5)).toBe(false);
      expect(worker.fencedOut.get('stop-fence')).toMatch(/^stopped .* by sondage stop stop-fence/);
      await worker.settle('stop-fence', 'before-stop', 0.25);
      expect(await planner.budget('stop-fence')).toMatchObject({ spent_usd: 0.25, reserved_usd: 0 });
      // The next execution's plan moves the fence to itself: its workers reserve, the old ones still not.
      await planner.initCampaign('stop-fence', 5, 'exec-2');
      const next = new DynamoLedger({ ledgerTable: STACK.ledgerTable, budgetTable: STACK.budgetTable, runId: 'exec-2' });
      expect(await next.reserve('stop-fence', 'new-gen', 0.5)).toBe(true);
      expect(await worker.reserve('stop-fence', 'old-gen', 0.5)).toBe(false);
      await next.close();
    } finally {
      await worker.close();
      await planner.close();
    }
  });

  it('stack names from flags and SONDAGE_* variables need no outputs file', async () => {
    const run = aws.sfn.add(STACK.stateMachineArn, executionName('stop-flags', new Date('2026-11-30T05:00:00Z')), { campaign: 'stop-flags' });
    process.env['SONDAGE_LEDGER_TABLE'] = STACK.ledgerTable;
    process.env['SONDAGE_BUDGET_TABLE'] = STACK.budgetTable;
    try {
      const { code, stderr } = await runMain([
        'stop', 'stop-flags', '--aws', '--outputs', path.join(aws.dir, 'absent.json'),
        '--bucket', STACK.bucket, '--state-machine', STACK.stateMachineArn,
      ]);
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(run.status).toBe('ABORTED');
    } finally {
      delete process.env['SONDAGE_LEDGER_TABLE'];
      delete process.env['SONDAGE_BUDGET_TABLE'];
    }
  });

  it('an outputs file without the stack is an error naming the file and what it lacks', async () => {
    const file = path.join(aws.dir, 'other.aws.json');
    await writeFile(file, JSON.stringify({ Other: { BucketName: 'x' } }));
    const { code, stderr } = await runMain(['stop', 'stop-aws', '--aws', '--outputs', file]);
    expect(code).toBe(1);
    expect(stderr).toContain(`${file}: no stack has a StateMachineArn output (stacks: Other)`);
    const partial = path.join(aws.dir, 'partial.aws.json');
    await writeFile(partial, JSON.stringify({ Sondage: { StateMachineArn: STACK.stateMachineArn, BucketName: STACK.bucket, LedgerTableName: 'l' } }));
    const missing = await runMain(['stop', 'stop-aws', '--aws', '--outputs', partial]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`${partial}: Sondage.BudgetTableName: missing`);
  });
});

describe('sondage stop: open provider batches', () => {
  const KEY = 'sk-test-stop-cli-00000000000000000';

  it('cancels them through the ledger (AWS: DynamoDB, local: SQLite); by name alone it cannot, and says so', async () => {
    const server = await startOpenAIBatchServer({ runningPolls: 5 });
    process.env['SONDAGE_STOP_KEY'] = KEY;
    try {
      const file = await writeCampaign(aws.dir, 'small.yaml', (doc) => {
        doc['name'] = 'stop-batches';
        doc.design['languages'] = ['en', 'de'];
        doc.design['forms'] = ['plain'];
        doc.design['constraints'] = ['yesno'];
        doc.models = [
          {
            id: 'batched',
            provider: 'openai',
            model: 'gpt-4.1-mini',
            base_url: `${server.url}/v1`,
            api_key_env: 'SONDAGE_STOP_KEY',
            mode: 'batch',
            price: { input_per_mtok: 1, output_per_mtok: 2, batch_discount: 0.5 },
          },
        ];
      }, 'stop-batches.yaml');
      const ctx = await loadContext(file);
      // A run stopped right after submitting leaves its batches open in the ledger.
      const controller = new AbortController();
      await runCampaign(ctx, { skipAnalysis: true, signal: controller.signal, batch: { pollMs: 1, onSubmitted: () => controller.abort() } });
      const local = new EmbeddedLedger(ctx.dataDir);
      const open = await local.campaignBatches('stop-batches').finally(() => local.close());
      expect(open.length).toBeGreaterThan(0);
      const ids = open.map((b) => b.batchId).sort();

      // The same batches as the AWS workers would have recorded them.
      const dynamo = aws.ledger();
      try {
        for (const b of open) await dynamo.recordBatch({ ...b });
      } finally {
        await dynamo.close();
      }
      const byName = await runMain(['stop', 'stop-batches', '--aws', '--outputs', aws.outputsFile]);
      expect(byName.code).toBe(1);
      expect(byName.stderr).toContain(`stop-batches: ${open.length} open provider batch(es) and 0 unresolved submission(s) not cancelled: give the campaign file`);
      expect(server.cancelled).toEqual([]);

      const onAws = await runMain(['stop', file, '--aws', '--outputs', aws.outputsFile]);
      expect(onAws.stderr).toBe('');
      expect(onAws.code).toBe(0);
      expect(server.cancelled.sort()).toEqual(ids);
      for (const id of ids) expect(onAws.stdout).toContain(`batch ${id} (generate batched/`);
      expect(onAws.stdout).toContain('cancel requested; its partial results are stored by the next run');
      const after = aws.ledger();
      try {
        expect((await after.campaignBatches('stop-batches')).every((b) => typeof b.cancelledAt === 'string')).toBe(true);
      } finally {
        await after.close();
      }

      const status = await runMain(['status', file, '--aws', '--outputs', aws.outputsFile]);
      expect(status.stdout).toContain(`open provider batches: ${open.length}\n`);
      expect(status.stdout).toMatch(/^ {2}generate batched\/(en|de): \S+ \(cancel requested \d{4}-\d\d-\d\dT/m);

      // Locally the provider has ended them by now (the cancel above): nothing left to cancel, nothing lost.
      const here = await runMain(['stop', file]);
      expect(here.stderr).toBe('');
      expect(here.code).toBe(0);
      expect(here.stdout).toContain('no run in progress');
      expect(here.stdout).toContain('had already ended; the next run stores its results');
      expect(server.cancelled.sort()).toEqual(ids);
    } finally {
      delete process.env['SONDAGE_STOP_KEY'];
      await server.close();
    }
  });
});

describe('sondage stop (local)', () => {
  it('asks the run holding the lock to stop as Ctrl-C does', async () => {
    const dataDir = path.join(aws.dir, 'data');
    const marker = path.join(aws.dir, 'got-sigterm');
    // Stands in for `sondage run`: holds the lock, writes what it was sent and exits.
    const child = spawn(
      process.execPath,
      ['-e', `process.on('SIGTERM', () => { require('fs').writeFileSync(${JSON.stringify(marker)}, 'SIGTERM'); process.exit(130); }); console.log('ready'); setInterval(() => {}, 1000);`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    const lock = path.join(dataDir, layout.runLockKey('stop-local'));
    await mkdir(path.dirname(lock), { recursive: true });
    await writeFile(lock, JSON.stringify({ pid: child.pid, host: os.hostname(), run_id: 'r', started_at: '2026-11-30T07:00:00Z' }));

    const { code, stdout } = await runMain(['stop', 'stop-local', '--data-dir', dataDir]);
    expect(code).toBe(0);
    expect(stdout).toContain(`stop-local: asked the run (pid ${child.pid}) to stop`);
    expect(stdout).toContain('nothing collected is lost');
    expect(await exited(child)).toBe(130);
    expect(await readFile(marker, 'utf8')).toBe('SIGTERM');

    // The lock now names a dead process: nothing to stop.
    const none = await runMain(['stop', 'stop-local', '--data-dir', dataDir]);
    expect(none.stdout).toContain('stop-local: no run in progress');
  });

  it('a lock held on another machine is named, not signalled', async () => {
    const dataDir = path.join(aws.dir, 'data2');
    const lock = path.join(dataDir, layout.runLockKey('stop-remote'));
    await mkdir(path.dirname(lock), { recursive: true });
    await writeFile(lock, JSON.stringify({ pid: 4242, host: 'elsewhere', run_id: 'r', started_at: '' }));
    const { code, stderr } = await runMain(['stop', 'stop-remote', '--data-dir', dataDir]);
    expect(code).toBe(1);
    expect(stderr).toContain('is held by pid 4242 on elsewhere');
  });
});
