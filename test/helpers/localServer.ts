/**
 * The listen and close steps every stand-in server on 127.0.0.1 shares (S3, Step Functions, Batch,
 * Athena, Secrets Manager, IMDS, the provider wire servers): a free port, and a close that does not
 * wait on kept-alive connections.
 */
import type { Server as HttpServer } from 'node:http';
import { createServer } from 'node:net';
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

/** A TCP port free on 127.0.0.1 right now: taken, then released, so nothing listens on it. */
export async function freePort(): Promise<number> {
  const server = createServer();
  const { port } = await listenLocal(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
