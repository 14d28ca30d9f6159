/**
 * The stop flag the partitions of one run share (StopState), and what sets it besides the budget
 * and an abort: a call that cost more than it reserved (an overrun stops every partition) and a
 * rejected API key (stops the partitions of that key's scope only). Apart from the runner so that
 * the threads, the worker and the run summary can read it without the runner's imports.
 */
import type { ModelProvider } from '../providers/types.js';
import type { WaitStopState } from './waitStops.js';

/** Why a run (or some of its partitions) stops starting calls; see `PartitionSpec.stop`. */
export interface StopState extends WaitStopState {
  reason?: 'budget' | 'aborted' | 'overrun';
  keyFailures?: Map<string, string>;
  /**
   * Calls whose provider reported more usage than the call reserved (a reservation is a bound for
   * any honest byte-level tokenizer, so this is a provider counting something else): the answering
   * model → USD spent past what its calls reserved. The first one stops every partition (`overrun`).
   */
  overruns?: Map<string, number>;
}

/**
 * Records a call that cost more than it reserved, and stops the campaign's new calls at once: the
 * cap holds only while each call costs at most its reservation. The cost is kept as reported.
 */
export function noteOverrun(stop: StopState, model: string, excessUsd: number): void {
  stop.reason ??= 'overrun';
  const overruns = (stop.overruns ??= new Map<string, number>());
  overruns.set(model, (overruns.get(model) ?? 0) + excessUsd);
}

/**
 * What a rejected key stops: the provider model at its endpoint with its key variable. Two
 * entries of one model at different base URLs (two vLLM servers, a proxy and the vendor) have
 * different keys: one rejected stops only its own calls. The model is part of it, as in the
 * provider id, because a 403 may refuse one model and not another on the same key.
 * @example keyScope({ provider: { id: 'openai/gpt-4.1-mini', endpoint: 'https://api.openai.com/v1' }, keyEnv: 'OPENAI_API_KEY' })
 */
export function keyScope(spec: { readonly provider: Pick<ModelProvider, 'id' | 'endpoint'>; readonly keyEnv?: string | undefined }): string {
  return `${spec.provider.id} ${spec.provider.endpoint ?? ''} ${spec.keyEnv ?? ''}`;
}

/** What noteKeyFailure needs of a partition (a PartitionSpec has it). */
export interface KeyFailureScope {
  readonly stop: StopState;
  readonly phase: string;
  readonly provider: Pick<ModelProvider, 'id' | 'endpoint'>;
  readonly keyEnv?: string | undefined;
}

/**
 * Records that the provider rejected the API key (once per keyScope, for every partition of the
 * run). The message names the provider model, its endpoint and the variable, never the key:
 * adapters redact the key from their messages.
 */
export function noteKeyFailure(spec: KeyFailureScope, errorClass: string, message: string): void {
  const failures = (spec.stop.keyFailures ??= new Map<string, string>());
  const scope = keyScope(spec);
  if (failures.has(scope)) return;
  // Adapter messages start with the provider id, which the message names already.
  const detail = (message.startsWith(`${spec.provider.id}: `) ? message.slice(spec.provider.id.length + 2) : message).slice(0, 200);
  const where = spec.keyEnv !== undefined ? `the environment variable ${spec.keyEnv}` : "the environment variable the model's api_key_env names";
  const at = spec.provider.endpoint !== undefined ? ` at ${spec.provider.endpoint}` : '';
  if (spec.provider.id.startsWith('bedrock/')) {
    // Bedrock has no API key: the AWS SDK's default chain found the credentials it signed with.
    failures.set(
      scope,
      `${spec.provider.id}: AWS refused the call (${errorClass}: ${detail})${at}; the ${spec.phase} calls of this model at this endpoint stopped and its unanswered items stay pending. ` +
        'Check the AWS credentials the SDK finds (AWS_PROFILE or AWS_ACCESS_KEY_ID locally, the worker role on AWS), that they may call bedrock:InvokeModel on this model, and that the model is enabled in this region, then run again.',
    );
    return;
  }
  failures.set(
    scope,
    `${spec.provider.id}: the provider rejected the API key (${errorClass}: ${detail})${at}; ` +
      `the ${spec.phase} calls of this model${at ? ' at this endpoint' : ''} stopped and its unanswered items stay pending. ` +
      `Check the key in ${where} (valid, allowed to use this model, with credit), then run again.`,
  );
}
