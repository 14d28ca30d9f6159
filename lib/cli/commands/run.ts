import { resolve } from 'node:path';
import { SondageError } from '../../errors.js';
import { loadRunContext } from '../../run/context.js';
import { writableDataDir } from '../dataDir.js';
import { printDesignWarnings } from '../designWarnings.js';
import { runCampaign } from '../../run/runCampaign.js';
import { DEFAULT_MAX_WAIT_MS, DEFAULT_RETRY } from '../../run/callWithRetry.js';
import { ProgressBar, silentProgress } from '../../run/progress.js';
import { rereadNotices } from '../rereadNotices.js';
import { syncRemainderNotices } from '../syncRemainderNotices.js';
import type { CliArgs } from '../args.js';
import { shownPath } from '../shownPath.js';
import { EmbeddedLedger } from '../../store/index.js';
import type { Plan } from '../../run/planCampaign.js';
import { ledgerStatus } from './status.js';
import { unreadableExit } from '../readoutExit.js';

/** Batches end within a day (the providers' completion window): a longer wait only delays results. */
const MAX_POLL_SECONDS = 86_400;

/**
 * `--poll-interval SECONDS` as milliseconds, or undefined when absent (runCampaign's default).
 * @throws SondageError naming the flag, the value and what it takes.
 * @example parsePollInterval('30') // 30000
 */
export function parsePollInterval(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const seconds = /^\s*\d*\.?\d+(e[+-]?\d+)?\s*$/i.test(raw) ? Number(raw) : NaN;
  if (!(Number.isFinite(seconds) && seconds > 0 && seconds <= MAX_POLL_SECONDS)) {
    throw new SondageError(
      `sondage run: --poll-interval ${JSON.stringify(raw)} is not a valid number of seconds; give a positive number up to ${MAX_POLL_SECONDS}, e.g. --poll-interval 30`,
    );
  }
  return Math.max(1, Math.round(seconds * 1000));
}

/** A wait longer than a week is a provider that will not answer this campaign: a run does not sit it out. */
const MAX_WAIT_SECONDS = 604_800;

/**
 * `--max-wait SECONDS` as milliseconds, or undefined when absent (DEFAULT_MAX_WAIT_MS).
 * @throws SondageError naming the flag, the value and what it takes.
 * @example parseMaxWait('600') // 600000
 */
export function parseMaxWait(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const seconds = /^\s*\d*\.?\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!(Number.isFinite(seconds) && seconds >= 0 && seconds <= MAX_WAIT_SECONDS)) {
    throw new SondageError(
      `sondage run: --max-wait ${JSON.stringify(raw)} is not a valid number of seconds; give 0 to ${MAX_WAIT_SECONDS}, e.g. --max-wait 600 (the default is ${DEFAULT_MAX_WAIT_MS / 1000})`,
    );
  }
  return Math.round(seconds * 1000);
}

/** More threads than this only wait on each other (and each holds its own DuckDB). */
const MAX_THREADS = 16;

/**
 * `--threads N` as a number, or undefined when absent (runCampaign's default).
 * @throws SondageError naming the flag, the value and what it takes.
 * @example parseThreads('2') // 2
 */
export function parseThreads(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!(Number.isInteger(n) && n >= 1 && n <= MAX_THREADS)) {
    throw new SondageError(`sondage run: --threads ${JSON.stringify(raw)} is not a whole number from 1 to ${MAX_THREADS}; e.g. --threads 2 (1 runs every partition on the main thread)`);
  }
  return n;
}

/** `sondage run`'s exit code when calls were made and none was answered (README "The local run"). */
export const EXIT_ALL_FAILED = 5;

/** `sondage run`'s exit code when a provider asked to wait longer than `--max-wait` (docs/troubleshooting.md). */
export const EXIT_WAIT_TOO_LONG = 6;

/** Calls were made (some item failed) and not one reply came back, none recovered either. */
/**
 * What a provider that reported more usage than was reserved did to the cap: which model, by how
 * much, and how far past the cap the campaign's spend went (it is recorded as reported).
 */
export function overrunLines(summary: { readonly overruns?: readonly { readonly model: string; readonly excessUsd: number }[]; readonly spentUsd: number; readonly possiblyBilledUsd: number; readonly heldUsd: number; readonly capUsd: number }): string[] {
  if (!summary.overruns?.length) return [];
  const past = summary.spentUsd + summary.possiblyBilledUsd + summary.heldUsd - summary.capUsd;
  return [
    ...summary.overruns.map(
      (o) =>
        `OVERRUN: ${o.model} reported more tokens than any byte-level tokenizer gives for its prompts and max_tokens: ` +
        `$${o.excessUsd.toFixed(4)} past what its calls reserved. No call was started after the first; the cost is recorded as reported. ` +
        'Check its price, its max_tokens and what the provider counts (a hidden system prompt, tools) before running again.',
    ),
    past > 0 ? `spend is $${past.toFixed(4)} past the cap of $${summary.capUsd}` : `spend stayed within the cap of $${summary.capUsd}`,
  ];
}

export function noCallAnswered(phases: readonly { readonly done: number; readonly adopted: number; readonly failed: number }[]): boolean {
  return phases.some((p) => p.failed > 0) && phases.every((p) => p.done === 0 && p.adopted === 0);
}

