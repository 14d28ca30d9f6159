/**
 * The viewer's server serves this machine only and nothing but the campaign data: a request from
 * another address (even of the loopback range) or for another host name (DNS rebinding) is
 * refused, no path leaves the data folder's campaigns, and no secret — of the environment, or in a
 * file beside the data — is ever in an answer. Also the command's own errors and options.
 */
import http from 'node:http';
import net from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startView } from '../../lib/cli/commands/view.js';
import { isLocalPeer, isOwnHost } from '../../lib/view/index.js';
import type { ViewServer } from '../../lib/view/index.js';
import { tempDir } from '../helpers/campaigns.js';
import { exited, runMain, spawnCli } from '../helpers/cli.js';

const ENV_SECRET = 'sk-view-test-ENVIRONMENT-0123456789';
const FILE_SECRET = 'sk-view-test-FILE-9876543210';

let dir: string;
let dataDir: string;
let cleanup: () => Promise<void>;
let server: ViewServer;

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: http.IncomingHttpHeaders;
}

function ask(pathname: string, options: { host?: string; localAddress?: string; method?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        path: pathname,
        method: options.method ?? 'GET',
        headers: { host: options.host ?? `127.0.0.1:${server.port}` },
        ...(options.localAddress ? { localAddress: options.localAddress } : {}),
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('view-server'));
  dataDir = path.join(dir, 'data');
  const campaign = path.join(dataDir, 'campaigns', 'c1');
  await mkdir(path.join(campaign, 'results'), { recursive: true });
  await mkdir(path.join(campaign, 'input'), { recursive: true });
  await writeFile(path.join(campaign, 'plan.json'), JSON.stringify({ campaign: 'c1', battery: 'xvalue', phases: ['defonly'] }));
  await writeFile(path.join(campaign, 'results', 'overall.csv'), 'model,strategy,n\nalpha,defonly,3\n');
  // Secrets a careless user left beside the data: none may be served.
  await writeFile(path.join(campaign, 'results', 'keys.env'), `OPENAI_API_KEY=${FILE_SECRET}\n`);
  await writeFile(path.join(campaign, 'input', '.env'), `OPENAI_API_KEY=${FILE_SECRET}\n`);
  await writeFile(path.join(dataDir, '.env'), `ANTHROPIC_API_KEY=${FILE_SECRET}\n`);
  await writeFile(path.join(dir, 'secret.csv'), `key\n${FILE_SECRET}\n`);
  process.env['SONDAGE_VIEW_TEST_KEY'] = ENV_SECRET;
  ({ server } = await startView(['--data-dir', dataDir, '--port', '0']));
});

afterAll(async () => {
  delete process.env['SONDAGE_VIEW_TEST_KEY'];
  await server?.close();
  await cleanup?.();
});

describe('who may ask', () => {
  it('answers 127.0.0.1 under its own name, as 127.0.0.1 or localhost', async () => {
    expect((await ask('/api/campaigns')).status).toBe(200);
    expect((await ask('/api/campaigns', { host: `localhost:${server.port}` })).status).toBe(200);
  });

  it('refuses another address, even one of the loopback range', async () => {
    const other = await ask('/api/campaigns', { localAddress: '127.0.0.2' });
    expect(other.status).toBe(403);
    expect(other.body).toContain('127.0.0.1 only');
    expect(other.body).not.toContain('c1');
  });

  it.each([['evil.example'], [`evil.example:${server?.port ?? 0}`], ['127.0.0.1:1'], ['localhost.evil.example']])('refuses the Host header %j (DNS rebinding)', async (host) => {
    const res = await ask('/api/campaigns', { host: host.replace(':0', `:${server.port}`) });
    expect(res.status).toBe(403);
    expect(res.body).not.toContain('c1');
  });

  it('refuses a request without a Host header', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(server.port, '127.0.0.1', () => socket.write('GET /api/campaigns HTTP/1.0\r\n\r\n'));
      let text = '';
      socket.on('data', (c) => (text += c.toString('utf8')));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.[01] 403/);
  });

  it('listens on 127.0.0.1 alone: not on ::1', async () => {
    await expect(
      new Promise((resolve, reject) => {
        const req = http.request({ host: '::1', port: server.port, path: '/' }, resolve);
        req.on('error', reject);
        req.end();
      }),
    ).rejects.toThrow();
  });

  it('is read-only: anything but GET and HEAD is refused', async () => {
    expect((await ask('/api/campaigns', { method: 'POST' })).status).toBe(405);
    expect((await ask('/api/campaigns', { method: 'DELETE' })).status).toBe(405);
  });

  it('the pure checks agree', () => {
    expect([isLocalPeer('127.0.0.1'), isLocalPeer('::ffff:127.0.0.1'), isLocalPeer('127.0.0.2'), isLocalPeer('::1'), isLocalPeer('10.0.0.1'), isLocalPeer(undefined)]).toEqual([true, true, false, false, false, false]);
    expect([isOwnHost('127.0.0.1:80', 80), isOwnHost('LOCALHOST:80', 80), isOwnHost('127.0.0.1', 80), isOwnHost('a.b:80', 80), isOwnHost(undefined, 80)]).toEqual([true, true, false, false, false]);
  });
});

