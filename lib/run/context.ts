/**
 * What a run, a plan or a worker knows of a campaign once it is loaded: the campaign file, its
 * battery, the battery's design with its data read, and the phase graph checked.
 */
import { checkPhaseGraph } from '../battery/phaseGraph.js';
import type { PhaseGraph } from '../battery/phaseGraph.js';
import type { Battery, LoadedDesign, LoadScope, PhaseSpec } from '../battery/types.js';
import { batteryNamed } from '../batteries/index.js';
import { loadExternalBattery } from '../batteries/external.js';
import type { Campaign, ModelEntry, RoleModelEntry } from '../design/campaign.js';
import { phaseSettings } from '../design/campaign.js';
import { loadCampaign } from '../design/loadCampaign.js';
import { CampaignFileError, formatIssues, SondageError } from '../errors.js';
import type { GenerationSettings } from '../core/types.js';
import { gpuPhasePrice } from '../gpu/gpuPrice.js';
import type { Price } from '../providers/types.js';
import { asksForLogprobs, logprobsUnsupported } from '../battery/providerCapabilities.js';

export interface RunContext {
  readonly campaign: Campaign;
  readonly battery: Battery;
  readonly design: LoadedDesign;
  readonly graph: PhaseGraph;
  /** Where the data goes (the campaign's data_dir unless overridden). */
  readonly dataDir: string;
  /**
   * Entries (by id) charged for instance time instead of per prompt: the model a GPU job serves on
   * AWS, whose attempt reserves and settles its instance time (lib/gpu/instanceTime.ts).
   */
  readonly instanceBilled?: ReadonlySet<string>;
}

/**
 * The battery's design for a parsed campaign: its data files read and checked, its phase graph
 * checked, and every role a phase needs present. Nothing is written. A partition thread passes
 * the languages it runs (`scope`, Battery.load).
 */
export async function contextFor(campaign: Campaign, dataDir: string = campaign.data_dir, scope?: LoadScope): Promise<RunContext> {
  // A partition thread or a later command meets a battery from the user's folder again here.
  const battery = batteryNamed(campaign.battery) ?? (campaign.battery_source ? await loadExternalBattery(campaign.battery_source) : undefined);
  if (!battery) throw new CampaignFileError(`${campaign.file}: battery: "${campaign.battery}" is not a known battery`);
  const design = await battery.load(campaign, campaign.design as never, scope);
  const graph = checkPhaseGraph(battery.name, design.phases, battery.roles, campaign.file);
  checkCatalog(battery, design.phases);
  const missing = design.phases.flatMap((p) =>
    typeof p.answeredBy === 'object' && !campaign.roles[p.answeredBy.role]
      ? [{ file: campaign.file, path: (battery.roles[p.answeredBy.role]?.at ?? [p.answeredBy.role]).join('.'), message: `is required: phase "${p.name}" of battery ${battery.name} is answered by the ${p.answeredBy.role}` }]
      : [],
  );
  if (missing.length > 0) throw new CampaignFileError(formatIssues(missing), missing);
  checkLogprobs(campaign, graph.phases);
  return { campaign, battery, design, graph, dataDir };
}

/**
 * Refuses a phase that is read from logprobs (its settings ask for them: P(True)'s verify) when
 * one of its answering models' providers cannot return any: every reply would be unreadable, and
 * paid for. Checked here, so that `sondage plan` refuses it before anything is spent.
 */
function checkLogprobs(campaign: Campaign, phases: readonly PhaseSpec[]): void {
  const issues = phases.flatMap((phase) =>
    phaseEntries({ campaign }, phase).flatMap((entry) => {
      const why = logprobsUnsupported(entry.provider);
      if (why === undefined || !asksForLogprobs(settingsIn({ campaign }, phase, entry))) return [];
      const i = campaign.models.indexOf(entry);
      const at = i >= 0 ? `models[${i}]` : ((entry as Partial<RoleModelEntry>).at ?? [entry.id]).join('.');
      return [{ file: campaign.file, path: `${at}.provider`, message: `phase "${phase.name}" is read from token logprobs, but ${why}; answer it with a model whose provider returns logprobs (openai, openai-compatible)` }];
    }),
  );
  if (issues.length > 0) throw new CampaignFileError(formatIssues(issues), issues);
}

