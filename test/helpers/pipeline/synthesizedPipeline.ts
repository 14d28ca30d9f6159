/**
 * The pipeline as `cdk synth` writes it, ready to execute: the state machine's definition with
 * stand-in names, and the four Lambda functions found by their construct ids in
 * infra/constructs/Pipeline.ts (Plan, Worker, Report, RecordFailure), each with the environment and
 * timeout the stack gives it. Synthesized once per test file, the template unchanged but without
 * the checks SondageStack.test.ts runs: asset bundling skipped (as in test/infra/synth.ts), no
 * cdk-nag, and no built-in CloudFormation validation (7 s of CPU per synthesis).
 */
// eslint-disable-next-line no-restricted-imports -- the pipeline tests execute the CDK app's definition; lib/ still may not import it
import { App } from 'aws-cdk-lib';
// eslint-disable-next-line no-restricted-imports -- as above
import type { CfnElement } from 'aws-cdk-lib';
// eslint-disable-next-line no-restricted-imports -- as above
import { Template } from 'aws-cdk-lib/assertions';
// eslint-disable-next-line no-restricted-imports -- as above
import { BUNDLING_STACKS } from 'aws-cdk-lib/cx-api';
import { buildApp } from '../../../infra/app.js';
import { ENV } from '../../../lib/config/index.js';
import { stateMachineOf } from '../asl/cloudFormation.js';
import type { SynthesizedFunction, SynthesizedStateMachine, TemplateJson } from '../asl/cloudFormation.js';

/** The pipeline's functions, by their construct ids in infra/constructs/Pipeline.ts. */
export const PIPELINE_FUNCTIONS = { plan: 'Plan', worker: 'Worker', report: 'Report', recordFailure: 'RecordFailure' } as const;
export type PipelineFunction = keyof typeof PIPELINE_FUNCTIONS;

export interface SynthesizedPipeline {
  readonly machine: SynthesizedStateMachine;
  readonly functions: Readonly<Record<PipelineFunction, SynthesizedFunction>>;
  /** The data bucket's name, as the functions' environment gives it. */
  readonly bucket: string;
}

const cache = new Map<string, SynthesizedPipeline>();

/** Synthesizes the app (once per context in this process) and reads its state machine and functions. */
export function synthesizePipeline(context: Record<string, string> = {}): SynthesizedPipeline {
  const key = JSON.stringify(context);
  const hit = cache.get(key);
  if (hit) return hit;
  const app = new App({ context: { [BUNDLING_STACKS]: [], ...context }, builtinCloudFormationValidation: false });
  const { stack } = buildApp(app, { nag: false });
  const template = Template.fromStack(stack).toJSON() as TemplateJson;
  const machine = stateMachineOf(template);
  const functionOf = (id: string): SynthesizedFunction => {
    const handler = stack.pipeline.node.findChild(id);
    const cfn = handler.node.findChild('Function').node.defaultChild as CfnElement;
    const fn = machine.functions.get(stack.getLogicalId(cfn));
    if (!fn) throw new Error(`synthesizePipeline: no Lambda function for construct Pipeline/${id}`);
    return fn;
  };
  const functions = Object.fromEntries(Object.entries(PIPELINE_FUNCTIONS).map(([k, id]) => [k, functionOf(id)])) as Record<PipelineFunction, SynthesizedFunction>;
  const bucket = functions.worker.environment[ENV.bucket];
  if (!bucket) throw new Error(`synthesizePipeline: the worker has no ${ENV.bucket}`);
  const out = { machine, functions, bucket };
  cache.set(key, out);
  return out;
}
