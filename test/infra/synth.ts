/** Shared helpers of the infra tests: synthesize once, read the pieces a test asserts on. */
// eslint-disable-next-line no-restricted-imports -- the infra tests inspect the CDK app; lib/ still may not import it
import { App } from 'aws-cdk-lib';
// eslint-disable-next-line no-restricted-imports -- the infra tests inspect the CDK app; lib/ still may not import it
import { Template } from 'aws-cdk-lib/assertions';
// eslint-disable-next-line no-restricted-imports -- the infra tests inspect the CDK app; lib/ still may not import it
import { BUNDLING_STACKS } from 'aws-cdk-lib/cx-api';
import { AwsSolutionsChecks } from 'cdk-nag';
import { buildApp } from '../../infra/app.js';
import type { SondageStack } from '../../infra/stacks/SondageStack.js';
import type { AslState, AslStates } from '../helpers/asl/types.js';

export interface Synthesized {
  readonly app: App;
  readonly stack: SondageStack;
  readonly template: Template;
  /** cdk-nag findings not acknowledged, as `rule at path` lines (empty when clean). */
  readonly nagFindings: string[];
  /** The state machine definition with CloudFormation tokens replaced by placeholders. */
  readonly definition: AslStates;
}


/**
 * Synthesizes the app as `npx cdk synth` does, except that asset bundling is skipped (no esbuild,
 * no 70 MB DuckDB copy per function): the template is the same, with placeholder asset hashes.
 * test/infra/bundling.test.ts covers the bundling itself.
 */
export function synthesize(context: Record<string, string> = {}): Synthesized {
  const app = new App({ context: { [BUNDLING_STACKS]: [], ...context } });
  // cdk-nag runs once, here, instead of also as a synth plugin (same rules, half the time).
  const { stack } = buildApp(app, { nag: false });
  const template = Template.fromStack(stack);
  const report = new AwsSolutionsChecks(app).validateScope(app);
  const nagFindings = report.violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} at ${r.resourceLogicalId} (${r.templatePath})`));
  return { app, stack, template, nagFindings, definition: stateMachineDefinition(template) };
}

/** The DefinitionString of the one state machine, tokens (`{Ref}`, `{Fn::GetAtt}`) as `TOKEN`. */
export function stateMachineDefinition(template: Template): AslStates {
  const machines = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
  if (machines.length !== 1) throw new Error(`expected one state machine, found ${machines.length}`);
  const body = (machines[0] as { Properties: { DefinitionString: unknown } }).Properties.DefinitionString;
  return JSON.parse(tokenText(body)) as AslStates;
}

const PSEUDO: Readonly<Record<string, string>> = { 'AWS::Partition': 'aws', 'AWS::Region': 'us-east-1', 'AWS::AccountId': '123456789012' };

/**
 * A CloudFormation value as the text it becomes at deploy time, with plausible stand-ins: pseudo
 * parameters as in us-east-1, `Ref` as the logical id, `Fn::GetAtt X.Arn` as a Lambda ARN (the only
 * ARNs the definition embeds).
 */
export function tokenText(part: unknown): string {
  if (typeof part === 'string') return part;
  const p = part as { 'Fn::Join'?: [string, unknown[]]; Ref?: string; 'Fn::GetAtt'?: [string, string] };
  if (p['Fn::Join']) return p['Fn::Join'][1].map(tokenText).join(p['Fn::Join'][0]);
  if (p.Ref !== undefined) return PSEUDO[p.Ref] ?? p.Ref.toLowerCase();
  if (p['Fn::GetAtt']) return `arn:aws:lambda:us-east-1:123456789012:function:${p['Fn::GetAtt'][0]}`;
  throw new Error(`tokenText: unexpected CloudFormation value ${JSON.stringify(part)}`);
}

/** Every state, nested ones (Map item processors, Parallel branches) included, by name. */
export function allStates(definition: AslStates): Map<string, AslState> {
  const out = new Map<string, AslState>();
  const walk = (states: Readonly<Record<string, AslState>>): void => {
    for (const [name, state] of Object.entries(states)) {
      out.set(name, state);
      const processor = (state.ItemProcessor ?? state.Iterator) as AslStates | undefined;
      if (processor) walk(processor.States);
      for (const branch of (state.Branches ?? []) as AslStates[]) walk(branch.States);
    }
  };
  walk(definition.States);
  return out;
}

export interface Statement {
  readonly policy: string;
  readonly actions: string[];
  readonly resources: unknown[];
}

/** Every Allow statement of every IAM policy in the template. */
export function iamStatements(template: Template): Statement[] {
  const out: Statement[] = [];
  for (const [id, policy] of Object.entries(template.findResources('AWS::IAM::Policy'))) {
    const doc = (policy as { Properties: { PolicyDocument: { Statement: { Effect: string; Action: string | string[]; Resource: unknown }[] } } }).Properties
      .PolicyDocument;
    for (const s of doc.Statement) {
      if (s.Effect !== 'Allow') continue;
      out.push({ policy: id, actions: [s.Action].flat(), resources: [s.Resource].flat() });
    }
  }
  return out;
}
