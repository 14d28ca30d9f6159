/**
 * Provider keys on AWS (DESIGN.md "Cost and safety rails": keys come from Secrets Manager and never
 * reach logs, S3 or error messages). One secret, a JSON object of environment-variable name → key,
 * read once per container and put into process.env under those names, where the providers' own
 * `api_key_env` lookup (lib/providers/apiKey.ts) finds them, as it does locally.
 */
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SondageError } from '../../lib/errors.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Keys shorter than this are not redacted: a two-letter "key" would blank out ordinary words. */
const MIN_REDACT_LENGTH = 8;

/** Key values loaded in this container, for `redactKeys`. */
const loaded = new Set<string>();
/** The variables they were loaded into, for `withoutProviderKeys`. */
const loadedNames = new Set<string>();

export interface KeyLoaderOptions {
  readonly client: Pick<SecretsManagerClient, 'send'>;
  readonly secretArn: string;
  /** Where the keys go (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
  /** The clock (tests). */
  readonly now?: () => number;
}

/**
 * How long a warm container trusts the keys it read within one execution: past it, the next
 * invocation reads the secret again, for at most one GetSecretValue a minute per container.
 */
export const KEYS_FRESH_MS = 60_000;

/**
 * Loads the provider keys. Called with the execution's name, it reads the secret at the first call
 * of every execution (a warm container of the previous one reads it again: "fix the key and start
 * again" holds with no wait), at a call more than KEYS_FRESH_MS after the last read, and at the
 * first call after `forget` (what the worker calls when a provider rejected a key: another read
 * may find it fixed). A failed read is tried again at the next call.
 */
export interface KeyLoader {
  (execution?: string): Promise<void>;
  /** The next call reads the secret again (a provider rejected a key this container holds). */
  forget(): void;
}

/**
 * A KeyLoader over Secrets Manager. The error names the secret and what is wrong with its shape,
 * never a value from it.
 * @example const load = providerKeyLoader({ client, secretArn }); await load(execution);
 */
export function providerKeyLoader(options: KeyLoaderOptions): KeyLoader {
  const now = options.now ?? Date.now;
  let once: Promise<void> | undefined;
  let loadedAt = 0;
  let loadedFor: string | undefined;
  // The variables this loader set: a name taken out of the secret is unset at the next read.
  const mine = new Set<string>();
  const loader = (execution?: string): Promise<void> => {
    const stale = now() - loadedAt > KEYS_FRESH_MS || (execution !== undefined && execution !== loadedFor);
    if (once !== undefined && stale) once = undefined;
    once ??= load(options, mine).then(
      () => {
        loadedAt = now();
        loadedFor = execution;
      },
      (err: unknown) => {
        once = undefined;
        throw err;
      },
    );
    return once;
  };
  return Object.assign(loader, {
    forget: () => {
      once = undefined;
    },
  });
}

async function load({ client, secretArn, env = process.env }: KeyLoaderOptions, mine: Set<string>): Promise<void> {
  let text: string | undefined;
  try {
    text = (await client.send(new GetSecretValueCommand({ SecretId: secretArn }))).SecretString;
  } catch (err) {
    // The SDK's message names the secret and the reason; it never holds the secret's value.
    throw new SondageError(`provider keys: cannot read secret ${secretArn}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  if (text === undefined) throw new SondageError(`provider keys: secret ${secretArn} has no SecretString; store a JSON object of environment-variable name → key`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the text around the error, which is the key.
    throw new SondageError(`provider keys: secret ${secretArn} is not JSON; expected an object of environment-variable name → key, e.g. {"OPENAI_API_KEY": "…"}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new SondageError(`provider keys: secret ${secretArn} holds JSON ${Array.isArray(parsed) ? 'array' : typeof parsed}; expected an object of environment-variable name → key`);
  }
  const problems: string[] = [];
  const keys: [string, string][] = [];
  for (const [name, value] of Object.entries(parsed)) {
    if (!ENV_NAME.test(name)) problems.push(`${JSON.stringify(name)} is not an environment-variable name`);
    else if (typeof value !== 'string' || value.trim() === '') problems.push(`${name}: expected the key as a non-empty string, got ${value === null ? 'null' : typeof value}`);
    else keys.push([name, value.trim()]);
  }
  if (problems.length > 0) throw new SondageError(`provider keys: secret ${secretArn}: ${problems.join('; ')}`);
  // A name taken out of the secret leaves the environment too (its old value stays redacted).
  const names = new Set(keys.map(([name]) => name));
  for (const name of mine) {
    if (names.has(name)) continue;
    delete env[name];
    mine.delete(name);
  }
  for (const [name, value] of keys) {
    env[name] = value;
    mine.add(name);
    loadedNames.add(name);
    if (value.length >= MIN_REDACT_LENGTH) loaded.add(value);
  }
}

/** What a model server may read of the provider secret: the Hugging Face token (gated weights). */
export const MODEL_SERVER_KEYS: ReadonlySet<string> = new Set(['HF_TOKEN', 'HUGGING_FACE_HUB_TOKEN']);

/**
 * The environment for a process that must not see the provider keys (the GPU job's `vllm serve`,
 * which may run a model's own code): `env` without every variable holding a key this container
 * loaded, except the Hugging Face token names in `keep`.
 */
export function withoutProviderKeys(env: NodeJS.ProcessEnv, keep: ReadonlySet<string> = MODEL_SERVER_KEYS): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && loadedNames.has(name) && !keep.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/** `text` with every loaded key replaced by `[redacted]` (a provider's error may quote the key it was sent). */
export function redactKeys(text: string): string {
  let out = text;
  for (const key of loaded) out = out.split(key).join('[redacted]');
  return out;
}

/**
 * Log fields with every loaded key redacted, however deep: strings redacted, errors as their
 * redacted text, arrays and plain objects walked. Every log line of the handlers and the GPU job
 * goes through it, so that an error quoting a key (a provider's 401 echoing it, an SDK message)
 * never reaches CloudWatch, whichever path logged it.
 */
export function redactFields<T>(fields: T): T {
  return walk(fields, 0) as T;
}

function walk(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return redactKeys(value);
  if (value instanceof Error) return redactKeys(String(value));
  if (depth > 16 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, depth + 1)]));
}

/**
 * The error a handler rethrows: unchanged when it quotes no key, otherwise a SondageError with the
 * keys redacted and without the original as `cause` (Step Functions and the logs would show it).
 */
export function redactedError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const message = redactKeys(err.message);
  const stack = err.stack === undefined ? undefined : redactKeys(err.stack);
  if (message === err.message && stack === err.stack) return err;
  const safe = new SondageError(message);
  safe.name = err.name;
  if (stack !== undefined) safe.stack = stack;
  return safe;
}
