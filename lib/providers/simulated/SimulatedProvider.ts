import type { PromptItem } from '../../core/types.js';
import { SimulatedRequestError } from '../errors.js';
import type { GenerateRequest, GenerateResult, ModelProvider, RetryDecision } from '../types.js';
import { approximateTokens, approximateTokensOf, truncateToTokens } from './approximateTokens.js';
import { CallEffects } from './CallEffects.js';
import { classifySimulatedError } from './classifySimulatedError.js';
import type { SimulatedModel } from './types.js';

/**
 * A battery's simulated model as a ModelProvider (`simulated/<model>`, labelled simulated): the
 * call waits the simulated latency and fails for the simulated share of transient errors, then
 * the model answers from the item, never past `max_tokens` (a real API never exceeds it, and the
 * budget's reservations rely on that), with token usage estimated from the text.
 */
export class SimulatedProvider implements ModelProvider {
  readonly simulated = true;
  private readonly effects: CallEffects;

  constructor(
    readonly id: string,
    private readonly model: SimulatedModel,
  ) {
    this.effects = new CallEffects(id, model.effectsKey, model.errorRate, model.latencyMs);
  }

  async generate(req: GenerateRequest, signal?: AbortSignal): Promise<GenerateResult> {
    const item = req.item as PromptItem | undefined;
    if (item === undefined) {
      throw new SimulatedRequestError(`${this.id}: the simulated provider needs GenerateRequest.item (it answers from the item)`, this.id);
    }
    await this.effects.before(item.item_id, signal);
    const reply = this.model.reply(item, req);
    let text = reply.text;
    let finish = 'stop';
    let output = approximateTokens(text);
    const max = req.settings.max_tokens;
    if (max !== undefined && output > max) {
      text = truncateToTokens(text, max);
      output = approximateTokens(text);
      finish = 'length';
    }
    return {
      text,
      finish_reason: finish,
      usage: { input_tokens: approximateTokensOf(req.messages), output_tokens: output },
      ...(reply.logprobs ? { logprobs: reply.logprobs } : {}),
    };
  }

  classifyError(err: unknown): RetryDecision {
    return classifySimulatedError(err);
  }
}
