import type { GenerationSettings } from './types.js';

/**
 * Overlays the values `override` defines on `base`, so settings resolve explicit > campaign >
 * default by chaining: `mergeSettings(mergeSettings(DEFAULTS, campaign.defaults), model.settings)`.
 * An undefined field in `override` keeps the base value; compound values (`stop`, `thinking`) are
 * replaced whole, never merged, so an override says exactly what is sent. Neither input is changed.
 * @example mergeSettings({ temperature: 1, max_tokens: 200 }, { temperature: 0 }) // { temperature: 0, max_tokens: 200 }
 */
export function mergeSettings(base: GenerationSettings, override?: GenerationSettings): GenerationSettings {
  const merged: Record<string, unknown> = {};
  for (const source of [base, override ?? {}]) {
    for (const [key, value] of Object.entries(source)) {
      if (value !== undefined) merged[key] = value;
    }
  }
  return merged as GenerationSettings;
}
