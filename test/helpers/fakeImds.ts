/**
 * The EC2 instance metadata service as a Spot instance's container sees it, on 127.0.0.1, for the
 * GPU job's interruption watch (lib/gpu/spotNotice.ts): IMDSv2 only (PUT /latest/api/token with a
 * TTL header gives a token; every read without it is 401), and `spot/instance-action` 404 until
 * the test calls `notify()`, then `{"action": "terminate", "time": …}` as EC2 publishes it.
 */
import { createServer } from 'node:http';
import { listenLocal, closeServer } from './localServer.js';

export interface FakeImds {
  readonly url: string;
  /** EC2 schedules the instance's termination two minutes from now. */
  notify(): void;
  /** Reads of spot/instance-action, and whether each carried the token. */
  readonly reads: { readonly withToken: boolean }[];
  close(): Promise<void>;
}

export async function startFakeImds(): Promise<FakeImds> {
  const token = 'imds-token-for-tests';
  let notice: { action: string; time: string } | undefined;
  const reads: { withToken: boolean }[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'PUT' && req.url === '/latest/api/token') {
        if (!req.headers['x-aws-ec2-metadata-token-ttl-seconds']) return void res.writeHead(400).end();
        return void res.writeHead(200, { 'content-type': 'text/plain' }).end(token);
      }
      if (req.method === 'GET' && req.url === '/latest/meta-data/spot/instance-action') {
        const withToken = req.headers['x-aws-ec2-metadata-token'] === token;
        reads.push({ withToken });
        if (!withToken) return void res.writeHead(401).end();
        if (!notice) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<?xml version="1.0"?><title>404 - Not Found</title>');
        return void res.writeHead(200, { 'content-type': 'text/plain' }).end(JSON.stringify(notice));
      }
      res.writeHead(404).end();
    });
  });
  const { url } = await listenLocal(server);
  return {
    url,
    notify: () => void (notice = { action: 'terminate', time: new Date(Date.now() + 120_000).toISOString().replace(/\.\d+Z$/, 'Z') }),
    reads,
    close: () => closeServer(server),
  };
}
