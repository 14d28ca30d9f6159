import { describe, expect, it } from 'vitest';
import { BEDROCK_BATCH_MIN_RECORDS, BedrockBatchClient, recordIdOf } from '../../lib/providers/bedrock/BedrockBatchClient.js';
import { ProviderCallError } from '../../lib/providers/errors.js';
import { createBatchClient } from '../../lib/providers/registry.js';
import type { BatchItemResult, BatchRequest } from '../../lib/providers/batchTypes.js';
import { CampaignFileError } from '../../lib/errors.js';
import { converseReply, useBedrockServer } from '../helpers/bedrockServer.js';
import type { RecordAnswer } from '../helpers/bedrockServer.js';

const MODEL = 'us.anthropic.claude-3-5-haiku-20241022-v1:0';
const CREDENTIALS = { accessKeyId: 'STANDINTESTKEY00002', secretAccessKey: 'fake-batch-secret-never-printed-0000' };
const ROLE = 'arn:aws:iam::123456789012:role/sondage-bedrock-batch';

const bedrock = useBedrockServer();

/** `n` requests whose custom ids look like sondage item ids (not Bedrock's record id form). */
function requests(n: number): BatchRequest[] {
  return Array.from({ length: n }, (_, i) => ({
    customId: `item_${i.toString(16).padStart(6, '0')}:far6`,
    request: { messages: [{ role: 'user', content: `question ${i}` }], settings: { max_tokens: 8, temperature: 0 } },
  }));
}

async function client(): Promise<BedrockBatchClient> {
  const server = await bedrock.start();
  return new BedrockBatchClient({ model: MODEL, region: 'us-west-2', endpoint: server.url, credentials: CREDENTIALS, s3Uri: 's3://sondage-batch/jobs/', roleArn: ROLE });
}

/** A success for every record: the text names the question, the usage its place. */
const answerAll = (r: { modelInput: unknown }, i: number): RecordAnswer => {
  const q = (r.modelInput as { messages: { content: { text: string }[] }[] }).messages[0]!.content[0]!.text;
  return { modelOutput: converseReply(`answer to ${q}`, { inputTokens: 10 + i, outputTokens: 2 }) };
};

