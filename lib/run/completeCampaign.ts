/**
 * A campaign whose every item has its reply, run again: said at once, and straight to the analysis,
 * rather than planning every partition again to find nothing to ask (bars of 0/N, seconds lost).
 * The shortcut is taken only when the design is exactly the one that completed (its fingerprint:
 * the campaign, the loaded design data and the plan) and the ledger still shows every item of
 * every phase done, none pending or failed; anything else takes the ordinary path.
 */
import { createHash } from 'node:crypto';
import type { Ledger } from '../store/types.js';
import { layout } from '../store/index.js';
import type { LocalBlobStore } from '../store/LocalBlobStore.js';
import type { RunContext } from './context.js';
import type { Plan } from './planCampaign.js';

/** What the last complete run recorded: the design it completed and each phase's done items. */
interface CompleteRecord {
  readonly fingerprint: string;
  /** designDigest of that design: what a run can compare before it plans (absent from records written before it existed). */
  readonly design?: string;
  readonly done: Readonly<Record<string, number>>;
}

const recordKey = (campaign: string): string => `${layout.campaignPrefix(campaign)}_complete.json`;

/**
 * A digest of everything the items are built from: the campaign, its loaded design, the plan, and
 * the bytes of the design's data files (`data`: lib/run/designDataDigest.ts), which the loaded
 * design keeps out of sight of JSON.
 */
export function designFingerprint(ctx: Pick<RunContext, 'campaign' | 'design'>, plan: Plan, data: string): string {
  return digestOf([ctx.campaign, ctx.design, plan], data);
}

/**
 * A digest of the design without its plan: the campaign, its loaded design and the bytes of its
 * data files. A run has it before it plans (designFingerprint needs the plan).
 */
export function designDigest(ctx: Pick<RunContext, 'campaign' | 'design'>, data: string): string {
  return digestOf([ctx.campaign, ctx.design], data);
}

/** SHA-256 of each part's JSON, each followed by a NUL, then the data files' digest. */
function digestOf(parts: readonly unknown[], data: string): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(designJson(part)).update('\0');
  return hash.update(data).digest('hex');
}

const replacer = (_key: string, value: unknown): unknown =>
  value instanceof Map ? [...value] : value instanceof Set ? [...value] : typeof value === 'bigint' ? String(value) : value;

/** A loaded design (or campaign, or plan) as JSON for a digest: Maps and Sets as arrays, bigints as strings. */
export function designJson(value: unknown): string {
  return JSON.stringify(value, replacer) ?? '';
}

/** Done items per phase when every item of every phase is done (none pending, none failed); else undefined. */
async function allDone(ledger: Ledger, campaign: string, phases: readonly string[]): Promise<Record<string, number> | undefined> {
  const done: Record<string, number> = {};
  for (const [phase, c] of await ledger.phaseCounts(campaign, phases)) {
    if (c.pending > 0 || c.failed > 0) return undefined;
    done[phase] = c.done;
  }
  return done;
}

/** Records a run that left every item done, so that the next run of the same design can say so. */
export async function recordIfComplete(
  store: LocalBlobStore,
  ledger: Ledger,
  campaign: string,
  phases: readonly string[],
  design: { readonly fingerprint: string; readonly digest: string },
): Promise<void> {
  const done = await allDone(ledger, campaign, phases);
  if (done === undefined) {
    await store.delete(recordKey(campaign));
    return;
  }
  const record: CompleteRecord = { fingerprint: design.fingerprint, design: design.digest, done };
  await store.put(recordKey(campaign), `${JSON.stringify(record, null, 1)}\n`);
}

/**
 * Whether the campaign's last complete run ran this very design (`digest`: designDigest), by its
 * record alone, before anything is planned. A hint, not the check (completeReplies decides, once
 * the plan is made): the run boots no partition threads while it plans a campaign that will most
 * likely go straight to its analysis. Read before the run holds its lock; completeReplies reads
 * the record again under it.
 */
export async function completedWithDesign(store: LocalBlobStore, campaign: string, digest: string): Promise<boolean> {
  const held = await store.get(recordKey(campaign));
  if (held === undefined) return false;
  try {
    return (JSON.parse(Buffer.from(held).toString('utf8')) as CompleteRecord).design === digest;
  } catch {
    return false;
  }
}

/** The number of replies of a complete campaign whose design has not changed since; undefined otherwise. */
export async function completeReplies(store: LocalBlobStore, ledger: Ledger, campaign: string, phases: readonly string[], fingerprint: string): Promise<number | undefined> {
  const held = await store.get(recordKey(campaign));
  if (held === undefined) return undefined;
  let record: CompleteRecord;
  try {
    record = JSON.parse(Buffer.from(held).toString('utf8')) as CompleteRecord;
  } catch {
    return undefined;
  }
  if (record.fingerprint !== fingerprint) return undefined;
  const done = await allDone(ledger, campaign, phases);
  if (done === undefined || phases.some((p) => done[p] !== record.done?.[p])) return undefined;
  return phases.reduce((s, p) => s + (done[p] ?? 0), 0);
}
