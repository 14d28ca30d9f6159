/**
 * The viewer's HTTP server: node:http on 127.0.0.1, a page and its script, and a read-only JSON API
 * over a ViewSource. It serves no file by path: every answer is built from the source, whose every
 * name is checked against what the data folder holds; nothing of the environment is ever sent.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SondageError } from '../errors.js';
import { ViewNotFoundError } from './errors.js';
import { refusal } from './guard.js';
import { pageHtml } from './page.js';
import type { ReplyQuery, ViewSource } from './types.js';

/** The port `sondage view` takes unless told otherwise. */
export const DEFAULT_PORT = 4178;

const SCRIPT = readFileSync(new URL('./viewer.js', import.meta.url), 'utf8');

/** Headers on every answer: nothing cached, nothing framed, nothing loaded from elsewhere. */
const COMMON_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

export interface ViewServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

function send(res: http.ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { ...COMMON_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const json = (res: http.ServerResponse, status: number, value: unknown): void => send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));

/** The reply query of a request's search parameters: `phase` (repeatable), `model`, `language`, `reader`, `label`, `disagree`, `q`, `f.<column>`, `offset`, `limit`, `cursor`. */
export function queryOf(params: URLSearchParams): ReplyQuery {
  const str = (k: string): string | undefined => params.get(k) || undefined;
  const factors: Record<string, string> = {};
  for (const [k, v] of params) if (k.startsWith('f.') && v !== '') factors[k.slice(2)] = v;
  const num = (k: string): number | undefined => (params.get(k) === null ? undefined : Number(params.get(k)) || 0);
  const phases = params.getAll('phase').filter(Boolean);
  return {
    ...(phases.length > 0 ? { phases } : {}),
    ...(str('model') ? { model: str('model') } : {}),
    ...(str('language') ? { language: str('language') } : {}),
    ...(str('reader') ? { reader: str('reader') } : {}),
    ...(str('label') ? { label: str('label') } : {}),
    ...(params.get('disagree') === '1' ? { disagree: true } : {}),
    ...(str('q') ? { search: str('q') } : {}),
    ...(Object.keys(factors).length > 0 ? { factors } : {}),
    ...(num('offset') !== undefined ? { offset: num('offset') } : {}),
    ...(num('limit') !== undefined ? { limit: num('limit') } : {}),
    ...(str('cursor') ? { cursor: str('cursor') } : {}),
  };
}

/** Answers one API request (`parts`: the path after `/api/`, decoded segment by segment). */
async function api(source: ViewSource, parts: readonly string[], params: URLSearchParams): Promise<unknown> {
  if (parts.length === 1 && parts[0] === 'campaigns') return { description: source.description, campaigns: await source.campaigns() };
  if (parts[0] !== 'campaigns' || parts.length < 3) throw new ViewNotFoundError('no such endpoint');
  const campaign = parts[1]!;
  const what = parts[2];
  if (parts.length === 3 && what === 'overview') return source.overview(campaign);
  if (parts.length === 3 && what === 'filters') return source.filters(campaign);
  if (parts.length === 4 && what === 'tables') return source.table(campaign, parts[3]!);
  if (parts.length === 3 && what === 'cell') {
    const selection = await source.cellSelection(campaign, params.get('table') ?? '', Number(params.get('row')), params.get('column') ?? '');
    return { selection: selection ?? null };
  }
  if (parts.length === 3 && what === 'replies') return source.replies(campaign, queryOf(params));
  if (parts.length === 3 && what === 'count') return { count: await source.count(campaign, queryOf(params)) };
  if (parts.length === 3 && what === 'reply') {
    const where = { ...(params.get('model') ? { model: params.get('model')! } : {}), ...(params.get('language') ? { language: params.get('language')! } : {}) };
    const detail = await source.reply(campaign, params.get('phase') ?? '', params.get('item') ?? '', where);
    if (!detail) throw new ViewNotFoundError('no such reply');
    return detail;
  }
  throw new ViewNotFoundError('no such endpoint');
}

/** Splits a path into decoded segments; undefined when a segment does not decode. */
function segments(pathname: string): string[] | undefined {
  try {
    return pathname.split('/').filter(Boolean).map((s) => decodeURIComponent(s));
  } catch {
    return undefined;
  }
}

async function handle(source: ViewSource, port: number, req: http.IncomingMessage, res: http.ServerResponse, title: string): Promise<void> {
  const refused = refusal(req.socket.remoteAddress, req.headers.host, port);
  if (refused) return send(res, 403, 'text/plain; charset=utf-8', `${refused}\n`);
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain; charset=utf-8', 'the viewer is read-only\n');
  const url = new URL(req.url ?? '/', `http://127.0.0.1:${port}`);
  if (url.pathname === '/') return send(res, 200, 'text/html; charset=utf-8', pageHtml(title));
  if (url.pathname === '/viewer.js') return send(res, 200, 'text/javascript; charset=utf-8', SCRIPT);
  const parts = segments(url.pathname);
  if (!parts || parts[0] !== 'api') return json(res, 404, { error: 'not found' });
  try {
    json(res, 200, await api(source, parts.slice(1), url.searchParams));
  } catch (err) {
    if (err instanceof ViewNotFoundError) return json(res, 404, { error: err.message });
    if (err instanceof SondageError) return json(res, 400, { error: err.message });
    // An unexpected failure is logged here, not sent: its message may name local paths.
    process.stderr.write(`sondage view: ${(err as Error).stack ?? String(err)}\n`);
    json(res, 500, { error: 'the query failed; the terminal running `sondage view` shows why' });
  }
}

/**
 * Starts the viewer on 127.0.0.1 (`port` 0: any free port).
 * @example const server = await startViewServer(source, { port: 0 }); console.log(server.url);
 */
export async function startViewServer(source: ViewSource, options: { readonly port?: number; readonly title?: string } = {}): Promise<ViewServer> {
  const server = http.createServer();
  const title = options.title ?? 'sondage view';
  let port = options.port ?? DEFAULT_PORT;
  server.on('request', (req, res) => {
    handle(source, port, req, res, title).catch((err: unknown) => {
      process.stderr.write(`sondage view: ${String(err)}\n`);
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'error\n');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new SondageError(`sondage view: port ${port} is taken; give another with --port, or --port 0 for any free one`, { cause: err }) : err),
    );
    server.listen(port, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
