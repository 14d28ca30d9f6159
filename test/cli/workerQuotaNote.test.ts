import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { deployedWorkerConcurrency, workerQuotaNote } from '../../lib/cli/workerQuotaNote.js';
import { CONTEXT, DEPLOY_CONTEXT_FILE } from '../../lib/config/index.js';
import { useTempDir } from '../helpers/campaigns.js';

const tmp = useTempDir('worker-quota', 'all');

describe('sondage plan --aws: the account quota the worker reservation needs', () => {
  it('without a kept deploy context: the default 100, a quota of 110, and the fix', async () => {
    const w = await deployedWorkerConcurrency(tmp.dir);
    expect(w).toEqual({ reserved: 100, from: 'the default' });
    expect(workerQuotaNote(w)).toBe(
      'Worker concurrency: the stack reserves 100 concurrent executions for the worker (the default); the deploy needs the account\'s Lambda concurrency quota to be at least 110 ' +
        '(new accounts often have 10). Below that, deploy with -c sondage:workerConcurrency=0 (none reserved, 5 copies a wave) or a smaller N, or ask AWS for more (Service Quotas → AWS Lambda → Concurrent executions).',
    );
  });

  it.each([
    ['8', 'the stack reserves 8 concurrent executions for the worker (sondage.deploy.json); the deploy needs the account\'s Lambda concurrency quota to be at least 18'],
    ['0', 'Worker concurrency: none reserved (sondage.deploy.json); the worker shares the account\'s pool and each wave fans out at most 5 copies.'],
  ])('with sondage:workerConcurrency=%s kept from the last deploy', async (value, says) => {
    const sub = path.join(tmp.dir, `kept-${value}`);
    await mkdir(sub, { recursive: true });
    await writeFile(path.join(sub, DEPLOY_CONTEXT_FILE), JSON.stringify({ [CONTEXT.workerConcurrency]: value }));
    expect(workerQuotaNote(await deployedWorkerConcurrency(sub))).toContain(says);
  });
});
