import { isLanguageCode } from '../core/languages.js';
import { SondageError } from '../errors.js';
import type { Battery } from './types.js';

/** What a battery or role name may be: it ends up in Glue table names and SQL file names. */
export const SAFE_NAME = /^[a-z][a-z0-9_]*$/;

/**
 * Checks what a battery declares about itself once, where it is defined, so that a mistake in a
 * battery's own code (an unusable name, a language code the storage layout refuses) fails at
 * import with the battery named, not in the middle of a campaign.
 * @example export const relay = defineBattery({ name: 'relay', … });
 */
export function defineBattery<D>(battery: Battery<D>): Battery<D> {
  const problems: string[] = [];
  // The name ends up in Glue table names (`<name>_prompts`), where only [a-z0-9_] is safe.
  if (!SAFE_NAME.test(battery.name)) problems.push(`name "${battery.name}" must be lowercase letters, digits and "_", starting with a letter`);
  for (const code of battery.languages) if (!isLanguageCode(code)) problems.push(`language "${code}" is not a language code such as "en" or "zh-hant"`);
  if (new Set(battery.languages).size !== battery.languages.length) problems.push('a language is listed twice');
  for (const role of Object.keys(battery.roles)) {
    if (!SAFE_NAME.test(role)) problems.push(`role "${role}" must be lowercase letters, digits and "_"`);
    if (role === 'subject') problems.push('"subject" names the model under test; choose another role name');
  }
  if (problems.length > 0) throw new SondageError(`battery ${battery.name}: ${problems.join('; ')}`);
  return battery;
}
