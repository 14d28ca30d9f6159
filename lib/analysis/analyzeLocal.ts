/**
 * The analysis of a campaign on this machine (DESIGN.md "The flow of one campaign"): the battery's
 * SQL stage on DuckDB over the campaign's Parquet, its statistics, and its result files written
 * beside the data (`campaigns/<c>/results/`), with the simulated models' true parameters.
 */
import type { Battery, LoadedDesign } from '../battery/types.js';
import type { ReadoutHealth } from '../battery/readoutHealth.js';
import type { Campaign } from '../design/campaign.js';
import { campaignEntries } from '../design/campaign.js';
import type { PhaseGraph } from '../battery/phaseGraph.js';
import { DuckDb, tableGlob } from '../store/DuckDb.js';
import { KeptSubqueries } from '../store/keptSubqueries.js';
import { parquetSource } from '../query/sql.js';
import { storedSpend } from './storedSpend.js';
import { layout } from '../store/index.js';
import { LocalBlobStore } from '../store/LocalBlobStore.js';
import { storedPartitions } from './athena.js';
import { localSources } from './localSources.js';
import { checkRepliesCoverLedger } from './storedCoverage.js';
import { localOverrun } from './localOverrun.js';
import { simulationTruthFile } from './simulationTruth.js';

export interface LocalAnalysis {
  /** The battery's results (its own type). */
  readonly results: unknown;
  /** Its short table for the terminal. */
  readonly table: string;
  /** Names of the files written under `campaigns/<c>/results/`. */
  readonly files: readonly string[];
  /** Stored model/language partitions the campaign file no longer has: kept, not analysed. */
  readonly excluded: readonly string[];
  /** How much of each numeric readout could be read (a readout read for no row: exit 7). */
  readonly readouts: readonly ReadoutHealth[];
}

/**
 * The list of result files the last analysis wrote: beside results/, not in it (results/ holds the
 * analysis's files and nothing else), as the `_prompts` and `_readings` digests sit beside their tables.
 */
export function resultsManifestKey(campaign: string): string {
  return `${layout.campaignPrefix(campaign)}_results.json`;
}

/**
 * Removes the result files an earlier analysis wrote and this one did not (a campaign switched to
 * another battery and back kept the other battery's tables beside its own), then records this
 * one's. Only files a sondage analysis listed are removed: anything else put in `results/` stays.
 */
async function dropStaleResults(store: LocalBlobStore, campaign: string, written: readonly string[]): Promise<void> {
  const key = resultsManifestKey(campaign);
  const held = await store.get(key);
  let before: unknown = [];
  try {
    before = held === undefined ? [] : JSON.parse(Buffer.from(held).toString('utf8'));
  } catch {
    // A manifest that is not JSON lists nothing: nothing is removed on its word.
  }
  const now = new Set(written);
  for (const name of Array.isArray(before) ? before : []) {
    if (typeof name === 'string' && !now.has(name) && !name.includes('/')) await store.delete(layout.resultsKey(campaign, name));
  }
  await store.put(key, `${JSON.stringify([...written].sort(), null, 1)}\n`);
}

/** The campaign's stored replies, every phase that has any, as one source (undefined: none). */
async function storedReplies(db: DuckDb, glob: (phase: string) => string, phases: readonly string[]): Promise<string | undefined> {
  const globs: string[] = [];
  for (const phase of phases) if (await db.hasFiles(glob(phase))) globs.push(glob(phase));
  return globs.length === 0 ? undefined : parquetSource(globs);
}

/** Runs the battery's analysis on the campaign's data in `dataDir` and writes its result files there. */
export async function analyzeLocal(
  ctx: { readonly campaign: Campaign; readonly battery: Battery; readonly design: LoadedDesign; readonly graph: PhaseGraph },
  dataDir: string,
  store = new LocalBlobStore(dataDir),
): Promise<LocalAnalysis> {
  const { campaign, battery } = ctx;
  const db = await DuckDb.open();
  try {
    const phases = ctx.graph.phases.map((p) => p.name);
    const current = { models: campaign.models.map((m) => m.id), languages: ctx.design.languages };
    const sources = await localSources(db, (phase, table) => tableGlob(dataDir, campaign.name, phase, table), phases, battery.prompts, current);
    await checkRepliesCoverLedger(db, dataDir, campaign.name, phases, (phase) => tableGlob(dataDir, campaign.name, phase, 'replies'));
    const stored = await storedPartitions(store, campaign.name, phases);
    const excluded = stored.filter((p) => !current.models.includes(p.model) || !current.languages.includes(p.language)).map((p) => `${p.model}/${p.language}`);
    const kept = new KeptSubqueries(db);
    const results = await battery.analysis.run(kept, sources, { campaign, design: campaign.design });
    await kept.drop();
    const simulated = campaignEntries(campaign).some((m) => m.provider === 'simulated');
    const files: string[] = [];
    const out = async (name: string, content: string): Promise<void> => {
      await store.put(layout.resultsKey(campaign.name, name), content);
      files.push(name);
    };
    const overrun = await localOverrun(dataDir, campaign.name);
    const spend = {
      spentUsd: await storedSpend(db, await storedReplies(db, (phase) => tableGlob(dataDir, campaign.name, phase, 'replies'), phases)),
      capUsd: campaign.budget_usd,
      ...(overrun ? { overrun } : {}),
    };
    for (const [name, content] of battery.analysis.files(results, { campaign: campaign.name, simulated, source: `<data folder>/${layout.campaignPrefix(campaign.name)}`, spend })) await out(name, content);
    const truth = simulationTruthFile(ctx);
    if (truth !== undefined) await out(...truth);
    await dropStaleResults(store, campaign.name, files);
    return { results, table: battery.analysis.console(results), files, excluded, readouts: battery.analysis.readouts?.(results) ?? [] };
  } finally {
    db.close();
  }
}
