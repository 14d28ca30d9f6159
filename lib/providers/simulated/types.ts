/**
 * What a battery gives the simulated provider (DESIGN.md "Without network"): a model that answers
 * an item as a respondent with known parameters would. The provider around it adds what every
 * simulated model shares: latency and transient errors (CallEffects), the max_tokens bound and
 * token usage, and the `simulated` label.
 */
import type { PromptItem } from '../../core/types.js';
import type { GenerateRequest, TokenLogprob } from '../types.js';

/** Where a `simulation:` block sits, named in its configuration errors. */
export interface ConfigLocation {
  readonly file: string;
  readonly path: string;
}

/** One simulated reply. */
export interface SimulatedReply {
  readonly text: string;
  /** First-token log-probabilities by candidate token (probe phases); absent otherwise. */
  readonly logprobs?: Readonly<Record<string, TokenLogprob>>;
}

/** A battery's simulated model: a pure function of the campaign seed, the model and the item. */
export interface SimulatedModel {
  /** Draws of latency and transient errors are keyed by this and the item (reproducible). */
  readonly effectsKey: string;
  /** Share of calls that fail with a transient error (retried by the run). */
  readonly errorRate: number;
  /** Mean simulated latency in ms (exponential). */
  readonly latencyMs: number;
  /** The reply; throws SimulatedRequestError for a request it cannot answer. */
  reply(item: PromptItem, req: GenerateRequest): SimulatedReply;
}

/** The entry a simulated model is built for. */
export interface SimulatedEntry {
  /** Campaign model id. */
  readonly id: string;
  /** The model name shown in the provider id (`simulated/<model>`). */
  readonly model: string;
  /** `subject` for a model under test, or the battery's role (`judge`, `second_judge`). */
  readonly role: string;
  /** The entry's `simulation:` block as written; the battery checks it. */
  readonly simulation: unknown;
  readonly where: ConfigLocation;
}

/** Builds the simulated model of an entry (a battery's simulator). Throws CampaignFileError for a bad `simulation:` block. */
export type SimulatorFactory = (entry: SimulatedEntry, ctx: { readonly seed: number }) => SimulatedModel;
