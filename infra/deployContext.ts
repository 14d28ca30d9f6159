/**
 * The deployment's `sondage:*` context, kept in the project: a plain `npx cdk deploy` in the middle
 * of a campaign must deploy what the last one did. Without it, forgetting `-c sondage:gpu=true`
 * once removes the GPU queues under running jobs, and forgetting `-c sondage:alarmEmail=…` removes
 * the subscriptions. Each run of the app (synth, diff, deploy) records the keys given with `-c`
 * in `sondage.deploy.json` beside cdk.json, and takes the recorded value of every key not given.
 * `-c KEY=VALUE` changes one; `-c KEY=` (empty) clears one back to its default.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { App } from 'aws-cdk-lib';
import { CONTEXT, DEPLOY_CONTEXT_FILE } from '../lib/config/index.js';
import { OPS_CONTEXT } from '../lib/config/operations.js';
import { SondageError } from '../lib/errors.js';

/** The file the CDK app keeps the deployment's context in, in the folder `cdk` runs from (lib/config, as the CLI reads it too). */
export { DEPLOY_CONTEXT_FILE };

/** The keys kept: every `sondage:*` context key the app reads. */
export const KEPT_CONTEXT_KEYS: readonly string[] = [...Object.values(CONTEXT), ...Object.values(OPS_CONTEXT)];

/** What `keepDeployContext` did: keys taken from the file, and whether it was written. */
export interface KeptContext {
  readonly fromFile: Readonly<Record<string, string>>;
  readonly written: boolean;
}

function readKept(file: string): Record<string, string> {
  if (!existsSync(file)) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    throw new SondageError(`${file}: not JSON; expected the object of sondage:* context keys the CDK app writes (delete the file to start again from cdk.json and -c)`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new SondageError(`${file}: expected an object of sondage:* context keys, got ${Array.isArray(parsed) ? 'an array' : typeof parsed}`);
  }
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (!KEPT_CONTEXT_KEYS.includes(key)) throw new SondageError(`${file}: ${JSON.stringify(key)} is not a sondage context key; expected one of ${KEPT_CONTEXT_KEYS.join(', ')}`);
    if (typeof value !== 'string') throw new SondageError(`${file}: ${key}: expected a string, as -c gives it, got ${value === null ? 'null' : typeof value}`);
    out[key] = value;
  }
  return out;
}

/**
 * Merges the kept context into `app` (before anything is constructed) and records the keys given:
 * given > kept > default.
 * @example keepDeployContext(app, join(process.cwd(), DEPLOY_CONTEXT_FILE));
 */
export function keepDeployContext(app: App, file: string): KeptContext {
  const kept = readKept(file);
  const next: Record<string, string> = { ...kept };
  const fromFile: Record<string, string> = {};
  for (const key of KEPT_CONTEXT_KEYS) {
    const given = app.node.tryGetContext(key) as unknown;
    if (given !== undefined && given !== null) {
      // A list from cdk.json (sondage:batteries) is kept as the JSON the -c form also takes.
      next[key] = typeof given === 'string' ? given : typeof given === 'object' ? JSON.stringify(given) : String(given);
    } else if (key in kept) {
      app.node.setContext(key, kept[key]);
      fromFile[key] = kept[key]!;
    }
  }
  const changed = JSON.stringify(sorted(next)) !== JSON.stringify(sorted(kept));
  if (changed) writeFileSync(file, `${JSON.stringify(sorted(next), null, 2)}\n`);
  return { fromFile, written: changed };
}

function sorted(o: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}

/** The line the app prints when it deploys keys it was not given (empty when none). */
export function keptContextNotice(file: string, kept: KeptContext): string {
  const keys = Object.entries(kept.fromFile);
  if (keys.length === 0) return '';
  const list = keys.map(([k, v]) => `${k}=${v === '' ? '(cleared)' : v}`).join(', ');
  return `sondage: kept from ${file}: ${list} (as the last cdk command was given them; -c KEY=VALUE changes one, -c KEY= clears one)`;
}
