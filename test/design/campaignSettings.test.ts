import { describe, expect, it } from 'vitest';
import { mergeSettings } from '../../lib/core/settings.js';
import type { GenerationSettings } from '../../lib/core/types.js';

describe('mergeSettings', () => {
  it('overlays only the values the override defines', () => {
    const base: GenerationSettings = { temperature: 1, max_tokens: 200, reasoning_effort: 'low' };

    const merged = mergeSettings(base, { temperature: 0, max_tokens: undefined });

    expect(merged).toEqual({ temperature: 0, max_tokens: 200, reasoning_effort: 'low' });
    expect(Object.keys(merged)).not.toContain(undefined);
  });

  it('composes default < campaign < model', () => {
    const defaults: GenerationSettings = { max_tokens: 256 };
    const campaign: GenerationSettings = { temperature: 1, max_tokens: 200 };
    const model: GenerationSettings = { temperature: 0.2, thinking: { budget_tokens: 1024 } };

    expect(mergeSettings(mergeSettings(defaults, campaign), model)).toEqual({
      temperature: 0.2,
      max_tokens: 200,
      thinking: { budget_tokens: 1024 },
    });
  });

  it('replaces compound values whole, and keeps falsy values that are defined', () => {
    const base: GenerationSettings = { stop: ['\n', '.'], thinking: { budget_tokens: 2048 }, logprobs: true };

    const merged = mergeSettings(base, { stop: ['END'], thinking: 'off', logprobs: false, temperature: 0 });

    expect(merged).toEqual({ stop: ['END'], thinking: 'off', logprobs: false, temperature: 0 });
  });

  it('leaves both inputs unchanged and drops undefined fields of the base', () => {
    const base: GenerationSettings = { temperature: 1, top_p: undefined };
    const override: GenerationSettings = { max_tokens: 5 };

    const merged = mergeSettings(base, override);

    expect(merged).toEqual({ temperature: 1, max_tokens: 5 });
    expect('top_p' in merged).toBe(false);
    expect(base).toEqual({ temperature: 1, top_p: undefined });
    expect(override).toEqual({ max_tokens: 5 });
    expect(mergeSettings(base)).toEqual({ temperature: 1 });
  });
});
