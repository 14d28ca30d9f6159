import { readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Campaign } from '../../design/campaign.js';
import { contextFor } from '../../run/context.js';
import { loadCampaign } from '../../design/loadCampaign.js';
import { SondageError } from '../../errors.js';
import { planCampaign } from '../../run/planCampaign.js';
import type { Plan } from '../../run/planCampaign.js';
import { rereadNoticeOf } from '../../run/rereadStoredReadings.js';
import { readParquet, tableGlob } from '../../store/DuckDb.js';
import { isProcessAlive } from '../../store/lock.js';
import { assertSafeSegment, planKey, runLockKey } from '../../store/layout.js';
import type { BlobStore, BudgetState, Ledger, PartitionRecord } from '../../store/types.js';
import type { CliArgs } from '../args.js';
import { formatGpuJobs } from '../gpuJobView.js';
import type { GpuJobState } from '../gpuJobView.js';
import { shownPath } from '../shownPath.js';
import { assertCampaignIn } from '../dataDir.js';

/** Phases in run order, for campaigns whose plan is not at hand. */
const DEFAULT_FAILURES_SHOWN = 5;

/** A campaign named on the command line: by its file (preferred) or by its name. */
export interface CampaignTarget {
  readonly name: string;
  readonly campaign?: Campaign;
}

/**
 * `status`/`stop` take the campaign file or, where the data is elsewhere (the stack, a `--data-dir`),
 * just its name. Something that looks like a path is a file, so a typo in it is reported as such.
 */
export async function resolveTarget(arg: string): Promise<CampaignTarget> {
  const isFile = await stat(arg).then(
    (s) => s.isFile(),
    () => false,
  );
  if (isFile || /\.ya?ml$/i.test(arg) || arg.includes('/') || arg.includes(path.sep)) {
    const campaign = await loadCampaign(arg);
    return { name: campaign.name, campaign };
  }
  assertSafeSegment('campaign name', arg);
  return { name: arg };
}

/** The data directory of a local campaign: `--data-dir`, else the campaign file's `data_dir`. */
export function localDataDir(command: string, target: CampaignTarget, dataDir: string | undefined): string {
  if (dataDir) return dataDir;
  if (target.campaign) return target.campaign.data_dir;
  throw new SondageError(`sondage ${command} ${target.name}: give the campaign file, or --data-dir with the name, to find its data here (or --aws for the deployed stack)`);
}

export interface PhaseStatus {
  readonly phase: string;
  /** Planned items not done, not failed and not in flight: what a run would still ask. */
  readonly pending: number;
  readonly done: number;
  readonly failed: number;
  /** Items of calls in flight now (reserved, not yet committed). */
  readonly inFlight: number;
  /**
   * Items the current design has: exact where every partition of the phase was expanded, the
   * battery's estimate where some were not yet (a dependent phase before its inputs' replies);
   * undefined when no plan is at hand.
   */
  readonly planned?: number;
  /** Whether `planned` includes an estimate. */
  readonly estimated?: boolean;
}

export interface StatusFailure {
  readonly at: string;
  readonly where: string;
  readonly error: string;
  readonly cause: string;
}

export interface OpenBatch {
  readonly phase: string;
  readonly model: string;
  readonly language: string;
  readonly batchId: string;
  /** When `sondage stop` asked the provider to cancel it; it stays open until its results are stored. */
  readonly cancelledAt?: string;
}

/** What `sondage status` shows, gathered locally or from the stack; one layout for both. */
export interface CampaignStatus {
  readonly campaign: string;
  /** `local data/` or `aws bucket …`. */
  readonly where: string;
  /** The run or execution: state and since when. */
  readonly run: string;
  readonly phases: readonly PhaseStatus[];
  /** Undefined before the first run set the campaign's budget. */
  readonly budget?: BudgetState;
  readonly openBatches: readonly OpenBatch[];
  /** Newest first, at most the number asked for. */
  readonly failures: readonly StatusFailure[];
  readonly failuresTotal: number;
  /** The latest execution's GPU jobs (AWS, on a stack with GPU queues); undefined elsewhere. */
  readonly gpuJobs?: readonly GpuJobState[];
  /** What the failures are: failed items' last errors locally, failed execution steps on AWS. */
  readonly failuresKind: string;
  /** A provider's usage above what its calls reserved, as the runs or the AWS workers recorded it beside the budget (the last model, the excess added up). */
  readonly overrun?: { readonly model: string; readonly excessUsd: number; readonly at: string; readonly local?: boolean };
  /** What the latest execution's plans read again of the stored readings under an edited design (AWS; lib/run/rereadStoredReadings.ts). */
  readonly rereads?: { readonly execution: string; readonly lines: readonly string[] };
}

