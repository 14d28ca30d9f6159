/**
 * The listen and close steps every stand-in server on 127.0.0.1 shares (S3, Step Functions, Batch,
 * Athena, Secrets Manager, IMDS, the provider wire servers): a free port, and a close that does not
 * wait on kept-alive connections; for the AWS JSON protocols, the whole request body before the
 * answer, and a JSON answer.
 */
import { createServer as createHttpServer } from 'node:http';
import type { Server as HttpServer, IncomingMessage, ServerResponse } from 'node:http';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';

/** Listens on a free port of 127.0.0.1; returns the port and the server's base URL. */
export async function listenLocal(server: Server): Promise<{ port: number; url: string }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { port, url: `http://127.0.0.1:${port}` };
}

/**
 * Stops an HTTP server: kept-alive connections are dropped first, so that close does not wait for
 * the SDK clients' idle sockets. A server already closed counts as closed.
 */
export function closeServer(server: HttpServer): Promise<void> {
  server.closeAllConnections();
  return new Promise<void>((resolve, reject) =>
    server.close((err) => (err === undefined || (err as NodeJS.ErrnoException).code === 'ERR_SERVER_NOT_RUNNING' ? resolve() : reject(err))),
  );
}

/**
 * A TCP port on 127.0.0.1 where nothing listens, for the calls that must find the door shut. It is
 * below 1024, outside the range a listen on port 0 draws from: a port freePort gives can be taken
 * by a test server running beside the test between the check and the call, and the call then
 * reaches that server instead of being refused.
 */
export async function closedPort(): Promise<number> {
  // From the top down, past the ports fetch refuses to call at all ("bad ports" of the Fetch standard).
  for (let port = 1023; port > 1; port--) if (!FETCH_BAD_PORTS.has(port) && (await refused(port))) return port;
  throw new Error('closedPort: every port below 1024 on 127.0.0.1 answers; expected one where nothing listens');
}

/** The Fetch standard's bad ports below 1024: fetch fails a call to them before it connects. */
const FETCH_BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137,
  139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995,
]);

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/** A TCP port free on 127.0.0.1 right now: taken, then released, so nothing listens on it (a server may be given it again). */
export async function freePort(): Promise<number> {
  const server = createServer();
  const { port } = await listenLocal(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Idle keep-alive sockets stay open this long (Node's default is 5 s). A client that reuses a socket
 * the server has just closed fails a request the server never saw; AWS endpoints keep idle
 * connections far longer, so a stand-in that closes them after 5 s fails callers (a worker whose
 * provider calls take 6 s) that AWS would not.
 */
export const STAND_IN_KEEP_ALIVE_MS = 60_000;

/** An HTTP server that hands `handle` each request with its whole body, once it has arrived. */
export function createBodyServer(handle: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void): HttpServer {
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks)));
  });
  server.keepAliveTimeout = STAND_IN_KEEP_ALIVE_MS;
  return server;
}

/** A JSON request body as an object; an empty body (a call without parameters) is `{}`. Malformed JSON throws. */
export function jsonBody(body: Buffer): Record<string, unknown> {
  return body.length > 0 ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : {};
}

/** Answers with `body` as JSON; `headers` name the protocol's content type and any other header. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>>): void {
  res.writeHead(status, headers);
  res.end(JSON.stringify(body));
}
