/**
 * `sondage view [campaign.yaml] [--data-dir DIR] [--port N]`: serves the read-only viewer
 * (lib/view/) on 127.0.0.1 until Ctrl-C. Thin: it picks the data folder, hands the viewer the
 * reader `sondage status` uses for live progress, and prints the URL.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadCampaign } from '../../design/loadCampaign.js';
import { SondageError } from '../../errors.js';
import { campaignsIn } from '../../store/dataDir.js';
import { DEFAULT_PORT, LocalViewSource, startViewServer } from '../../view/index.js';
import type { CampaignProgress, ViewServer } from '../../view/index.js';
import { OPTIONS } from '../args.js';
import { commandHelp } from '../help.js';
import { localCampaignStatus } from './status.js';

/** Failures listed on the page; all of them are counted by kind. */
const FAILURES_LISTED = 20;

/** Reads the command line: the data folder, the campaign to open first, the port. */
export async function viewOptions(argv: readonly string[]): Promise<{ dataDir: string; campaign?: string; port: number }> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, options: { ...OPTIONS['view'] } });
  } catch (err) {
    throw new SondageError(`sondage view: ${(err as Error).message}\n\n${commandHelp('view')}`);
  }
  const { values, positionals } = parsed as { values: Record<string, string | undefined>; positionals: string[] };
  if (positionals.length > 1) throw new SondageError(`sondage view: one campaign file at most (got ${positionals.join(', ')})\n\n${commandHelp('view')}`);
  const portText = values['port'] ?? String(DEFAULT_PORT);
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) throw new SondageError(`sondage view: --port ${portText} is not a port; give a whole number from 0 to 65535 (0: any free port)`);
  if (values['data-dir'] === '') throw new SondageError('sondage view: --data-dir is empty; give a folder, or leave the flag out to use the campaign\'s data_dir');
  const file = positionals[0];
  const campaign = file === undefined ? undefined : await loadCampaign(file);
  const dataDir = values['data-dir'] ?? campaign?.data_dir;
  if (dataDir === undefined) throw new SondageError(`sondage view: give a campaign file or --data-dir DIR\n\n${commandHelp('view')}`);
  if (!(await stat(dataDir).then((s) => s.isDirectory(), () => false))) throw new SondageError(`sondage view: the data folder ${dataDir} does not exist or is not a folder; give the --data-dir a campaign ran with`);
  const held = await campaignsIn(dataDir);
  if (held.length === 0) throw new SondageError(`sondage view: the data folder ${dataDir} holds no campaign (no campaigns/<name>/ in it); run one first with \`sondage run <campaign.yaml>\`, or give the --data-dir a campaign ran with`);
  if (campaign && !held.includes(campaign.name)) throw new SondageError(`sondage view: ${campaign.name} has not run in ${dataDir} (it holds ${held.join(', ')}); run it first, or give the --data-dir it ran with`);
  return { dataDir, ...(campaign ? { campaign: campaign.name } : {}), port };
}

/** Progress as `sondage status` reads it, without what the page has no use for (the data folder's path). */
export async function viewProgress(dataDir: string, name: string): Promise<CampaignProgress | undefined> {
  if (!(await stat(path.join(dataDir, 'ledger.sqlite')).then(() => true, () => false))) return undefined;
  const s = await localCampaignStatus(dataDir, { name }, Number.MAX_SAFE_INTEGER);
  const failuresByKind: Record<string, number> = {};
  for (const f of s.failures) failuresByKind[f.error] = (failuresByKind[f.error] ?? 0) + 1;
  return {
    run: s.run,
    phases: s.phases,
    ...(s.budget ? { budget: s.budget } : {}),
    failures: s.failures.slice(0, FAILURES_LISTED),
    failuresTotal: s.failuresTotal,
    failuresByKind,
  };
}

/** Starts the viewer; resolves with the server (tests close it). */
export async function startView(argv: readonly string[]): Promise<{ server: ViewServer; url: string }> {
  const options = await viewOptions(argv);
  const source = await LocalViewSource.open(options.dataDir, { progress: (name) => viewProgress(options.dataDir, name) });
  const server = await startViewServer(source, { port: options.port }).catch(async (err: unknown) => {
    await source.close();
    throw err;
  });
  const close = server.close;
  const url = options.campaign ? `${server.url}#/c/${encodeURIComponent(options.campaign)}` : server.url;
  return { server: { ...server, close: async () => (await close(), await source.close()) }, url };
}

/** `sondage view`: serves until SIGINT or SIGTERM, then exits 0. */
export async function viewCommand(argv: readonly string[]): Promise<number> {
  const { server, url } = await startView(argv);
  process.stdout.write(`sondage view: ${url}\n(read-only, on 127.0.0.1 only; Ctrl-C stops it)\n`);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await server.close();
  return 0;
}
