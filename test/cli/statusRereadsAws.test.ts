/**
 * `sondage status --aws` after an execution whose plan read stored readings again under an edited
 * design (lib/run/rereadStoredReadings.ts): the plan's lines, under the execution that wrote them.
 * The lines themselves come from the plan (test/infra/pipelineRereads.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { recordRereadNotice } from '../../lib/run/rereadStoredReadings.js';
import { S3BlobStore } from '../../lib/store/S3BlobStore.js';
import { STACK, useAwsFakes } from '../helpers/awsFakes.js';
import { runMain } from '../helpers/cli.js';

const aws = useAwsFakes('cli-status-rereads');

describe('status --aws after an edited design', () => {
  it('prints what the latest execution read again, and nothing once an execution read nothing again', async () => {
    // prepare: a campaign whose first plan of exec-2 read readings again and listed judge shards again
    const campaign = 'status-rereads';
    await aws.withLedger((ledger) => ledger.initCampaign(campaign, 2, 'exec-2'));
    const store = new S3BlobStore({ bucket: STACK.bucket, clientConfig: { endpoint: aws.s3.url, region: 'us-east-1', forcePathStyle: true } });
    const reread = 'generate: re-read 48 stored reading(s) from their replies, at no cost: …; 12 now read differently';
    await recordRereadNotice(store, campaign, 'exec-2', [reread], true);
    await recordRereadNotice(store, campaign, 'exec-2', ['judge: 4 shard(s) settled under an earlier design listed again: …'], false);
    // act
    const shown = await runMain(['status', campaign, '--aws', '--outputs', aws.outputsFile]);
    // assess: both waves' lines, under the execution
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`design edited (execution exec-2):\n  ${reread}\n  judge: 4 shard(s) settled under an earlier design listed again`);

    // an execution with nothing to read again starts the notice afresh: nothing is said
    await recordRereadNotice(store, campaign, 'exec-3', [], true);
    const quiet = await runMain(['status', campaign, '--aws', '--outputs', aws.outputsFile]);
    expect(quiet.code).toBe(0);
    expect(quiet.stdout).not.toContain('design edited');
  });
});