/**
 * A loaded phase must be one the battery lists (phaseCatalog), answered by the same party: what
 * `sondage batteries` and the campaign checks say is then what runs. A mismatch is the battery's
 * own bug, named as such.
 */
function checkCatalog(battery: Battery, phases: readonly PhaseSpec[]): void {
  const problems: string[] = [];
  for (const p of phases) {
    const info = battery.phaseCatalog.find((c) => c.name === p.name);
    const who = (a: PhaseSpec['answeredBy']): string => (a === 'subject' ? 'subject' : a.role);
    if (!info) problems.push(`phase "${p.name}" is not in its phaseCatalog`);
    else if (who(info.answeredBy) !== who(p.answeredBy)) problems.push(`phase "${p.name}" is answered by ${who(p.answeredBy)}, its phaseCatalog says ${who(info.answeredBy)}`);
  }
  if (problems.length > 0) throw new SondageError(`battery ${battery.name} (a bug in the battery, not in the campaign file): ${problems.join('; ')}`);
}

/** Reads and validates the campaign file and the battery's data; nothing is written. */
export async function loadRunContext(file: string, dataDir?: string): Promise<RunContext> {
  const campaign = await loadCampaign(file);
  return contextFor(campaign, dataDir ?? campaign.data_dir);
}

/** The entry that answers a phase for a model under test: the model itself, or the phase's role. */
export function answererOf(ctx: Pick<RunContext, 'campaign'>, phase: PhaseSpec, subject: ModelEntry): ModelEntry {
  if (phase.answeredBy === 'subject') return subject;
  const entry = ctx.campaign.roles[phase.answeredBy.role];
  if (!entry) throw new CampaignFileError(`${ctx.campaign.file}: phase "${phase.name}" needs the ${phase.answeredBy.role}, which the campaign does not give`);
  return entry;
}

/** The settings an entry is sent in a phase (lib/design/campaign.ts `phaseSettings`). */
export function settingsIn(ctx: Pick<RunContext, 'campaign'>, phase: PhaseSpec, entry: ModelEntry): GenerationSettings {
  return phaseSettings(ctx.campaign, entry, phase.name, phase.settings);
}

/**
 * The price an entry is charged in a phase: its list price, or for a runs_on: gpu model the GPU
 * time of one prompt at the phase's throughput (lib/gpu/gpuPrice.ts), or nothing inside the GPU
 * job that serves it on AWS, where the attempt's instance time is charged instead. The plan, the local run and
 * both AWS workers all price through here.
 */
export function priceIn(ctx: Pick<RunContext, 'campaign' | 'instanceBilled'>, phase: PhaseSpec, entry: ModelEntry): Price {
  if (entry.runs_on !== 'gpu' || !entry.gpu) return entry.price;
  if (ctx.instanceBilled?.has(entry.id)) return { input_per_mtok: 0, output_per_mtok: 0, per_request_usd: 0 };
  return gpuPhasePrice(entry.gpu, phase.name, settingsIn(ctx, phase, entry).max_tokens).price;
}

/** The entries that answer a phase across the campaign: the models under test, or the one role model. */
export function phaseEntries(ctx: Pick<RunContext, 'campaign'>, phase: PhaseSpec): readonly ModelEntry[] {
  return phase.answeredBy === 'subject' ? ctx.campaign.models : [answererOf(ctx, phase, ctx.campaign.models[0]!)];
}

/**
 * Every entry that answers a phase of the campaign, once each, with the role it plays (`subject`
 * for the models under test) and where it sits in the campaign file (named in its errors).
 */
export function answeringEntries(ctx: Pick<RunContext, 'campaign' | 'graph'>): { entry: ModelEntry; role: string; path?: string }[] {
  const out = new Map<string, { entry: ModelEntry; role: string; path?: string }>();
  for (const model of ctx.campaign.models) out.set(model.id, { entry: model, role: 'subject' });
  for (const phase of ctx.graph.phases) {
    if (phase.answeredBy === 'subject') continue;
    const entry = ctx.campaign.roles[phase.answeredBy.role];
    if (entry && !out.has(entry.id)) out.set(entry.id, { entry, role: phase.answeredBy.role, path: entry.at.join('.') });
  }
  return [...out.values()];
}