describe('Bedrock batch inference through the AWS SDK, against a wire-format stand-in', () => {
  it('uploads the input JSONL, creates a Converse job, polls it to the end and maps every record back in order', async () => {
    // Prepare
    const c = await client();
    const reqs = requests(120);

    // Act: submit and poll before the job has run.
    const handle = await c.submit(reqs, undefined, 'intent-a');
    const before = await c.poll(handle);

    // Assess the submission: one input file with a record per request, the same Converse body as the synchronous call.
    const jobName = c.jobNameOf('intent-a');
    const input = bedrock.current.s3.objects.get(`sondage-batch/jobs/${jobName}/input.jsonl`)!.toString('utf8').trim().split('\n').map((l) => JSON.parse(l) as unknown);
    expect(input).toHaveLength(120);
    expect(input[7]).toEqual({ recordId: 'R0000000007', modelInput: { messages: [{ role: 'user', content: [{ text: 'question 7' }] }], inferenceConfig: { maxTokens: 8, temperature: 0 } } });
    const create = bedrock.current.requests.find((r) => r.path === '/model-invocation-job')!;
    expect(create.body).toEqual({
      jobName,
      clientRequestToken: jobName.slice('sondage-'.length),
      roleArn: ROLE,
      modelId: MODEL,
      modelInvocationType: 'Converse',
      inputDataConfig: { s3InputDataConfig: { s3Uri: `s3://sondage-batch/jobs/${jobName}/input.jsonl`, s3InputFormat: 'JSONL' } },
      outputDataConfig: { s3OutputDataConfig: { s3Uri: `s3://sondage-batch/jobs/${jobName}/output/` } },
    });
    expect(create.headers.authorization).toMatch(/Credential=STANDINTESTKEY00002\/\d{8}\/us-west-2\/bedrock\/aws4_request/);
    expect(handle).toEqual({ provider: `bedrock/${MODEL}`, batchId: bedrock.current.jobs.keys().next().value, customIds: reqs.map((r) => r.customId) });
    expect(before).toMatchObject({ phase: 'pending', status: 'Submitted', done: false });
    await expect(c.results(handle)).rejects.toThrow(/is Submitted; poll until it has ended/);

    // Act: the job runs.
    bedrock.current.runJob(handle.batchId, answerAll);
    const after = await c.poll(handle);
    const results = await c.results(handle);

    // Assess: done, every id once, in submission order, text and usage from its own record.
    expect(after).toEqual({ phase: 'ended', status: 'Completed', done: true, counts: { total: 120, succeeded: 120, failed: 0 } });
    expect(results.map((r) => r.customId)).toEqual(reqs.map((r) => r.customId));
    expect(results[33]).toEqual({ customId: reqs[33]!.customId, ok: true, result: { text: 'answer to question 33', finish_reason: 'end_turn', usage: { input_tokens: 43, output_tokens: 2 } } });
    expect(c.settingsSent(reqs[0]!.request)).toEqual({ inferenceConfig: { maxTokens: 8, temperature: 0 } });
  });

  it('partial failures: each id gets exactly one result, errors classified, a repeated line counted once, a missing one re-queued', async () => {
    const c = await client();
    const reqs = requests(110);
    const handle = await c.submit(reqs, undefined, 'intent-b');
    bedrock.current.runJob(
      handle.batchId,
      (r, i) => {
        if (i === 0) return { error: { errorCode: 400, errorMessage: 'Malformed input request' } };
        if (i === 1) return { error: { errorCode: 429, errorMessage: 'Too many requests' } };
        if (i === 2) return 'omit';
        if (i === 3) return { twice: converseReply('said twice') };
        if (i === 4) return { modelOutput: converseReply('', undefined, 'content_filtered') };
        if (i === 5) return { error: { errorCode: 500, errorMessage: 'Internal error' } };
        return answerAll(r, i);
      },
      'PartiallyCompleted',
    );

    const results = await c.results(handle);

    expect(results).toHaveLength(110);
    expect(results.map((r) => r.customId)).toEqual(reqs.map((r) => r.customId));
    const at = (i: number) => results[i] as Extract<BatchItemResult, { ok: false }>;
    expect(at(0)).toMatchObject({ ok: false, errorClass: 'bad_request', retryable: false });
    expect(at(1)).toMatchObject({ ok: false, errorClass: 'rate_limit', retryable: true });
    expect(at(2)).toMatchObject({ ok: false, errorClass: 'batch_missing', retryable: true });
    expect(results[3]).toMatchObject({ ok: true, result: { text: 'said twice' } });
    expect(at(4)).toMatchObject({ ok: false, errorClass: 'content_filter', retryable: false });
    expect(at(5)).toMatchObject({ ok: false, errorClass: 'server_error', retryable: true });
    expect(results.slice(6).every((r) => r.ok)).toBe(true);
    expect((await c.poll(handle)).counts).toEqual({ total: 110, succeeded: 106, failed: 3 });
  });

  it('a record id outside the submission is ignored, never matched to another item', async () => {
    const c = await client();
    const reqs = requests(100);
    const handle = await c.submit(reqs, undefined, 'intent-c');
    bedrock.current.runJob(handle.batchId, answerAll);
    // A stray line, as from a file that does not belong to this job's records.
    const out = [...bedrock.current.s3.objects.keys()].find((k) => k.endsWith('input.jsonl.out'))!;
    bedrock.current.s3.objects.set(out, Buffer.concat([bedrock.current.s3.objects.get(out)!, Buffer.from(`${JSON.stringify({ recordId: recordIdOf(100), modelOutput: converseReply('stray') })}\n`)]));
    const results = await c.results(handle);
    expect(results).toHaveLength(100);
    expect(results.some((r) => r.ok && r.result.text === 'stray')).toBe(false);
  });

  it('one job per submission key: a retried submit gets the same job, and find recognises it after a crash', async () => {
    const c = await client();
    const reqs = requests(100);
    const createdAt = Date.now();
    const first = await c.submit(reqs, undefined, 'intent-d');
    const again = await c.submit(reqs, undefined, 'intent-d');
    expect(again.batchId).toBe(first.batchId);
    expect(bedrock.current.jobs.size).toBe(1);

    expect(await c.find({ submissionKey: 'intent-d', customIds: first.customIds, createdAt })).toEqual({ status: 'found', handle: first });
    expect(await c.find({ submissionKey: 'intent-e', customIds: first.customIds, createdAt })).toEqual({ status: 'absent' });
    expect(await c.find({ submissionKey: 'intent-d', customIds: first.customIds, createdAt, exclude: new Set([first.batchId]) })).toEqual({ status: 'absent' });
  });

  it(`refuses fewer than ${BEDROCK_BATCH_MIN_RECORDS} records before uploading anything (Bedrock's minimum per job), and repeated ids`, async () => {
    const c = await client();
    await expect(c.submit(requests(BEDROCK_BATCH_MIN_RECORDS - 1))).rejects.toThrow(/takes at least 100 records and this one has 99; use mode: sync/);
    const twice = [...requests(100), requests(1)[0]!];
    await expect(c.submit(twice)).rejects.toMatchObject({ errorClass: 'bad_request', retryable: false });
    expect(bedrock.current.s3.objects.size).toBe(0);
    expect(bedrock.current.jobs.size).toBe(0);
  });

  it('a job that failed as a whole gives batch_failed for every id; a stopped one batch_missing; cancel stops it', async () => {
    const c = await client();
    const failed = await c.submit(requests(100), undefined, 'intent-f');
    bedrock.current.jobs.get(failed.batchId)!.status = 'Failed';
    bedrock.current.jobs.get(failed.batchId)!.message = 'The input file has an invalid record.';
    expect(await c.poll(failed)).toMatchObject({ phase: 'ended', done: true, error: 'The input file has an invalid record.' });
    const r = await c.results(failed);
    expect(r.every((x) => !x.ok && x.errorClass === 'batch_failed' && !x.retryable)).toBe(true);

    const stopped = await c.submit(requests(100), undefined, 'intent-g');
    await c.cancel(stopped);
    expect(bedrock.current.jobs.get(stopped.batchId)!.status).toBe('Stopped');
    const s = await c.results(stopped);
    expect(s.every((x) => !x.ok && x.errorClass === 'batch_missing' && x.retryable)).toBe(true);
  });

  it('S3 throttling the input upload (SlowDown) is a retryable rate_limit: the run looks the job up before submitting again', async () => {
    const c = await client();
    bedrock.current.s3.injectFault({ times: 1, status: 503, code: 'SlowDown', methods: ['PUT'] });
    const err = await c.submit(requests(100), undefined, 'intent-h').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ProviderCallError);
    expect(err).toMatchObject({ errorClass: 'rate_limit', retryable: true });
    expect((err as Error).message).not.toContain(CREDENTIALS.secretAccessKey);
  });

  it('the registry builds it from bedrock_batch, and refuses an entry without it, naming the field', async () => {
    const entry = { id: 'h', provider: 'bedrock', model: MODEL, region: 'us-east-1' };
    const b = await createBatchClient({ ...entry, bedrock_batch: { s3_uri: 's3://b/p', role_arn: ROLE } }, { seed: 1, env: {} });
    expect(b.id).toBe(`bedrock/${MODEL}`);
    await expect(createBatchClient(entry, { seed: 1, file: 'c.yaml', env: {} })).rejects.toThrow(CampaignFileError);
    await expect(createBatchClient(entry, { seed: 1, file: 'c.yaml', env: {} })).rejects.toThrow(/models\[h\]\.bedrock_batch: mode: batch on bedrock needs bedrock_batch/);
  });
});
