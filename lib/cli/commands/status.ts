import { readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Campaign } from '../../design/campaign.js';
import { contextFor } from '../../run/context.js';
import { loadCampaign } from '../../design/loadCampaign.js';
import { SondageError } from '../../errors.js';
import { planCampaign } from '../../run/planCampaign.js';
import type { Plan } from '../../run/planCampaign.js';
import { readParquet, tableGlob } from '../../store/DuckDb.js';
import { isProcessAlive } from '../../store/lock.js';
import { assertSafeSegment, planKey, runLockKey } from '../../store/layout.js';
import type { BlobStore, BudgetState, Ledger } from '../../store/types.js';
import type { CliArgs } from '../args.js';
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
  readonly pending: number;
  readonly done: number;
  readonly failed: number;
  /** Items the plan expects; undefined when no plan is at hand. */
  readonly planned?: number;
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
  /** What the failures are: failed items' last errors locally, failed execution steps on AWS. */
  readonly failuresKind: string;
}

const pct = (part: number, whole: number): string => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : '–');
const usd = (n: number): string => `$${n.toFixed(4)}`;
const oneLine = (s: string, max = 200): string => {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** The status as text: run line, a per-phase table, spend, open batches, recent failures. */
export function formatStatus(s: CampaignStatus): string {
  const lines = [`campaign ${s.campaign} (${s.where})`, `run: ${s.run}`, ''];
  const header = ['phase', 'done', 'failed', 'pending', 'planned', 'progress'];
  const rows = s.phases.map((p) => {
    // Without a plan, progress is over the items the ledger knows so far.
    const whole = p.planned ?? p.done + p.failed + p.pending;
    return [p.phase, String(p.done), String(p.failed), String(p.pending), p.planned === undefined ? '?' : String(p.planned), pct(p.done, whole)];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const r of [header, ...rows]) lines.push(r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd());
  lines.push('');
  lines.push(
    s.budget
      ? `spend: ${usd(s.budget.spent_usd)} of ${usd(s.budget.cap_usd)} cap (${pct(s.budget.spent_usd, s.budget.cap_usd)}), ${usd(s.budget.reserved_usd)} reserved for calls in flight`
      : 'spend: nothing recorded yet (no budget in the ledger: the campaign has not started)',
  );
  lines.push(`open provider batches: ${s.openBatches.length}`);
  for (const b of s.openBatches) lines.push(`  ${b.phase} ${b.model}/${b.language}: ${b.batchId}${b.cancelledAt ? ` (cancel requested ${b.cancelledAt})` : ''}`);
  lines.push(
    s.failuresTotal === 0
      ? `failures: none (${s.failuresKind})`
      : `failures: ${s.failuresTotal} ${s.failuresKind}${s.failures.length < s.failuresTotal ? `, last ${s.failures.length}` : ''}:`,
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

/** Counts per phase against the plan, budget and open batches: the part of the status both ledgers answer alike. */
export async function ledgerStatus(
  ledger: Ledger,
  name: string,
  plan: Plan | undefined,
): Promise<Pick<CampaignStatus, 'phases' | 'budget' | 'openBatches'>> {
  const planned = new Map<string, number>();
  for (const l of plan?.lines ?? []) planned.set(l.phase, (planned.get(l.phase) ?? 0) + l.items);
  // Phases the plan lists, in graph order (a plan of an older version lists its lines' phases).
  const phaseNames = plan?.phases ? [...plan.phases] : [...planned.keys()];
  const phases: PhaseStatus[] = [];
  for (const phase of phaseNames) {
    const c = await ledger.counts(name, phase);
    const p = planned.get(phase);
    phases.push({ phase, ...c, ...(p === undefined ? {} : { planned: p }) });
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
      `SELECT item_id, model, language, error_class, error_message, CAST(created_at AS VARCHAR) AS created_at FROM parts
       WHERE status = 'error' QUALIFY row_number() OVER (PARTITION BY item_id ORDER BY created_at DESC, attempt DESC) = 1`,
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
  if (typeof raw !== 'string' || !Number.isInteger(n) || n < 0) throw new SondageError(`sondage status: --failures ${String(raw)} is not a whole number ≥ 0`);
  return n;
}

/**
 * `sondage status <campaign> [--aws]` (issue 4): progress per phase against the plan, spend against
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
  const { EmbeddedLedger, LocalBlobStore } = await import('../../store/index.js');
  const ledgerFile = path.join(dataDir, 'ledger.sqlite');
  // Opening the ledger would create it; a campaign that never ran here is reported, not created.
  if (!(await stat(ledgerFile).then(() => true, () => false))) {
    throw new SondageError(`sondage status: ${target.name} has not run in ${path.resolve(dataDir)} (no ledger.sqlite there); start it with \`sondage run\`, or give --data-dir`);
  }
  await assertCampaignIn('status', dataDir, target.name, target.campaign ? args.file : undefined); // bad input (issue 14 item 6): another campaign's data
  const ledger = new EmbeddedLedger(dataDir);
  try {
    const plan = await campaignPlan(new LocalBlobStore(dataDir), target);
    const counts = await ledgerStatus(ledger, target.name, plan);
    const failures = await localFailures(ledger, dataDir, target.name, counts.phases.map((p) => p.phase), shown);
    return {
      campaign: target.name,
      where: `local ${path.resolve(dataDir)}`,
      run: await localRun(dataDir, target.name),
      ...counts,
      failures: failures.last,
      failuresTotal: failures.total,
      failuresKind: 'failed items (last error of each)',
    };
  } finally {
    await ledger.close();
  }
}

/** `startDate`/`stopDate` as the SDK gives them. */
const iso = (d: Date | undefined): string => (d ? d.toISOString().replace(/\.\d{3}Z$/, 'Z') : '?');

async function awsStatus(args: CliArgs, target: CampaignTarget, shown: number): Promise<CampaignStatus> {
  const { awsClients, campaignExecutions, resolveStack } = await import('../aws.js');
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
    return {
      campaign: target.name,
      where: `aws s3://${bucket}, ${clients.stack.ledgerTable}`,
      run,
      ...counts,
      failures: recorded.slice(0, shown).map((f) => ({ at: f.at, where: f.execution.split(':').at(-1) ?? f.execution, error: f.error, cause: f.cause })),
      failuresTotal: recorded.length,
      failuresKind: 'failed execution steps recorded in the ledger',
    };
  } finally {
    await clients.close();
  }
}