/** Pending items per phase from the ledger and the plan, as `sondage status` shows them. */
async function pendingByPhase(dataDir: string, campaign: string, plan: Plan): Promise<Map<string, number>> {
  const ledger = new EmbeddedLedger(dataDir);
  try {
    const { phases } = await ledgerStatus(ledger, campaign, plan);
    return new Map(phases.map((p) => [p.phase, Math.max(0, p.pending + p.inFlight)]));
  } finally {
    await ledger.close();
  }
}

export async function runCommand(args: CliArgs): Promise<number> {
  const pollMs = parsePollInterval(args.pollInterval);
  const threads = parseThreads(typeof args.values['threads'] === 'string' ? args.values['threads'] : undefined);
  const maxWaitMs = parseMaxWait(typeof args.values['max-wait'] === 'string' ? args.values['max-wait'] : undefined);
  const ctx = await loadRunContext(args.file, args.dataDir);
  // Before anything is written or asked: a data folder that is a file, read-only, or /proc.
  await writableDataDir(ctx.dataDir, args.dataDir, ctx.campaign);
  printDesignWarnings(ctx);
  const controller = new AbortController();
  // First Ctrl-C stops cleanly (in-flight calls finish and are committed); a second one kills.
  const onSignal = () => {
    if (controller.signal.aborted) process.exit(130);
    process.stderr.write('\nstopping: finishing the calls in flight (Ctrl-C again to kill; the next run resumes either way)\n');
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const labels = ctx.campaign.models.map((m) => `${m.id} (${m.provider === 'simulated' ? 'SIMULATED' : m.provider})`);
    process.stderr.write(`campaign ${ctx.campaign.name}: ${labels.join(', ')} → ${shownPath(ctx.dataDir)}\n`);
    const summary = await runCampaign(ctx, {
      progress: args.quiet ? silentProgress : new ProgressBar(),
      log: (line) => process.stderr.write(`${line}\n`),
      signal: controller.signal,
      allowPartial: args.allowPartial,
      retryFailed: args.values['retry-failed'] === true,
      ...(pollMs !== undefined ? { batch: { pollMs } } : {}),
      ...(threads !== undefined ? { threads } : {}),
      ...(maxWaitMs !== undefined ? { retry: { ...DEFAULT_RETRY, maxWaitMs } } : {}),
    });
    // Pending as `sondage status` counts it (planned − done − failed − in flight), so that the two
    // agree after a stop: partitions a stopped run never reached, and phases it never started, count.
    const pending = await pendingByPhase(summary.dataDir, summary.campaign, summary.plan);
    for (const p of summary.phases) {
      process.stderr.write(
        `${p.phase}: ${p.done} new, ${p.adopted} recovered from an interrupted run, ${p.failed} failed, ${pending.get(p.phase) ?? p.pending} pending, $${p.costUsd.toFixed(4)}\n`,
      );
    }
    for (const [phase, n] of pending) {
      if (!summary.phases.some((p) => p.phase === phase) && n > 0) process.stderr.write(`${phase}: not started, ${n} pending\n`);
    }
    for (const line of rereadNotices(summary.phases)) process.stdout.write(`${line}\n`);
    for (const line of syncRemainderNotices(summary.phases)) process.stderr.write(`${line}\n`);
    process.stderr.write(`spent $${summary.spentUsd.toFixed(4)} of $${summary.capUsd} (all runs of this campaign)\n`);
    if (summary.possiblyBilledUsd > 0 || summary.heldUsd > 0) {
      process.stderr.write(
        `  and $${(summary.possiblyBilledUsd + summary.heldUsd).toFixed(4)} possibly billed by interrupted runs (calls in flight at a kill that left no reply), counted against the cap\n`,
      );
    }
    if (summary.phases.some((p) => p.failed > 0)) {
      process.stderr.write(
        'failed items: `sondage status --failures N` lists their errors; the next run asks again those that failed ' +
          'transiently, and those failed for good (refusal, content_filter, bad_request, not_found, an empty reply) only with --retry-failed\n',
      );
    }
    for (const message of summary.keyFailures ?? []) process.stderr.write(`${message}\n`);
    for (const message of summary.waitStops ?? []) process.stderr.write(`${message}\n`);
    for (const line of overrunLines(summary)) process.stdout.write(`${line}\n`);
    if (summary.stopped === 'budget') {
      process.stderr.write('stopped at the budget cap: raise budget_usd and run again to collect the rest\n');
    } else if (summary.stopped === 'aborted') {
      process.stderr.write('stopped: run the same command again to resume\n');
      return 130;
    }
    if (summary.excluded && summary.excluded.length > 0) {
      process.stderr.write(`not analysed: ${summary.excluded.join(', ')} (stored, but no longer in the campaign file)\n`);
    }
    if (summary.table) process.stdout.write(`${summary.table}\n`);
    if (summary.resultsPrefix) process.stdout.write(`results: ${shownPath(resolve(summary.dataDir, summary.resultsPrefix))}\n`);
    if (summary.stopped) return 3;
    const unread = unreadableExit(summary.readouts);
    if (unread !== 0) return unread;
    // A rejected key left items pending: not a complete run, though the others' replies are analysed.
    if (summary.keyFailures) return 4;
    if (summary.waitStops) return EXIT_WAIT_TOO_LONG;
    if (noCallAnswered(summary.phases)) {
      process.stderr.write(
        'no call of this run was answered: every item it asked failed. `sondage status --failures 5` shows why ' +
          '(an unreachable base_url, a model name the provider does not know, …); fix that and run again\n',
      );
      return EXIT_ALL_FAILED;
    }
    return 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
