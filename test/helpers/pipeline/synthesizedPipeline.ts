/**
 * The pipeline as `cdk synth` writes it, ready to execute: the state machine's definition with
 * stand-in names, and the four Lambda functions found by their construct ids in
 * infra/constructs/Pipeline.ts (Plan, Worker, Report, RecordFailure), each with the environment and
 * timeout the stack gives it, and on a GPU stack the Batch job definition. Synthesized once per test file, the template unchanged but without
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
import { resolveTemplateValue, stateMachineOf } from '../asl/cloudFormation.js';
import type { SynthesizedFunction, SynthesizedStateMachine, TemplateJson } from '../asl/cloudFormation.js';

/** The pipeline's functions, by their construct ids in infra/constructs/Pipeline.ts. */
export const PIPELINE_FUNCTIONS = { plan: 'Plan', worker: 'Worker', report: 'Report', recordFailure: 'RecordFailure' } as const;
export type PipelineFunction = keyof typeof PIPELINE_FUNCTIONS;

/** A rule of a job definition's retry strategy (AWS::Batch::JobDefinition EvaluateOnExit). */
export interface EvaluateOnExit {
  readonly Action: 'RETRY' | 'EXIT';
  readonly OnExitCode?: string;
  readonly OnReason?: string;
  readonly OnStatusReason?: string;
}

/** The GPU job definition (infra/constructs/GpuBatch.ts), resolved as the plan's `submitJob.sync` reaches it. */
export interface SynthesizedGpuBatch {
  /** The job definition's ARN, as the state machine's submit states name it. */
  readonly jobDefinitionArn: string;
  /** The container's environment as the job definition sets it (before the submission's overrides). */
  readonly environment: Readonly<Record<string, string>>;
  /** RetryStrategy.Attempts: attempts per array child. */
  readonly attempts: number;
  /** RetryStrategy.EvaluateOnExit: Batch takes the first rule that matches an attempt's end. */
  readonly evaluateOnExit: readonly EvaluateOnExit[];
  /** The stack's job queue ARNs. */
  readonly queues: readonly string[];
}

export interface SynthesizedPipeline {
  readonly machine: SynthesizedStateMachine;
  readonly functions: Readonly<Record<PipelineFunction, SynthesizedFunction>>;
  /** The data bucket's name, as the functions' environment gives it. */
  readonly bucket: string;
  /** The GPU job definition and queues, on a stack synthesized with the GPU context; else undefined. */
  readonly gpu?: SynthesizedGpuBatch;
}

/** The one Batch job definition of a template, resolved; undefined when the template has none. */
function gpuBatchOf(template: TemplateJson): SynthesizedGpuBatch | undefined {
  const definitions = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::Batch::JobDefinition');
  if (definitions.length === 0) return undefined;
  if (definitions.length !== 1) throw new Error(`synthesizePipeline: expected one Batch job definition, found ${definitions.length}`);
  const [id, definition] = definitions[0]!;
  const p = definition.Properties as { ContainerProperties: { Environment?: unknown }; RetryStrategy?: { Attempts?: number; EvaluateOnExit?: EvaluateOnExit[] } };
  const environment = resolveTemplateValue(p.ContainerProperties.Environment ?? [], template) as { Name: string; Value: string }[];
  return {
    jobDefinitionArn: String(resolveTemplateValue({ Ref: id }, template)),
    environment: Object.fromEntries(environment.map((e) => [e.Name, String(e.Value)])),
    attempts: p.RetryStrategy?.Attempts ?? 1,
    evaluateOnExit: p.RetryStrategy?.EvaluateOnExit ?? [],
    queues: Object.entries(template.Resources)
      .filter(([, r]) => r.Type === 'AWS::Batch::JobQueue')
      .map(([q]) => String(resolveTemplateValue({ 'Fn::GetAtt': [q, 'JobQueueArn'] }, template))),
  };
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
  const gpu = gpuBatchOf(template);
  const out = { machine, functions, bucket, ...(gpu ? { gpu } : {}) };
  cache.set(key, out);
  return out;
}
