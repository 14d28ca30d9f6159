/**
 * `-c sondage:workerConcurrency=N`: a new account's concurrency quota is often 10, and Lambda keeps
 * 10 unreserved, so the worker's default reservation of 100 fails the deploy there. The context key
 * sets the reservation (0: none) and tells the plan function the ceiling on worker copies.
 */
// eslint-disable-next-line no-restricted-imports -- the infra tests inspect the CDK app; lib/ still may not import it
import { App } from 'aws-cdk-lib';
// eslint-disable-next-line no-restricted-imports -- the infra tests inspect the CDK app; lib/ still may not import it
import { Match, Template } from 'aws-cdk-lib/assertions';
// eslint-disable-next-line no-restricted-imports -- the infra tests inspect the CDK app; lib/ still may not import it
import { BUNDLING_STACKS } from 'aws-cdk-lib/cx-api';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../infra/app.js';
import { CONTEXT, ENV } from '../../lib/config/index.js';
import { CALLS_PER_COPY, MAX_WORKER_COPIES, UNRESERVED_WORKER_COPIES, waveCopies, workerCopiesCeiling } from '../../lib/run/shards.js';

function template(value?: string): Template {
  const context: Record<string, unknown> = { [BUNDLING_STACKS]: [] };
  if (value !== undefined) context[CONTEXT.workerConcurrency] = value;
  return Template.fromStack(buildApp(new App({ context }), { nag: false }).stack);
}

const worker = (t: Template) => Object.values(t.findResources('AWS::Lambda::Function', { Properties: { Description: Match.stringLikeRegexp('shards against a model API') } }))[0]!.Properties as Record<string, unknown>;
const planVariables = (t: Template) =>
  (Object.values(t.findResources('AWS::Lambda::Function', { Properties: { Description: Match.stringLikeRegexp('writes the shard manifests') } }))[0]!.Properties as { Environment: { Variables: Record<string, unknown> } }).Environment.Variables;

describe('the worker reserved concurrency from context', () => {
  it('by default reserves 100 and leaves the plan at its default ceiling', () => {
    const t = template();
    expect(worker(t)['ReservedConcurrentExecutions']).toBe(100);
    expect(planVariables(t)[ENV.workerCopies]).toBeUndefined();
  });

  it('-c sondage:workerConcurrency=8 reserves 8 and tells the plan', () => {
    const t = template('8');
    expect(worker(t)['ReservedConcurrentExecutions']).toBe(8);
    expect(planVariables(t)[ENV.workerCopies]).toBe('8');
  });

  it('0 reserves nothing (a reservation of 0 would stop the function), and the plan fans out a few copies', () => {
    const t = template('0');
    expect(worker(t)['ReservedConcurrentExecutions']).toBeUndefined();
    expect(planVariables(t)[ENV.workerCopies]).toBe('0');
    expect(workerCopiesCeiling('0')).toBe(UNRESERVED_WORKER_COPIES);
  });

  it.each(['-1', '2.5', 'many'])('%s is refused with the key and what it expects', (value) => {
    expect(() => template(value)).toThrow(`-c ${CONTEXT.workerConcurrency}=${value}: expected a whole number ≥ 0`);
  });

  it('the plan never fans out more copies than the ceiling it is given', () => {
    const ctx = { campaign: { concurrency: 1024, models: [] } } as unknown as Parameters<typeof waveCopies>[0];
    expect(waveCopies(ctx, [])).toBe(Math.min(MAX_WORKER_COPIES, 1024 / CALLS_PER_COPY));
    expect(waveCopies(ctx, [], workerCopiesCeiling('8'))).toBe(8);
    expect(workerCopiesCeiling(undefined)).toBe(MAX_WORKER_COPIES);
    expect(() => workerCopiesCeiling('ten')).toThrow('whole number ≥ 0');
  });
});

describe("Athena's per-query bytes-scanned cutoff from context", () => {
  const cutoff = (value?: string) => {
    const context: Record<string, unknown> = { [BUNDLING_STACKS]: [] };
    if (value !== undefined) context[CONTEXT.athenaCutoffGiB] = value;
    const t = Template.fromStack(buildApp(new App({ context }), { nag: false }).stack);
    const wg = Object.values(t.findResources('AWS::Athena::WorkGroup'))[0]!.Properties as { WorkGroupConfiguration: { BytesScannedCutoffPerQuery: number } };
    return wg.WorkGroupConfiguration.BytesScannedCutoffPerQuery;
  };

  // The default, 10 GiB, is asserted by SondageStack.test.ts.
  it('is what -c sondage:athenaCutoffGiB=N says, in GiB', () => {
    expect(cutoff('0.5')).toBe(512 * 1024 ** 2);
  }, 120_000);

  it.each(['0', '-3', 'lots', '0.001'])('%s is refused with the key, the unit and Athena\'s floor', (value) => {
    expect(() => cutoff(value)).toThrow(`-c ${CONTEXT.athenaCutoffGiB}=${value}: expected the bytes one Athena query may scan, in GiB (a number ≥ 0.01; Athena's floor is 10 MB)`);
  });
});
