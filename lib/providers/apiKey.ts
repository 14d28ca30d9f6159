import { CampaignFileError, formatIssues } from '../errors.js';
import type { ProviderContext, ProviderEntry } from './entry.js';

/** Where a model entry sits in its campaign file, for error messages. */
export function entryPath(entry: ProviderEntry): string {
  return entry.role === 'judge' ? 'judge' : `models[${entry.id}]`;
}

/**
 * The API key of a model entry, read from the environment variable its `api_key_env` names (or
 * the provider's documented default). The key is returned to the adapter and goes nowhere else;
 * an error names the variable, never a value.
 * @throws CampaignFileError when the variable is not named or not set.
 */
export function resolveApiKey(entry: ProviderEntry, ctx: ProviderContext, defaultEnv: string | undefined): string {
  const env = ctx.env ?? process.env;
  const name = entry.api_key_env ?? defaultEnv;
  const file = ctx.file ?? '(campaign)';
  const path = `${entryPath(entry)}.api_key_env`;
  if (name === undefined) {
    const issues = [{ file, path, message: `provider ${entry.provider} needs an API key; name the environment variable that holds it, e.g. api_key_env: MY_API_KEY` }];
    throw new CampaignFileError(formatIssues(issues), issues);
  }
  const key = env[name];
  if (key === undefined || key.trim() === '') {
    const issues = [{ file, path, message: `environment variable ${name} is not set; export the API key under that name before the run (the key never goes in the campaign file)` }];
    throw new CampaignFileError(formatIssues(issues), issues);
  }
  return key.trim();
}
