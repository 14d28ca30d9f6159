/**
 * Deleting one campaign's data (`sondage purge`), the same way on both
 * backends: each place the campaign lives (its data folder or S3 prefix, its ledger rows) is a
 * PurgeSource that first says what it holds and then deletes exactly that; a CampaignGuard refuses
 * while the campaign runs. Locally the sources are LocalCampaignFiles and EmbeddedLedgerRows under
 * the run lock (runLockGuard); on AWS S3CampaignObjects and DynamoCampaignItems, guarded by the
 * state machine's executions (the CLI's).
 */
import { SondageError } from '../errors.js';
import { assertSafeSegment } from './layout.js';
import { UnknownCampaignError } from './errors.js';

/** One kind of thing a source holds: `generate/` files, item states, reservations… */
export interface PurgeCount {
  readonly what: string;
  readonly count: number;
  /** Bytes, where the thing has a size (files, objects). */
  readonly bytes?: number;
}

/** What a source holds of one campaign, and (for the source only) exactly what its purge deletes. */
export interface PurgeSurvey<Plan = unknown> {
  /** The place, as a user can find it: `/data/campaigns/demo/`, `s3://bucket/campaigns/demo/`, `DynamoDB table sondage-ledger`. */
  readonly where: string;
  readonly counts: readonly PurgeCount[];
  /** What `purge` deletes (keys, versions): the survey, not a second listing. */
  readonly plan: Plan;
}

/** One place a campaign's data lives. */
export interface PurgeSource<Plan = unknown> {
  survey(campaign: string): Promise<PurgeSurvey<Plan>>;
  /** Deletes what `survey` found; returns what it deleted. Throws when some of it could not be deleted (what was, is gone). */
  purge(campaign: string, survey: PurgeSurvey<Plan>, onProgress?: (deleted: number) => void): Promise<readonly PurgeCount[]>;
}

/** Refuses to purge a running campaign. */
export interface CampaignGuard {
  /** Before anything is looked at: throws CampaignBusyError while the campaign runs (locally it takes the run lock and keeps it). */
  enter(): Promise<void>;
  /** Right before deleting, after the confirmation (which may have taken a while): throws CampaignBusyError if it runs now. */
  check(): Promise<void>;
  /** Always called last; `purged` tells whether the sources were purged. */
  leave(purged: boolean): Promise<void>;
}

export interface PurgeOptions {
  readonly campaign: string;
  readonly sources: readonly PurgeSource[];
  readonly guard: CampaignGuard;
  /** Shown the surveys (none of them empty); resolves true to delete. */
  confirm(surveys: readonly PurgeSurvey[]): Promise<boolean>;
  /** Progress of the source being purged: its survey, and how much of it is deleted so far. */
  onProgress?(survey: PurgeSurvey, deleted: number): void;
}

export interface PurgeOutcome {
  readonly surveys: readonly PurgeSurvey[];
  /** Undefined when the confirmation was refused; else what each source deleted, in order. */
  readonly deleted?: readonly (readonly PurgeCount[])[];
}

/** Sum of the counts of a survey. */
export function surveyTotal(survey: Pick<PurgeSurvey, 'counts'>): number {
  return survey.counts.reduce((n, c) => n + c.count, 0);
}

/**
 * Purges one campaign: guard, survey every source, refuse an unknown campaign, ask, check the
 * guard again, delete source by source. Nothing is deleted unless `confirm` resolves true.
 *
 * @throws UnknownCampaignError when no source holds anything of the campaign (nothing was deleted).
 * @throws CampaignBusyError from the guard (nothing was deleted).
 * @example
 * const outcome = await purgeCampaign({ campaign: 'demo', sources, guard, confirm: async () => true });
 */
export async function purgeCampaign(options: PurgeOptions): Promise<PurgeOutcome> {
  const { campaign, sources, guard } = options;
  assertSafeSegment('campaign name', campaign);
  await guard.enter();
  let purged = false;
  try {
    const all: PurgeSurvey[] = [];
    for (const source of sources) all.push(await source.survey(campaign));
    const found = all.filter((s) => surveyTotal(s) > 0);
    if (found.length === 0) {
      throw new UnknownCampaignError(
        `campaign ${JSON.stringify(campaign)} has nothing to purge: nothing in ${all.map((s) => s.where).join(', nor in ')}; ` +
          'check the name (and --data-dir, or --aws for the deployed stack)',
      );
    }
    if (!(await options.confirm(found))) return { surveys: found };
    await guard.check();
    const deleted: (readonly PurgeCount[])[] = [];
    for (const [i, source] of sources.entries()) {
      const survey = all[i]!;
      if (surveyTotal(survey) === 0) continue;
      try {
        deleted.push(await source.purge(campaign, survey, (n) => options.onProgress?.(survey, n)));
      } catch (err) {
        const done = found.indexOf(survey);
        throw new SondageError(
          `purge of ${JSON.stringify(campaign)} stopped in ${survey.where}: ${(err as Error).message}` +
            `${done > 0 ? ` (${found.slice(0, done).map((s) => s.where).join(', ')} already purged)` : ''}; run \`sondage purge\` again to delete the rest`,
          { cause: err },
        );
      }
    }
    purged = true;
    return { surveys: found, deleted };
  } finally {
    await guard.leave(purged);
  }
}

/**
 * `1.2 MB`, `512 B`: decimal units, as S3 and file managers count.
 * @example formatBytes(1_234_567) // '1.2 MB'
 */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ['kB', 'MB', 'GB', 'TB', 'PB'];
  let value = bytes;
  let unit = -1;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/** The lines that show surveys (or what was deleted) to a user: per place, one line per kind of thing. */
export function formatCounts(where: string, counts: readonly PurgeCount[]): string[] {
  const shown = counts.filter((c) => c.count > 0);
  const width = Math.max(0, ...shown.map((c) => c.what.length));
  return [
    `  ${where}`,
    ...shown.map((c) => `    ${c.what.padEnd(width)}  ${c.count.toLocaleString('en-US')}${c.bytes !== undefined ? `  (${formatBytes(c.bytes)})` : ''}`),
  ];
}