const pct = (part: number, whole: number): string => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : '–');
const usd = (n: number): string => `$${n.toFixed(4)}`;
const oneLine = (s: string, max = 200): string => {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** The status as text: run line, a per-phase table, spend, open batches, recent failures. */
export function formatStatus(s: CampaignStatus): string {
  const lines = [`campaign ${s.campaign} (${s.where})`, `run: ${s.run}`];
  if (s.rereads && s.rereads.lines.length > 0) lines.push(`design edited (execution ${s.rereads.execution}):`, ...s.rereads.lines.map((l) => `  ${l}`));
  lines.push('');
  const header = ['phase', 'done', 'failed', 'in flight', 'pending', 'planned', 'progress'];
  const rows = s.phases.map((p) => {
    // Without a plan, progress is over the items the ledger knows so far.
    const whole = p.planned ?? p.done + p.failed + p.inFlight + p.pending;
    const planned = p.planned === undefined ? '?' : `${p.estimated ? '~' : ''}${p.planned}`;
    return [p.phase, String(p.done), String(p.failed), String(p.inFlight), String(p.pending), planned, pct(p.done, whole)];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const r of [header, ...rows]) lines.push(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd());
  if (s.phases.some((p) => p.estimated)) lines.push('~ the battery\'s estimate: some partitions of the phase have not been expanded yet');
  lines.push('');
  const b = s.budget;
  lines.push(
    b
      ? `spend: ${usd(b.spent_usd)} of ${usd(b.cap_usd)} cap (${pct(b.spent_usd + b.possibly_billed_usd, b.cap_usd)} counting what may have been billed), ${usd(b.reserved_usd - b.orphaned_usd)} reserved for calls in flight`
      : 'spend: nothing recorded yet (no budget in the ledger: the campaign has not started)',
  );
  if (b && b.orphaned_usd > 0) lines.push(`  ${usd(b.orphaned_usd)} reserved by a killed run, possibly billed: held until the next run reads its journals`);
  if (b && b.possibly_billed_usd > 0) lines.push(`  ${usd(b.possibly_billed_usd)} possibly billed: calls of killed runs that left no reply, counted against the cap`);
  // Only a provider that reported more usage than a call reserved can bring spend past the cap
  // (every reservation is a bound); the run that met it stopped and named the model.
  if (b && b.spent_usd + b.possibly_billed_usd > b.cap_usd) {
    const who = s.overrun ? `${s.overrun.model} reported more usage than its calls reserved` : 'a provider reported more usage than its calls reserved (the run that met it named the model)';
    lines.push(`  PAST THE CAP by ${usd(b.spent_usd + b.possibly_billed_usd - b.cap_usd)}: ${who}`);
  }
  if (s.overrun) {
    lines.push(
      `  OVERRUN: ${s.overrun.model} reported usage ${usd(s.overrun.excessUsd)} past what its calls reserved (last at ${s.overrun.at.replace(/\.\d{3}Z$/, 'Z')}); ` +
        (s.overrun.local
          ? 'the run started no call after it. Check its price, max_tokens and what the provider counts before running again'
          : 'every worker stopped at its next chunk. Check its price, max_tokens and what the provider counts before `sondage start --aws` again'),
    );
  }
  if (s.gpuJobs) lines.push(...formatGpuJobs(s.gpuJobs));
  lines.push(`open provider batches: ${s.openBatches.length}`);
  for (const b of s.openBatches) lines.push(`  ${b.phase} ${b.model}/${b.language}: ${b.batchId}${b.cancelledAt ? ` (cancel requested ${b.cancelledAt})` : ''}`);
  // Never "none" beside a table that counts failed items: those without a stored error are said.
  const failedInTable = s.phases.reduce((n, p) => n + p.failed, 0);
  lines.push(
    s.failuresTotal > 0
      ? `failures: ${s.failuresTotal} ${s.failuresKind}${s.failures.length < s.failuresTotal ? `, last ${s.failures.length}` : ''}:`
      : failedInTable > 0
        ? `failures: ${failedInTable} failed item(s) in the table above, none with a stored error (a failed shard or batch left no reply row); the next run asks them again`
        : 'failures: none',
  );
  for (const f of s.failures) lines.push(`  ${f.at.replace(/\.\d{3}Z$/, 'Z')}  ${f.where}  ${f.error}: ${oneLine(f.cause)}`);
  return `${lines.join('\n')}\n`;
}

/** The plan: the run's own `plan.json` where it wrote one, else computed from the campaign file. */
export async function campaignPlan(store: BlobStore, target: CampaignTarget): Promise<Plan | undefined> {
  const stored = await store.get(planKey(target.name)).catch(() => undefined);
  if (stored) {
    try {
      return JSON.parse(Buffer.from(stored).toString('utf8')) as Plan;
    } catch {
      // An unreadable plan.json (a write cut short) is not worth failing a status over: recompute.
    }
  }
  if (!target.campaign) return undefined;
  return planCampaign(await contextFor(target.campaign));
}

/**
 * Items per phase the current design has: per partition of the plan, the size the ledger recorded
 * when a run expanded it, else the plan's count (exact for root phases, the battery's estimate for
 * dependent ones).
 */
export function plannedItems(plan: Plan, recorded: readonly PartitionRecord[]): Map<string, { items: number; estimated: boolean }> {
  const known = new Map(recorded.map((r) => [`${r.phase}\u0000${r.model}\u0000${r.language}`, r.items]));
  const out = new Map<string, { items: number; estimated: boolean }>();
  for (const part of plan.partitions ?? []) {
    for (const [phase, estimate] of Object.entries(part.items)) {
      const exact = known.get(`${phase}\u0000${part.model}\u0000${part.language}`);
      const dependent = (plan.dependent ?? []).includes(phase);
      const acc = out.get(phase) ?? { items: 0, estimated: false };
      out.set(phase, { items: acc.items + (exact ?? estimate), estimated: acc.estimated || (exact === undefined && dependent) });
    }
  }
  return out;
}

/**
 * Counts per phase against the plan, budget and open batches: the part of the status both ledgers
 * answer alike. For every phase, planned = done + failed + in flight + pending: pending is what
 * the plan has that the ledger has neither settled nor in flight, registered or not (a run that
 * stopped at the cap has not registered the partitions it never reached).
 */
export async function ledgerStatus(
  ledger: Ledger,
  name: string,
  plan: Plan | undefined,
): Promise<Pick<CampaignStatus, 'phases' | 'budget' | 'openBatches'>> {
  const planned = plan ? plannedItems(plan, await ledger.partitions(name)) : new Map<string, { items: number; estimated: boolean }>();
  const inFlight = await ledger.inFlight(name);
  // Phases the plan lists, in graph order (a plan of an older version lists its lines' phases).
  const phaseNames = plan?.phases ? [...plan.phases] : [...new Set((plan?.lines ?? []).map((l) => l.phase))];
  const phases: PhaseStatus[] = [];
  const counts = await ledger.phaseCounts(name, phaseNames);
  for (const phase of phaseNames) {
    const c = counts.get(phase)!;
    const flying = Math.min(inFlight.get(phase) ?? 0, c.pending);
    const p = planned.get(phase);
    const settled = c.done + c.failed + flying;
    // An estimate gives way to what the ledger already holds; an exact count is never bent (a
    // negative pending would be a ledger that disagrees with the plan, shown as it is).
    const items = p === undefined ? undefined : p.estimated ? Math.max(p.items, settled) : p.items;
    const pending = items === undefined ? c.pending - flying : items - settled;
    phases.push({ phase, done: c.done, failed: c.failed, inFlight: flying, pending, ...(items === undefined ? {} : { planned: items, estimated: p!.estimated }) });
  }
  const budget = await ledger.budget(name).catch((err: unknown) => {
    if (err instanceof SondageError) return undefined; // no budget yet: not started
    throw err;
  });
  const openBatches = (await ledger.campaignBatches(name)).map((b) => ({
    phase: b.phase,
    model: b.model,
    language: b.language,
    batchId: b.batchId,
    ...(b.cancelledAt ? { cancelledAt: b.cancelledAt } : {}),
  }));
  return { phases, ...(budget ? { budget } : {}), openBatches };
}

interface ErrorRow {
  item_id: string;
  model: string;
  language: string;
  error_class: string | null;
  error_message: string | null;
  created_at: string;
}

/**
 * Local failures: the last error of each item the ledger has not marked done, from the stored reply
 * rows (a failed request is data: its class and message are on the row).
 */
async function localFailures(ledger: Ledger, dataDir: string, name: string, phases: readonly string[], shown: number): Promise<{ total: number; last: StatusFailure[] }> {
  const all: StatusFailure[] = [];
  for (const phase of phases) {
    const rows = await readParquet<ErrorRow>(
      tableGlob(dataDir, name, phase, 'replies'),
      // The newest error per item: an item retried after an error keeps only its latest cause.
      // An empty reply (no text, no logprobs) is listed as one, with its finish reason.
      `SELECT item_id, model, language,
              CASE WHEN status = 'empty' THEN 'empty_reply' ELSE error_class END AS error_class,
              CASE WHEN status = 'empty' THEN 'the provider answered with no text (finish_reason ' || coalesce(finish_reason, 'none') || ')' ELSE error_message END AS error_message,
              CAST(created_at AS VARCHAR) AS created_at FROM parts
       WHERE status IN ('error', 'empty') QUALIFY row_number() OVER (PARTITION BY item_id ORDER BY created_at DESC, attempt DESC) = 1`,
    );
    if (rows.length === 0) continue;
    const open = await ledger.pendingItems(name, phase);
    for (const r of rows) {
      if (!open.has(r.item_id)) continue;
      all.push({ at: r.created_at, where: `${phase} ${r.model}/${r.language} ${r.item_id}`, error: r.error_class ?? 'error', cause: r.error_message ?? '' });
    }
  }
  all.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
  return { total: all.length, last: all.slice(0, shown) };
}

/** The local run's state from its lock file: which process holds it, if it still lives. */
async function localRun(dataDir: string, name: string): Promise<string> {
  const text = await readFile(path.join(dataDir, runLockKey(name)), 'utf8').catch(() => undefined);
  if (text === undefined) return 'not running';
  try {
    const info = JSON.parse(text) as { pid?: number; host?: string; started_at?: string };
    if (typeof info.pid !== 'number') return 'not running (unreadable lock left behind)';
    if (info.host !== os.hostname()) return `running on ${String(info.host)} (pid ${info.pid}) since ${String(info.started_at)}, or left a lock there`;
    return isProcessAlive(info.pid) ? `running (pid ${info.pid}) since ${String(info.started_at)}` : 'not running (the last run was killed; `sondage run` resumes it)';
  } catch {
    return 'not running (unreadable lock left behind)';
  }
}

/** Parses `--failures N` (how many recent failures to show). */
export function failuresShown(values: CliArgs['values']): number {
  const raw = values.failures;
  if (raw === undefined) return DEFAULT_FAILURES_SHOWN;
  const n = Number(raw);
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || !Number.isSafeInteger(n)) throw new SondageError(`sondage status: --failures ${String(raw)} is not a whole number ≥ 0`);
  return n;
}

/**
 * `sondage status <campaign> [--aws]`: progress per phase against the plan, spend against
 * the cap, open provider batches and the latest failures, from the embedded ledger in the data
 * directory or, with --aws, from DynamoDB and the campaign's latest execution.
 */
export async function statusCommand(args: CliArgs): Promise<number> {
  const shown = failuresShown(args.values);
  const target = await resolveTarget(args.file);
  const status = args.aws ? await awsStatus(args, target, shown) : await localStatus(args, target, shown);
  process.stdout.write(formatStatus(status));
  return 0;
}

async function localStatus(args: CliArgs, target: CampaignTarget, shown: number): Promise<CampaignStatus> {
  const dataDir = localDataDir('status', target, args.dataDir);
  const ledgerFile = path.join(dataDir, 'ledger.sqlite');
  // Opening the ledger would create it; a campaign that never ran here is reported, not created.
  if (!(await stat(ledgerFile).then(() => true, () => false))) {
    throw new SondageError(`sondage status: ${target.name} has not run in ${shownPath(dataDir)} (no ledger.sqlite there); start it with \`sondage run\`, or give --data-dir`);
  }
  await assertCampaignIn('status', dataDir, target.name, target.campaign ? args.file : undefined); // bad input: another campaign's data
  return localCampaignStatus(dataDir, target, shown);
}

/**
 * The status of a campaign in a data folder that holds it and its ledger: what `sondage status`
 * prints, and what `sondage view` shows live.
 */
export async function localCampaignStatus(dataDir: string, target: CampaignTarget, shown: number): Promise<CampaignStatus> {
  const { EmbeddedLedger, LocalBlobStore } = await import('../../store/index.js');
  const ledger = new EmbeddedLedger(dataDir);
  try {
    const plan = await campaignPlan(new LocalBlobStore(dataDir), target);
    const counts = await ledgerStatus(ledger, target.name, plan);
    const failures = await localFailures(ledger, dataDir, target.name, counts.phases.map((p) => p.phase), shown);
    const overrun = await ledger.overrunOf(target.name);
    return {
      campaign: target.name,
      where: `local ${path.resolve(dataDir)}`,
      run: await localRun(dataDir, target.name),
      ...counts,
      failures: failures.last,
      failuresTotal: failures.total,
      // Items not done whose last attempt failed: failed in the table, or pending again after a stop.
      failuresKind: 'items not done whose last attempt failed (last error of each)',
      ...(overrun ? { overrun: { ...overrun, local: true } } : {}),
    };
  } finally {
    await ledger.close();
  }
}

/** `startDate`/`stopDate` as the SDK gives them. */
const iso = (d: Date | undefined): string => (d ? d.toISOString().replace(/\.\d{3}Z$/, 'Z') : '?');

async function awsStatus(args: CliArgs, target: CampaignTarget, shown: number): Promise<CampaignStatus> {
  const { awsClients, campaignExecutions, resolveGpuQueues, resolveStack } = await import('../aws.js');
  const clients = awsClients(await resolveStack({ values: args.values }));
  try {
    const { stateMachineArn, bucket } = clients.stack;
    const [latest] = await campaignExecutions(clients.sfn, stateMachineArn, target.name, { limit: 1 });
    let run = 'no execution yet (`sondage start <campaign.yaml> --aws`)';
    if (latest) {
      const d = latest.detail;
      run = `execution ${latest.name} ${d.status ?? latest.status} since ${iso(d.startDate)}`;
      if (d.stopDate) run += `, ended ${iso(d.stopDate)}`;
      if (d.error) run += ` (${d.error}${d.cause ? `: ${oneLine(d.cause, 160)}` : ''})`;
    }
    const plan = await campaignPlan(clients.blobs, target);
    const counts = await ledgerStatus(clients.ledger, target.name, plan);
    const recorded = (await clients.ledger.failures(target.name)).reverse();
    const overrun = await clients.ledger.overrunOf(target.name);
    const rereads = await rereadNoticeOf(clients.blobs, target.name);
    // The latest execution's GPU jobs, on a stack with GPU queues (lib/cli/gpuJobs.ts loads the Batch SDK).
    const queues = await resolveGpuQueues({ values: args.values });
    let gpuJobs: GpuJobState[] | undefined;
    if (queues.length > 0) {
      const { batchClient, campaignGpuJobs } = await import('../gpuJobs.js');
      const batch = batchClient();
      try {
        gpuJobs = latest?.name ? await campaignGpuJobs(batch, queues, [latest.name]) : [];
      } finally {
        batch.destroy();
      }
    }
    return {
      campaign: target.name,
      where: `aws s3://${bucket}, ${clients.stack.ledgerTable}`,
      run,
      ...counts,
      failures: recorded.slice(0, shown).map((f) => ({ at: f.at, where: f.execution.split(':').at(-1) ?? f.execution, error: f.error, cause: f.cause })),
      failuresTotal: recorded.length,
      failuresKind: 'failed execution steps recorded in the ledger',
      ...(gpuJobs ? { gpuJobs } : {}),
      ...(overrun ? { overrun } : {}),
      ...(rereads ? { rereads } : {}),
    };
  } finally {
    await clients.close();
  }
}
