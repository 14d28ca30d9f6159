/**
 * What `sondage plan --aws` says about the worker's reserved concurrency: CloudFormation refuses a
 * reservation that would leave fewer than 10 unreserved executions in the account, and a new
 * account's quota is often 10, so the default reservation of 100 fails the deploy there. The plan
 * cannot ask the account (no credentials needed to plan), so it says what the deploy will need,
 * from the kept deploy context (sondage.deploy.json) or the default, and how to change it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CONTEXT, DEPLOY_CONTEXT_FILE } from '../config/index.js';
import { FUNCTION_SIZING } from '../config/sizing.js';
import { UNRESERVED_WORKER_COPIES } from '../run/shards.js';

/** Lambda keeps this many executions of an account unreserved; a reservation must leave them. */
export const LAMBDA_UNRESERVED_MINIMUM = 10;

/** The worker's reservation the next deploy makes, and where that number comes from. */
export async function deployedWorkerConcurrency(dir: string): Promise<{ readonly reserved: number; readonly from: string }> {
  const fallback = { reserved: FUNCTION_SIZING.worker.reservedConcurrency ?? 0, from: 'the default' };
  let text: string;
  try {
    text = await readFile(join(dir, DEPLOY_CONTEXT_FILE), 'utf8');
  } catch {
    return fallback;
  }
  let kept: unknown;
  try {
    kept = JSON.parse(text);
  } catch {
    return fallback;
  }
  const raw = (kept as Record<string, unknown> | null)?.[CONTEXT.workerConcurrency];
  const n = typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw) : undefined;
  return n === undefined ? fallback : { reserved: n, from: DEPLOY_CONTEXT_FILE };
}

/**
 * The lines: the reservation, the account quota it needs, and the fix.
 * @example workerQuotaNote({ reserved: 100, from: 'the default' })
 */
export function workerQuotaNote(w: { readonly reserved: number; readonly from: string }): string {
  if (w.reserved === 0) {
    return `Worker concurrency: none reserved (${w.from}); the worker shares the account's pool and each wave fans out at most ${UNRESERVED_WORKER_COPIES} copies.`;
  }
  return (
    `Worker concurrency: the stack reserves ${w.reserved} concurrent executions for the worker (${w.from}); the deploy needs the account's Lambda ` +
    `concurrency quota to be at least ${w.reserved + LAMBDA_UNRESERVED_MINIMUM} (new accounts often have ${LAMBDA_UNRESERVED_MINIMUM}). Below that, deploy with ` +
    `-c ${CONTEXT.workerConcurrency}=0 (none reserved, ${UNRESERVED_WORKER_COPIES} copies a wave) or a smaller N, or ask AWS for more (Service Quotas → AWS Lambda → Concurrent executions).`
  );
}
