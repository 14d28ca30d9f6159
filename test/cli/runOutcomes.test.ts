import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chatCompletion, startWireServer, type RecordedRequest, type WireServer } from '../providers/helpers/wireServer.js';
import { tempDir, writeCampaign, type CampaignDoc } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';
import { ledgerSnapshot } from '../helpers/runData.js';

// What `sondage run` says, and exits with, when the calls themselves go wrong: a run where every
// call failed is not a success (exit 5); a key rejected at one base_url stops that endpoint only
// (exit 4); a base_url with credentials is refused before anything is sent, never printed.

const KEY = 'sk-test-local-0000000000000000';
const ENV = 'SONDAGE_OUTCOME_KEY';

const completion = (req: RecordedRequest) => chatCompletion(req, 'Yes. It hurt someone.');

const servers: WireServer[] = [];
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  await cleanup?.();
  delete process.env[ENV];
});

/** A small campaign (English, plain yes/no questions) on the given real-provider entries. */
async function campaign(models: Record<string, unknown>[]): Promise<string> {
  const tmp = await tempDir('run-outcomes');
  cleanup = tmp.cleanup;
  process.env[ENV] = KEY;
  return writeCampaign(tmp.dir, 'small.yaml', (doc: CampaignDoc) => {
    doc.design['languages'] = ['en'];
    doc.design['forms'] = ['plain'];
    doc.design['constraints'] = ['yesno'];
    doc.design['story_limit'] = 2;
    doc.models = models;
  });
}

const entry = (id: string, baseUrl: string) => ({
  id,
  provider: 'openai-compatible',
  model: 'qwen3-8b',
  base_url: baseUrl,
  api_key_env: ENV,
  rpm: 100_000,
  price: { input_per_mtok: 1, output_per_mtok: 2 },
});

describe('sondage run: the exit code says what happened to the calls', () => {
  it('every call failed (a model the server does not know): exit 5 and where to look, not 0', async () => {
    const server = await startWireServer([{ status: 404, json: { error: { message: 'The model `qwen3-8b` does not exist.', type: 'NotFoundError', code: 404 } } }]);
    servers.push(server);
    const file = await campaign([entry('local', `${server.url}/v1`)]);

    const { code, stderr } = await runMain(['run', file, '--quiet']);

    expect(stderr).toMatch(/generate: 0 new, 0 recovered from an interrupted run, [1-9]\d* failed/);
    expect(stderr).toContain('no call of this run was answered: every item it asked failed. `sondage status --failures 5` shows why');
    expect(code).toBe(5);
    const status = await runMain(['status', file, '--failures', '1']);
    expect(status.stdout).toContain(`not_found: openai-compatible/qwen3-8b: HTTP 404 not_found`);
  });

  it('a key rejected at one base_url stops that endpoint only: the same model at another base_url is collected (exit 4)', async () => {
    const rejecting = await startWireServer([{ status: 401, json: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } } }]);
    const answering = await startWireServer([{ from: completion }]);
    servers.push(rejecting, answering);
    const file = await campaign([entry('gateway', `${rejecting.url}/v1`), entry('direct', `${answering.url}/v1`)]);

    const { code, stderr } = await runMain(['run', file, '--quiet']);

    expect(code).toBe(4);
    expect(stderr).toContain(`openai-compatible/qwen3-8b: the provider rejected the API key (auth: HTTP 401 auth: 401 Incorrect API key provided) at ${rejecting.url}/v1;`);
    expect(stderr).toContain(`Check the key in the environment variable ${ENV}`);
    expect(stderr).not.toContain(KEY);
    // The answering endpoint got every one of its items; the rejecting one at most a chunk's worth.
    const generate = answering.requests.length;
    expect(generate).toBeGreaterThan(0);
    const ledger = await ledgerSnapshot(path.join(path.dirname(file), 'data'), 'run-small');
    expect(ledger.generate.done).toBe(generate);
    expect(ledger.generate.pending).toBe(generate);
    expect(rejecting.requests.length).toBeLessThanOrEqual(generate);
  });

  it('a base_url with a user name and password: refused before anything is sent or written, the password never printed', async () => {
    const server = await startWireServer([{ from: completion }]);
    servers.push(server);
    const file = await campaign([entry('local', server.url.replace('http://', 'http://alice:hunter2-secret@') + '/v1')]);

    for (const command of ['plan', 'run']) {
      const { code, stderr } = await runMain([command, file]);
      expect(code).toBe(1);
      expect(stderr).toContain(`${file}: models[0].base_url: holds a user name or password (user:pass@host), which sondage never sends nor prints`);
      expect(stderr).not.toContain('hunter2');
    }
    expect(server.requests).toHaveLength(0);
    expect(await readdir(path.dirname(file))).toEqual(['campaign.yaml']);
  });
});
