import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { listenLocal, closeServer } from '../../helpers/localServer.js';
import { useServer } from '../../helpers/useServer.js';

/** One scripted reply. Replies are served in order; the last one repeats when the script runs out. */
export type WireReply =
  | {
      readonly status?: number;
      readonly headers?: Readonly<Record<string, string>>;
      /** Sent as JSON. */
      readonly json?: unknown;
      /** Sent verbatim (malformed bodies). */
      readonly raw?: string;
      /** Computed from the request (echo tests); `drop` closes the socket without an answer, `hang` never answers. */
      readonly from?: (req: RecordedRequest) =>
        | {
            readonly status?: number;
            readonly headers?: Readonly<Record<string, string>>;
            readonly json?: unknown;
            readonly raw?: string;
          }
        | { readonly drop: true }
        | { readonly hang: true };
    }
  /** Never answers: the client must give up through its AbortSignal. */
  | { readonly hang: true }
  /** Closes the socket without an answer (a dropped connection). */
  | { readonly drop: true };

export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
}

export interface WireServer {
  /** `http://127.0.0.1:<port>`; append the API prefix the SDK expects (`/v1`). */
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

/**
 * A local HTTP server on 127.0.0.1 (port 0) that answers with a script and records every request,
 * so provider tests assert what the real SDK put on the wire (STYLE.md "Testing a provider").
 */
export async function startWireServer(script: readonly WireReply[]): Promise<WireServer> {
  const requests: RecordedRequest[] = [];
  const hanging = new Set<ServerResponse>();
  let next = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        // keep the raw text; a test asserting a JSON body then fails visibly
      }
      const recorded: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      const reply = script[Math.min(next++, script.length - 1)];
      if (reply === undefined) throw new Error('startWireServer: empty script');
      const computed = 'from' in reply ? reply.from?.(recorded) : undefined;
      if ('hang' in reply || (computed && 'hang' in computed)) {
        hanging.add(res);
        return;
      }
      if ('drop' in reply || (computed && 'drop' in computed)) {
        req.socket.destroy();
        return;
      }
      const status = computed?.status ?? reply.status ?? 200;
      const headers = { 'content-type': 'application/json', ...reply.headers, ...computed?.headers };
      res.writeHead(status, headers);
      res.end(computed?.raw ?? reply.raw ?? JSON.stringify(computed?.json ?? reply.json ?? {}));
    });
  });
  // An idle keep-alive socket that the server closed (Node's default: after 5 s) while the client
  // reuses it would fail a call the server never saw, and break a test's count of what it served.
  server.keepAliveTimeout = 60_000;
  const { url } = await listenLocal(server);
  return {
    url,
    requests,
    close: () => {
      for (const res of hanging) res.destroy();
      return closeServer(server);
    },
  };
}

/**
 * The wire server of the running test: `start` starts it (a test starts one at a time), `current`
 * is the one started last, and it is closed after each test.
 *
 * @example
 * const wire = useWireServer();
 * it('…', async () => { const server = await wire.start([{ json: body }]); …; expect(wire.current.requests).toHaveLength(1); });
 */
export function useWireServer(): { start(script: readonly WireReply[]): Promise<WireServer>; readonly current: WireServer } {
  return useServer('useWireServer', startWireServer);
}

/**
 * An OpenAI chat completion answering `req` with `content` (the model echoed from the request),
 * as a WireReply: what the local-endpoint run tests answer with.
 * @example startWireServer([(req) => chatCompletion(req, 'Yes.')])
 */
export function chatCompletion(req: RecordedRequest, content: string, usage = { prompt_tokens: 120, completion_tokens: 12 }): { json: unknown } {
  return {
    json: {
      id: 'chatcmpl-local',
      object: 'chat.completion',
      created: 1_751_328_000,
      model: (req.body as { model: string }).model,
      choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: 'stop', logprobs: null }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    },
  };
}

/**
 * An OpenAI chat completion in which the model refused (`message.refusal`), billed at `usage`.
 * @example startWireServer([(req) => chatRefusal(req)])
 */
export function chatRefusal(req: RecordedRequest, usage?: { prompt_tokens: number; completion_tokens: number }): { json: unknown } {
  const { json } = chatCompletion(req, '', usage);
  const body = json as { choices: { message: Record<string, unknown> }[] };
  body.choices[0]!.message = { role: 'assistant', content: null, refusal: 'I cannot help with that.' };
  return { json: body };
}

/**
 * An Anthropic Messages body with `text`, `usage` and `stop_reason` (`refusal` for a refused request).
 * @example startWireServer([() => anthropicMessage('Yes.', { input_tokens: 14, output_tokens: 2 })])
 */
export function anthropicMessage(text: string, usage: { input_tokens: number; output_tokens: number }, stopReason = 'end_turn'): { json: unknown } {
  return {
    json: { id: 'msg_local', type: 'message', role: 'assistant', model: 'claude-haiku-4-5', content: [{ type: 'text', text }], stop_reason: stopReason, stop_sequence: null, usage },
  };
}
