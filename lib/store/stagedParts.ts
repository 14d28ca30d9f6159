/**
 * Parts staged outside the tables' locations until the ledger has committed them.
 *
 * A part's upload and its ledger commit cannot be one step: a run killed between them left the part
 * in the table's location, where Athena and DuckDB counted replies the ledger had not (until the
 * next run adopted it). So a run writes its reply and reading parts under the phase's `_staged/`
 * folder, commits the part, and only then moves them to their place in the table (publish). The
 * staged key is the part's final key with the committing phase's `_staged/` folder in front:
 *
 *   campaigns/<c>/<phase>/_staged/<phase or readings folder>/<table>/model=<m>/language=<l>/<part>
 *
 * `_staged` is neither a table nor a part folder, so no table location (Athena's
 * `campaigns/<c>/<phase>/<table>/…`, DuckDB's `<phase>/<table>/**`) covers it, and the committing
 * phase in the path says which ledger entry decides (a judge's readings go to the judged phase's
 * folder, its commit is the judge's). A move is idempotent (the final name is the committed part
 * key, so a part appears once however often it is moved), and `publishCommitted` finishes the moves
 * a killed run left: committed parts are moved, uncommitted ones stay staged for the run that adopts them
 * (lib/run/restoreOrphanParts.ts).
 */
import { campaignPrefix, parsePartKey, partKey, phasePrefix } from './layout.js';
import type { ParsedPartKey } from './layout.js';
import type { BlobStore, Ledger } from './types.js';

const STAGED = '_staged/';

/** `campaigns/<c>/<phase>/_staged/`: every part the phase's commits stage. */
export function stagingPrefix(campaign: string, phase: string): string {
  return `${phasePrefix(campaign, phase)}${STAGED}`;
}

/**
 * Where a part whose final key is `finalKey` waits for the commit of phase `commitPhase`.
 * @example stagedKey('generate', 'campaigns/demo/generate/replies/model=a/language=en/part-1.parquet')
 *   // 'campaigns/demo/generate/_staged/generate/replies/model=a/language=en/part-1.parquet'
 */
export function stagedKey(commitPhase: string, finalKey: string): string {
  const parsed = parsePartKey(finalKey);
  if (parsed === undefined) throw new TypeError(`stagedKey: ${JSON.stringify(finalKey)} is not a part key`);
  const campaign = campaignPrefix(parsed.campaign);
  return `${stagingPrefix(parsed.campaign, commitPhase)}${finalKey.slice(campaign.length)}`;
}

/** Where the parts under `finalPrefix` (a table's or a partition's prefix) wait for the commits of `commitPhase`. */
export function stagedPrefix(campaign: string, commitPhase: string, finalPrefix: string): string {
  const campaignKey = campaignPrefix(campaign);
  if (!finalPrefix.startsWith(campaignKey)) throw new TypeError(`stagedPrefix: ${JSON.stringify(finalPrefix)} is not under ${campaignKey}`);
  return `${stagingPrefix(campaign, commitPhase)}${finalPrefix.slice(campaignKey.length)}`;
}

/** A staged key read back: the committing phase, the part's final key and its fields; undefined when `key` is not one. */
export interface StagedPart {
  readonly commitPhase: string;
  readonly finalKey: string;
  readonly part: ParsedPartKey;
  /** The key of the replies part whose commit publishes this one. */
  readonly commitKey: string;
}

export function parseStagedKey(key: string): StagedPart | undefined {
  const m = /^campaigns\/([^/]+)\/([^/]+)\/_staged\/(.+)$/.exec(key);
  if (!m) return undefined;
  const [, campaign, commitPhase, rest] = m as unknown as [string, string, string, string];
  const finalKey = `campaigns/${campaign}/${rest}`;
  const part = parsePartKey(finalKey);
  if (part === undefined) return undefined;
  return { commitPhase, finalKey, part, commitKey: partKey(campaign, commitPhase, 'replies', part.model, part.language, part.partName) };
}

/**
 * Moves `from` to `to` (a copy inside the store, then the delete of `from`); false when `from` is
 * not there (moved already). Repeating it is harmless: the copy of the same bytes, then a delete.
 */
export async function moveObject(store: BlobStore, from: string, to: string): Promise<boolean> {
  if (store.move) return store.move(from, to);
  const body = await store.get(from);
  if (body === undefined) return false;
  await store.put(to, body);
  await store.delete(from);
  return true;
}

/**
 * Publishes the staged parts of `phases` whose commit the ledger holds (a run killed after its
 * commit, before its moves); leaves the others staged. Returns how many objects it moved. Asks
 * the ledger only for a phase with something staged.
 */
export async function publishCommitted(store: BlobStore, ledger: Pick<Ledger, 'committedParts'>, campaign: string, phases: readonly string[]): Promise<number> {
  let moved = 0;
  for (const phase of phases) {
    const staged = (await store.list(stagingPrefix(campaign, phase))).map((key) => ({ key, part: parseStagedKey(key) }));
    if (staged.length === 0) continue;
    const committed = await ledger.committedParts(campaign, phase);
    for (const { key, part } of staged) {
      if (part === undefined || !committed.has(part.commitKey)) continue;
      if (await moveObject(store, key, part.finalKey)) moved++;
    }
  }
  return moved;
}
