/**
 * A stored reply row for the tests that write replies by hand (journals, Parquet parts, status
 * listings): an answered "Yes." at no cost unless `over` says otherwise; `error` (class, message)
 * makes it a failed attempt, with no text, no output and no cost.
 */
import type { ReplyRow } from '../../lib/store/types.js';

export function replyRow(over: Partial<ReplyRow> & Pick<ReplyRow, 'item_id'>, error?: readonly [errorClass: string, message: string]): ReplyRow {
  return {
    campaign: 'c',
    phase: 'generate',
    model: 'alpha',
    language: 'en',
    attempt: 1,
    status: 'ok',
    text: 'Yes.',
    finish_reason: 'stop',
    input_tokens: 10,
    output_tokens: 2,
    cost_usd: 0,
    latency_ms: 5,
    logprobs_json: null,
    error_class: null,
    error_message: null,
    settings_json: '{}',
    provider: 'simulated/alpha',
    simulated: true,
    created_at: '2026-01-01T00:00:00.000Z',
    ...(error ? { status: 'error', text: null, finish_reason: null, output_tokens: 0, cost_usd: 0, error_class: error[0], error_message: error[1] } : {}),
    ...over,
  };
}