describe('what is served', () => {
  const TRAVERSALS = [
    '/../../etc/passwd',
    '/%2e%2e/%2e%2e/etc/passwd',
    '/api/campaigns/..%2F..%2F/overview',
    '/api/campaigns/..%2F..%2Fetc/overview',
    '/api/campaigns/c1/tables/..%2Fplan.json',
    '/api/campaigns/c1/tables/..%2F..%2F..%2F.env',
    '/api/campaigns/c1/tables/..%2F..%2F..%2F..%2Fsecret.csv',
    '/api/campaigns/c1/tables/keys.env',
    '/api/campaigns/c1/tables/%2Fetc%2Fpasswd',
    '/api/campaigns/c1/tables/..%5C..%5C.env',
    '/api/campaigns/c1/input/.env',
    '/api/campaigns/c1/reply?phase=..%2F..&item=x',
    '/api/campaigns/c1/replies?phase=..%2Finput',
    '/api/campaigns/c1/replies?f.x%22)%20OR%201%3D1%20--=1',
    '/api/campaigns/%00/overview',
    '/api/campaigns/c1/tables/%ZZ',
    '/viewer.js/../../../.env',
    '/.env',
  ];

  it.each(TRAVERSALS.map((t) => [t]))('refuses %s without naming a path', async (url) => {
    const res = await ask(url);
    expect([400, 404]).toContain(res.status);
    expect(res.body).not.toContain(FILE_SECRET);
    expect(res.body).not.toContain(dir);
    expect(res.body).not.toContain('root:');
  });

  it('no answer of any endpoint carries a secret or the local path of the data', async () => {
    const urls = ['/', '/viewer.js', '/api/campaigns', '/api/campaigns/c1/overview', '/api/campaigns/c1/filters', '/api/campaigns/c1/tables/overall.csv', '/api/campaigns/c1/replies', '/api/campaigns/c1/count', '/api/campaigns/c1/cell?table=overall.csv&row=0&column=n', ...TRAVERSALS];
    for (const url of urls) {
      const res = await ask(url);
      for (const secret of [ENV_SECRET, FILE_SECRET, dataDir]) expect(res.body, url).not.toContain(secret);
    }
    const listed = JSON.parse((await ask('/api/campaigns')).body) as { campaigns: { tables: string[] }[] };
    expect(listed.campaigns[0]!.tables).toEqual(['overall.csv']);
  });

  it('the page loads its own script only, under a strict CSP', async () => {
    const page = await ask('/');
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.body).toMatch(/<script src="\/viewer.js"><\/script>/);
    expect(page.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('sondage view, the command', () => {
  it('--help names its options', async () => {
    const { code, stdout } = await runMain(['view', '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('sondage view [campaign.yaml] [--data-dir DIR] [--port N]');
    expect(stdout).toContain('127.0.0.1');
  });

  it.each([
    ['no campaign file and no --data-dir', [], 'give a campaign file or --data-dir DIR'],
    ['a data folder that does not exist', ['--data-dir', '/nonexistent/sondage-view'], 'does not exist'],
    ['a bad port', ['--data-dir', '.', '--port', 'http'], '--port http is not a port'],
    ['an unknown option', ['--data-dir', '.', '--host', '0.0.0.0'], "Unknown option '--host'"],
  ])('refuses %s', async (_what, argv, message) => {
    const { code, stderr } = await runMain(['view', ...argv]);
    expect(code).toBe(1);
    expect(stderr).toContain(message);
  });

  it('names a data folder without campaigns as such', async () => {
    const empty = path.join(dir, 'empty');
    await mkdir(empty, { recursive: true });
    const { code, stderr } = await runMain(['view', '--data-dir', empty]);
    expect(code).toBe(1);
    expect(stderr).toContain('holds no campaign');
    expect(stderr).toContain('sondage run');
  });

  it('the binary prints the URL, serves it, and stops with exit 0 on Ctrl-C (SIGINT)', async () => {
    const child = spawnCli(['view', '--data-dir', dataDir, '--port', '0']);
    try {
      const deadline = Date.now() + 30_000;
      while (!/http:\/\/127\.0\.0\.1:\d+\//.test(child.output().stdout) && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 100));
      const printed = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(child.output().stdout);
      expect(printed, child.output().stderr).not.toBeNull();
      const res = await fetch(`${printed![0]}api/campaigns`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { campaigns: { name: string }[] }).campaigns.map((c) => c.name)).toEqual(['c1']);
      child.kill('SIGINT');
      expect(await exited(child)).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 60_000);

  it('a taken port is named, with the way out', async () => {
    const { code, stderr } = await runMain(['view', '--data-dir', dataDir, '--port', String(server.port)]);
    expect(code).toBe(1);
    expect(stderr).toContain(`port ${server.port} is taken`);
  });
});
