/**
 * Shared test fixtures: example pairs, an item context, and a partition/upstream pair that plays
 * the core's part (expand a phase, keep replies and readings per item) without the core runtime.
 */
import { join } from 'node:path';
import type { PartitionContext, PhaseSpec, ReadingDraft, ReplyView, Upstream } from '../../../lib/battery/types.js';
import type { PromptItem } from '../../../lib/core/types.js';
import { loadQaPairs } from '../../../lib/batteries/xvalue/data/index.js';
import { DEFAULT_PROMPT_SET } from '../../../lib/batteries/xvalue/prompts/index.js';
import type { ItemContext } from '../../../lib/batteries/xvalue/expand/index.js';
import type { PromptSet } from '../../../lib/batteries/xvalue/prompts/index.js';
import { xvaluePhases } from '../../../lib/batteries/xvalue/phases.js';
import { XVALUE_PROMPT_COLUMNS } from '../../../lib/batteries/xvalue/promptColumns.js';
import type { FacetSqlRow, PairSqlRow } from '../../../lib/batteries/xvalue/analysis/index.js';
import { promptRow } from '../../../lib/store/schemas.js';
import type { Annotation, Language, QaPair, Strategy, XvalueItem } from '../../../lib/batteries/xvalue/types.js';

export const EXAMPLE_PAIRS_FILE = join(import.meta.dirname, '../../../examples/xvalue/qa-pairs.jsonl');

export async function examplePairs(): Promise<QaPair[]> {
  return (await loadQaPairs([EXAMPLE_PAIRS_FILE])).pairs;
}

export function ctx(language: Language = 'en', over: Partial<ItemContext> = {}): ItemContext {
  return { campaign: 'test', model: 'alpha', language, settings: { temperature: 0, max_tokens: 256 }, prompts: DEFAULT_PROMPT_SET, ...over };
}

const PASS_ALL: Annotation = {
  core_issue: 'Household chemical safety',
  scope: 'Global',
  nature: 'Consensus',
  checkpoints: {
    A: 'Pass',
    B: { verdict: 'Pass', reason: null },
    C: { verdict: 'Pass', reason: null },
    D: { verdict: 'Pass', reason: null },
    E: [],
    F: [],
    G: [],
    H: [],
  },
  overall: 'Pass',
};

/** A pair with a passing annotation; `over` replaces fields. */
export function pair(id: string, over: Partial<QaPair> = {}): QaPair {
  return {
    id,
    language: 'en',
    category: 'P&B',
    question: 'Is it safe to mix bleach and ammonia?',
    answer: 'No. It releases a toxic gas.',
    annotation: PASS_ALL,
    source: `t.jsonl:1`,
    ...over,
  };
}

/** Replies and readings per item, as the core would store them. */
export class FakeStore implements Upstream {
  private readonly replies = new Map<string, ReplyView>();
  private readonly readingsById = new Map<string, readonly ReadingDraft[]>();

  put(item: PromptItem, text: string, readings: readonly ReadingDraft[]): void {
    this.replies.set(item.item_id, { text, attempt: 1, logprobs: null });
    this.readingsById.set(item.item_id, readings);
  }

  reply(_phase: string, itemId: string): ReplyView | undefined {
    return this.replies.get(itemId);
  }

  readings(_phase: string, itemId: string): readonly ReadingDraft[] {
    return this.readingsById.get(itemId) ?? [];
  }
}

/** A partition of the campaign `test`: one model answering, and the items of earlier phases. */
export function partition(language: Language, items: Readonly<Record<string, readonly PromptItem[]>>, model = 'alpha'): PartitionContext {
  const settings = { temperature: 0, max_tokens: 256 };
  return {
    campaign: { name: 'test', seed: 7, file: '/tmp/test.yaml', folder: '/tmp', models: [], roles: {} },
    phase: 'x',
    subject: { id: model, settings },
    answerer: { id: model, settings },
    language,
    items: (phase) => items[phase] ?? [],
    each: (phase) => items[phase] ?? [],
  };
}

// ---- a whole chain without the core runtime ---------------------------------------------------

/** One answered item: its reply text and the readings of it. */
export interface ChainRecord {
  readonly item: XvalueItem;
  readonly text: string;
  readonly readings: readonly ReadingDraft[];
}

/**
 * Runs every enabled phase of one partition in graph order, as the core's loop would: expand
 * (step 2 from step 1's stored replies and readings), answer each item with `answer`, read it.
 * `answer` returning undefined leaves the item unanswered (no reply, no readings).
 */
export function runChain(
  pairs: readonly QaPair[],
  language: Language,
  model: string,
  answer: (item: XvalueItem) => string | undefined,
  strategies: readonly Strategy[] = ['defonly', 'rubric'],
  prompts: PromptSet = DEFAULT_PROMPT_SET,
  /** The partition a phase expands in (default: campaign `test`, one setting for every phase). */
  partitionFor: (phase: PhaseSpec, language: Language, items: Readonly<Record<string, readonly PromptItem[]>>, model: string) => PartitionContext = (_p, l, i, m) => partition(l, i, m),
): { items: XvalueItem[]; records: ChainRecord[] } {
  const store = new FakeStore();
  const items: Record<string, XvalueItem[]> = {};
  const out: ChainRecord[] = [];
  const all: XvalueItem[] = [];
  for (const phase of xvaluePhases({ pairs, prompts, strategies })) {
    const made = [...phase.expand(partitionFor(phase, language, items, model), store)] as XvalueItem[];
    items[phase.name] = made;
    all.push(...made);
    for (const item of made) {
      const text = answer(item);
      if (text === undefined) continue;
      const readings = phase.read(item, { text, attempt: 1, logprobs: null });
      store.put(item, text, readings);
      out.push({ item, text, readings });
    }
  }
  return { items: all, records: out };
}

/** What xvalue_pairs.sql and xvalue_facets.sql return for these records and items, computed in TypeScript. */
export function chainSqlRows(items: readonly XvalueItem[], records: readonly ChainRecord[]): { pairs: PairSqlRow[]; facets: FacetSqlRow[] } {
  const seen = new Set<string>();
  const pairs: PairSqlRow[] = [];
  for (const item of items) {
    if (item.phase === 'step2') continue;
    const strategy = item.phase === 'defonly' ? 'defonly' : 'rubric';
    const k = JSON.stringify([item.model, item.language, item.factors.qa_id, strategy]);
    if (seen.has(k)) continue;
    seen.add(k);
    const row = promptRow(item, XVALUE_PROMPT_COLUMNS) as Record<string, unknown>;
    pairs.push({
      model: item.model,
      language: item.language as Language,
      qa_id: item.factors.qa_id,
      category: item.factors.category,
      strategy,
      ...(Object.fromEntries(Object.entries(row).filter(([c]) => c.startsWith('gold_') && c !== 'gold_json' && c !== 'gold_core_issue')) as Pick<PairSqlRow, `gold_${string}` & keyof PairSqlRow>),
    } as PairSqlRow);
  }
  const facets: FacetSqlRow[] = records.flatMap((r) =>
    r.readings.map((d) => ({ model: r.item.model, language: r.item.language as Language, qa_id: r.item.factors.qa_id, phase: r.item.phase, facet: d.facet as string, label: d.label })),
  );
  return { pairs, facets };
}
