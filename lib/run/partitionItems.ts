/**
 * The items of one partition (model under test × language) for every phase of a battery, expanded
 * on demand and kept: a dependent phase reads the items of the phases it builds on
 * (`PartitionContext.items`), which are expanded again, never read back from storage.
 */
import type { Answerer, PartitionContext, PhaseSpec, Upstream } from '../battery/types.js';
import type { LanguageCode, PromptItem } from '../core/types.js';
import type { ModelEntry } from '../design/campaign.js';
import { answererOf, settingsIn } from './context.js';
import type { RunContext } from './context.js';
import { NO_UPSTREAM } from './upstreamNeeds.js';

/** `[start, end)` of one phase's items: a shard of a root phase, or of the source items of a dependent one. */
export interface ItemSlice {
  readonly phase: string;
  readonly start: number;
  readonly end: number;
}

/** What one partition's items are expanded from: `new PartitionItems({ ctx, model, language })`. */
export interface PartitionItemsOptions {
  readonly ctx: Pick<RunContext, 'campaign' | 'graph'>;
  /** The model under test: the partition's subject. */
  readonly model: ModelEntry;
  readonly language: LanguageCode;
  /** The stored outputs a dependent phase consumes (lib/run/upstream.ts); none by default, which is all a root phase needs. */
  readonly upstream?: Upstream | undefined;
  /** Only this slice of one phase's items (a shard); the whole partition by default. */
  readonly slice?: ItemSlice | undefined;
  /** Items for the plan only (PartitionContext.planning). */
  readonly planning?: boolean | undefined;
  /** Called when a phase's expand or estimate reads the items of phase `name` (PartitionContext.items). */
  readonly onRead?: ((name: string) => void) | undefined;
}

export class PartitionItems {
  private readonly cache = new Map<string, readonly PromptItem[]>();
  private readonly ctx: Pick<RunContext, 'campaign' | 'graph'>;
  readonly subject: ModelEntry;
  readonly language: LanguageCode;
  private readonly upstream: Upstream;
  private readonly slice: ItemSlice | undefined;
  private readonly planning: boolean;
  private readonly onRead: ((name: string) => void) | undefined;

  constructor(opts: PartitionItemsOptions) {
    this.ctx = opts.ctx;
    this.subject = opts.model;
    this.language = opts.language;
    this.upstream = opts.upstream ?? NO_UPSTREAM;
    this.slice = opts.slice;
    this.planning = opts.planning ?? false;
    this.onRead = opts.onRead;
  }

  /** The items of a phase in this partition, in expansion order (the slice's phase: only its slice). */
  items(name: string): readonly PromptItem[] {
    let items = this.cache.get(name);
    if (items === undefined) {
      items = [...this.expand(name)];
      if (this.slice?.phase === name) items = items.slice(this.slice.start, this.slice.end);
      this.cache.set(name, items);
    }
    return items;
  }

  /**
   * The items of a phase as they are expanded, not kept (those `items` kept, where it did): for a
   * single pass, such as the plan's pricing of a phase no estimate reads. Kept whole, a
   * partition's items (X-Value's step 1 at 100,000 pairs: ~7,100 rendered prompts, ~20 MB) made
   * most of what came after them survive V8's young-generation collections: the plan's heap climbed
   * to ~830 MB between full collections, and it spent over half its time collecting.
   */
  each(name: string): Iterable<PromptItem> {
    return this.cache.has(name) || this.slice?.phase === name ? this.items(name) : this.expand(name);
  }

  /** The phase's expansion in this partition, lazily: a root phase from nothing, a dependent one from the upstream. */
  private expand(name: string): Iterable<PromptItem> {
    const phase = this.ctx.graph.get(name);
    return phase.expand(this.context(phase), phase.after.length > 0 ? this.upstream : NO_UPSTREAM);
  }

  /**
   * The items of dependent phase `name` built from `[start, end)` of its source phase's items
   * (its first `after`) only, not kept: a slice of the partition (lib/run/slicedItems.ts). The
   * other phases it reads are this partition's, expanded once.
   */
  itemsFromSources(name: string, start: number, end: number): readonly PromptItem[] {
    return this.itemsBuiltFrom(name, this.items(this.sourceOf(name)).slice(start, end));
  }

  /**
   * The items of dependent phase `name` built from `sources`, a run of its source phase's items in
   * expansion order (as `each` gives them), not kept; itemsFromSources, for a caller that holds
   * the source items of one slice only.
   */
  itemsBuiltFrom(name: string, sources: readonly PromptItem[]): readonly PromptItem[] {
    const source = this.sourceOf(name);
    const part = new PartitionItems({ ctx: this.ctx, model: this.subject, language: this.language, upstream: this.upstream, planning: this.planning });
    for (const p of this.ctx.graph.upstreamOf(name)) part.cache.set(p.name, p.name === source ? sources : this.items(p.name));
    return part.items(name);
  }

  /** The phase dependent phase `name` is cut by: its first `after`. */
  sourceOf(name: string): string {
    const source = this.ctx.graph.get(name).after[0]?.phase;
    if (source === undefined) throw new Error(`PartitionItems: phase ${name} builds on no phase, so it has no source items`);
    return source;
  }

  /** Who answers a phase here, with the settings of that phase. */
  answerer(phase: PhaseSpec): Answerer & { readonly entry: ModelEntry } {
    const entry = answererOf(this.ctx, phase, this.subject);
    return { id: entry.id, settings: settingsIn(this.ctx, phase, entry), entry };
  }

  /** What the battery's expand and estimate functions see of this partition for a phase. */
  context(phase: PhaseSpec): PartitionContext {
    const answerer = this.answerer(phase);
    const subject = phase.answeredBy === 'subject' ? answerer : { id: this.subject.id, settings: settingsIn(this.ctx, phase, this.subject) };
    return {
      campaign: this.ctx.campaign,
      phase: phase.name,
      subject: { id: subject.id, settings: subject.settings },
      answerer: { id: answerer.id, settings: answerer.settings },
      language: this.language,
      items: (name) => {
        this.onRead?.(name);
        return this.items(name);
      },
      each: (name) => this.each(name),
      ...(this.planning ? { planning: true } : {}),
    };
  }
}
