/**
 * A stand-in for Amazon Bedrock on 127.0.0.1, speaking its REST-JSON wire format, so that the real
 * AWS SDK clients (pointed at it with fake static credentials) are tested end to end:
 *
 * - bedrock-runtime Converse: `POST /model/{modelId}/converse`, answered by `converse` (a reply,
 *   or an AWS error: status, `x-amzn-errortype` header and `{ message }` body, as the service sends);
 * - the bedrock control plane for batch inference: CreateModelInvocationJob (idempotent on
 *   `clientRequestToken`), GetModelInvocationJob, ListModelInvocationJobs, StopModelInvocationJob;
 * - S3, for the jobs' input and output files: every other path goes to the S3 stand-in
 *   (test/store/s3Server.ts), so one address serves all three clients, as `base_url` does.
 *
 * The runtime client speaks HTTP/2 (the SDK's NodeHttp2Handler, cleartext with prior knowledge
 * against an http:// endpoint), the control plane and S3 HTTP/1.1: the port reads a connection's
 * first bytes and hands it to the HTTP/2 server on the HTTP/2 preface, to the HTTP/1.1 one otherwise.
 *
 * A job does nothing until the test runs it (`runJob`): it reads the input JSONL from the S3
 * stand-in and writes `<output s3Uri>/<job id>/input.jsonl.out` and `manifest.json.out` there,
 * each record answered by the test's function, the way Bedrock lays out its output.
 */
import { createServer, request } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttp2Server } from 'node:http2';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { startS3Server } from '../store/s3Server.js';
import type { S3Server } from '../store/s3Server.js';
import { useServer } from './useServer.js';

export interface BedrockRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
}

/** What the stand-in answers: a JSON body, or an AWS error by its type name. */
export type BedrockAnswer = { readonly json: unknown; readonly status?: number } | { readonly error: string; readonly status: number; readonly message?: string } | { readonly raw: string; readonly status?: number };

/** A batch record's fate: a model output, an error line, left out of the output, or written twice. */
export type RecordAnswer = { readonly modelOutput: unknown } | { readonly error: { readonly errorCode: number; readonly errorMessage: string } } | 'omit' | { readonly twice: unknown };

export interface StandInJob {
  readonly jobArn: string;
  readonly jobName: string;
  readonly clientRequestToken?: string;
  readonly modelId: string;
  readonly roleArn: string;
  readonly modelInvocationType?: string;
  readonly inputDataConfig: { s3InputDataConfig: { s3Uri: string; s3InputFormat?: string } };
  readonly outputDataConfig: { s3OutputDataConfig: { s3Uri: string } };
  readonly submitTime: string;
  status: string;
  message?: string;
  counts?: { total: number; success: number; error: number };
}

export interface BedrockServer {
  readonly url: string;
  readonly requests: BedrockRequest[];
  readonly s3: S3Server;
  readonly jobs: Map<string, StandInJob>;
  /** Answers a Converse call; a text echo of the last user message by default. */
  converse: (req: BedrockRequest, modelId: string) => BedrockAnswer;
  /** When set, a job is run with it at its first GetModelInvocationJob (a run's first poll). */
  autoRun: ((record: { recordId: string; modelInput: unknown }, index: number) => RecordAnswer) | undefined;
  /** Runs a job: each input record answered by `answer`, the job left in `status` (Completed by default). */
  runJob(jobArn: string, answer: (record: { recordId: string; modelInput: unknown }, index: number) => RecordAnswer, status?: string): void;
  close(): Promise<void>;
}

/** A Converse response body as Bedrock sends it. */
export function converseReply(text: string, usage = { inputTokens: 12, outputTokens: 3 }, stopReason = 'end_turn'): Record<string, unknown> {
  return {
    output: { message: { role: 'assistant', content: [{ text }] } },
    stopReason,
    usage: { ...usage, totalTokens: usage.inputTokens + usage.outputTokens },
    metrics: { latencyMs: 42 },
  };
}

function s3Parts(uri: string): { bucket: string; key: string } {
  const m = /^s3:\/\/([^/]+)\/?(.*)$/.exec(uri);
  if (!m) throw new Error(`not an s3 uri: ${uri}`);
  return { bucket: m[1]!, key: m[2]! };
}

export async function startBedrockServer(): Promise<BedrockServer> {
  const s3 = await startS3Server();
  const requests: BedrockRequest[] = [];
  const jobs = new Map<string, StandInJob>();
  let seq = 0;
  const state: { converse: BedrockServer['converse']; autoRun: BedrockServer['autoRun']; runJob?: BedrockServer['runJob'] } = {
    autoRun: undefined,
    converse: (req) => {
      const messages = (req.body as { messages?: { content: { text?: string }[] }[] }).messages ?? [];
      return { json: converseReply(`echo: ${messages.at(-1)?.content[0]?.text ?? ''}`) };
    },
  };

  const send = (res: ServerResponse | Http2ServerResponse, answer: BedrockAnswer): void => {
    if ('error' in answer) {
      res.writeHead(answer.status, { 'content-type': 'application/json', 'x-amzn-errortype': `${answer.error}:http://internal.amazon.com/coral/com.amazon.bedrock/` });
      res.end(JSON.stringify({ message: answer.message ?? answer.error }));
    } else if ('raw' in answer) {
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
      res.end(answer.raw);
    } else {
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.json));
    }
  };
  const jobView = (j: StandInJob) => ({
    jobArn: j.jobArn,
    jobName: j.jobName,
    modelId: j.modelId,
    roleArn: j.roleArn,
    status: j.status,
    ...(j.message ? { message: j.message } : {}),
    ...(j.clientRequestToken ? { clientRequestToken: j.clientRequestToken } : {}),
    ...(j.modelInvocationType ? { modelInvocationType: j.modelInvocationType } : {}),
    submitTime: j.submitTime,
    lastModifiedTime: j.submitTime,
    inputDataConfig: j.inputDataConfig,
    outputDataConfig: j.outputDataConfig,
    ...(j.counts ? { totalRecordCount: j.counts.total, processedRecordCount: j.counts.total, successRecordCount: j.counts.success, errorRecordCount: j.counts.error } : {}),
  });

  const handle = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const path = url.pathname;
      const isBedrock = path.startsWith('/model/') || path.startsWith('/model-invocation-job');
      if (!isBedrock) {
        // S3: relayed to the S3 stand-in as it came.
        const relay = request(`${s3.url}${req.url ?? '/'}`, { method: req.method, headers: req.headers }, (up) => {
          (res as ServerResponse).writeHead(up.statusCode ?? 500, up.headers);
          up.pipe(res as ServerResponse);
        });
        relay.end(Buffer.concat(chunks));
        return;
      }
      const text = Buffer.concat(chunks).toString('utf8');
      const body = text === '' ? {} : (JSON.parse(text) as unknown);
      const recorded: BedrockRequest = { method: req.method ?? '', path: decodeURIComponent(path), headers: req.headers, body };
      requests.push(recorded);

      const converse = /^\/model\/(.+)\/converse$/.exec(path);
      if (req.method === 'POST' && converse) return send(res, state.converse(recorded, decodeURIComponent(converse[1]!)));

      if (req.method === 'POST' && path === '/model-invocation-job') {
        const b = body as Omit<StandInJob, 'jobArn' | 'submitTime' | 'status'>;
        const same = [...jobs.values()].find((j) => b.clientRequestToken !== undefined && j.clientRequestToken === b.clientRequestToken);
        if (same) return send(res, { json: { jobArn: same.jobArn } });
        const jobArn = `arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/job${String(++seq).padStart(8, '0')}`;
        jobs.set(jobArn, { ...b, jobArn, submitTime: new Date().toISOString(), status: 'Submitted' });
        return send(res, { json: { jobArn } });
      }
      if (req.method === 'GET' && path === '/model-invocation-jobs') {
        const name = url.searchParams.get('nameContains') ?? '';
        const after = url.searchParams.get('submitTimeAfter');
        const list = [...jobs.values()].filter((j) => j.jobName.includes(name) && (after === null || Date.parse(j.submitTime) >= Date.parse(after)));
        return send(res, { json: { invocationJobSummaries: list.map(jobView) } });
      }
      const one = /^\/model-invocation-job\/([^/]+)(\/stop)?$/.exec(path);
      if (one) {
        const job = jobs.get(decodeURIComponent(one[1]!));
        if (!job) return send(res, { error: 'ResourceNotFoundException', status: 404, message: 'The specified job was not found.' });
        if (req.method === 'GET' && !one[2]) {
          if (state.autoRun && job.status === 'Submitted') state.runJob!(job.jobArn, state.autoRun);
          return send(res, { json: jobView(job) });
        }
        if (req.method === 'POST' && one[2]) {
          if (!['Completed', 'PartiallyCompleted', 'Failed', 'Stopped', 'Expired'].includes(job.status)) job.status = 'Stopped';
          return send(res, { json: {} });
        }
      }
      return send(res, { error: 'UnknownOperationException', status: 404 });
    });
  };
  const h1 = createServer(handle);
  const h2 = createHttp2Server(handle);
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.once('data', (first: Buffer) => {
      socket.pause();
      socket.unshift(first);
      (first.toString('latin1', 0, 3) === 'PRI' ? h2 : h1).emit('connection', socket);
      process.nextTick(() => socket.resume());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const api: BedrockServer = {
    url,
    requests,
    s3,
    jobs,
    get autoRun() {
      return state.autoRun;
    },
    set autoRun(fn) {
      state.autoRun = fn;
    },
    get converse() {
      return state.converse;
    },
    set converse(fn) {
      state.converse = fn;
    },
    runJob(jobArn, answer, status = 'Completed') {
      const job = jobs.get(jobArn);
      if (!job) throw new Error(`no job ${jobArn}`);
      const input = s3Parts(job.inputDataConfig.s3InputDataConfig.s3Uri);
      const raw = s3.objects.get(`${input.bucket}/${input.key}`);
      if (!raw) throw new Error(`no input at ${job.inputDataConfig.s3InputDataConfig.s3Uri}`);
      const records = raw.toString('utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { recordId: string; modelInput: unknown });
      const lines: string[] = [];
      let success = 0;
      let error = 0;
      records.forEach((r, i) => {
        const a = answer(r, i);
        if (a === 'omit') return;
        if ('twice' in a) {
          success++;
          lines.push(JSON.stringify({ ...r, modelOutput: a.twice }), JSON.stringify({ ...r, modelOutput: a.twice }));
        } else if ('error' in a) {
          error++;
          lines.push(JSON.stringify({ ...r, error: a.error }));
        } else {
          success++;
          lines.push(JSON.stringify({ ...r, modelOutput: a.modelOutput }));
        }
      });
      const out = s3Parts(job.outputDataConfig.s3OutputDataConfig.s3Uri);
      const folder = `${out.bucket}/${out.key.replace(/\/+$/, '')}/${jobArn.split('/').pop()!}`;
      const file = input.key.split('/').pop()!;
      s3.objects.set(`${folder}/${file}.out`, Buffer.from(lines.join('\n') + '\n'));
      s3.objects.set(
        `${folder}/manifest.json.out`,
        Buffer.from(JSON.stringify({ totalRecordCount: records.length, processedRecordCount: success + error, successRecordCount: success, errorRecordCount: error })),
      );
      job.counts = { total: records.length, success, error };
      job.status = status;
    },
    async close() {
      // The SDK keeps its HTTP/2 sessions open; the stand-in ends them.
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await s3.close();
    },
  };
  state.runJob = (arn, answer, status) => api.runJob(arn, answer, status);
  return api;
}

/**
 * The Bedrock stand-in of the running test: `start` starts it (a test starts one at a time), answering
 * Converse with `answers` in turn, the last one again once they run out, when given; `current` is the
 * one started last, and it is closed after each test.
 *
 * @example
 * const bedrock = useBedrockServer();
 * it('…', async () => { const server = await bedrock.start([{ json: converseReply('Yes.') }]); …; expect(bedrock.current.requests).toHaveLength(1); });
 */
export function useBedrockServer(): { start(answers?: readonly BedrockAnswer[]): Promise<BedrockServer>; readonly current: BedrockServer } {
  return useServer('useBedrockServer', async (answers?: readonly BedrockAnswer[]) => {
    const server = await startBedrockServer();
    if (answers !== undefined) {
      let n = 0;
      server.converse = () => answers[Math.min(n++, answers.length - 1)]!;
    }
    return server;
  });
}
