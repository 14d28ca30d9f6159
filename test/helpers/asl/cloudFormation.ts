/**
 * The state machine of a synthesized template as it would be deployed: its DefinitionString with
 * the CloudFormation values resolved to stand-ins (pseudo parameters as in us-east-1 of account
 * 123456789012; `Ref` and `Fn::GetAtt` per resource type, as CloudFormation documents their return
 * values), and the Lambda functions with their resolved environment and timeout, so that a test
 * builds each handler from what the stack really gives it. A CloudFormation function or attribute
 * it does not know is refused, never guessed.
 */
import { AslDefinitionError } from './errors.js';
import type { AslStates, Json } from './types.js';

export interface CloudFormationNames {
  readonly partition?: string;
  readonly region?: string;
  readonly account?: string;
  readonly stackName?: string;
  /** The physical name a `Ref` of this logical id gives (a bucket name, a table name), instead of the default stand-in. */
  readonly refs?: Readonly<Record<string, string>>;
}

interface Resource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
}
export interface TemplateJson {
  readonly Resources: Readonly<Record<string, Resource>>;
}

export interface SynthesizedFunction {
  readonly logicalId: string;
  readonly arn: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
}

export interface SynthesizedStateMachine {
  readonly logicalId: string;
  readonly arn: string;
  readonly definition: AslStates;
  /** Every Lambda function of the template, by logical id. */
  readonly functions: ReadonlyMap<string, SynthesizedFunction>;
}

const ARN_TYPES: Readonly<Record<string, (id: string, n: Required<Omit<CloudFormationNames, 'refs'>>) => string>> = {
  'AWS::SecretsManager::Secret': (id, n) => `arn:${n.partition}:secretsmanager:${n.region}:${n.account}:secret:${id}-AbCdEf`,
  'AWS::Batch::JobQueue': (id, n) => `arn:${n.partition}:batch:${n.region}:${n.account}:job-queue/${id}`,
  'AWS::Batch::JobDefinition': (id, n) => `arn:${n.partition}:batch:${n.region}:${n.account}:job-definition/${id}:1`,
  'AWS::StepFunctions::StateMachine': (id, n) => `arn:${n.partition}:states:${n.region}:${n.account}:stateMachine:${id}`,
  'AWS::SNS::Topic': (id, n) => `arn:${n.partition}:sns:${n.region}:${n.account}:${id}`,
};

/** A CloudFormation value resolved with stand-in names. */
export function resolveTemplateValue(value: unknown, template: TemplateJson, names: CloudFormationNames = {}): Json {
  const n = { partition: names.partition ?? 'aws', region: names.region ?? 'us-east-1', account: names.account ?? '123456789012', stackName: names.stackName ?? 'Sondage' };
  const pseudo: Record<string, string> = { 'AWS::Partition': n.partition, 'AWS::Region': n.region, 'AWS::AccountId': n.account, 'AWS::URLSuffix': 'amazonaws.com', 'AWS::StackName': n.stackName };
  const resource = (id: string): Resource => {
    const r = template.Resources[id];
    if (!r) throw new AslDefinitionError(`CloudFormation: no resource ${id} in the template`);
    return r;
  };
  const ref = (id: string): string => {
    if (pseudo[id] !== undefined) return pseudo[id]!;
    if (names.refs?.[id] !== undefined) return names.refs[id]!;
    const r = resource(id);
    const arn = ARN_TYPES[r.Type];
    if (arn) return arn(id, n);
    // A bucket name must be lowercase; other names keep the logical id.
    return r.Type === 'AWS::S3::Bucket' ? id.toLowerCase() : id;
  };
  const getAtt = (id: string, attribute: string): string => {
    const r = resource(id);
    const key = `${r.Type}.${attribute}`;
    switch (key) {
      case 'AWS::Lambda::Function.Arn':
        return `arn:${n.partition}:lambda:${n.region}:${n.account}:function:${ref(id)}`;
      case 'AWS::S3::Bucket.Arn':
        return `arn:${n.partition}:s3:::${ref(id)}`;
      case 'AWS::DynamoDB::Table.Arn':
      case 'AWS::DynamoDB::GlobalTable.Arn':
        return `arn:${n.partition}:dynamodb:${n.region}:${n.account}:table/${ref(id)}`;
      case 'AWS::Batch::JobQueue.JobQueueArn':
      case 'AWS::StepFunctions::StateMachine.Arn':
      case 'AWS::SecretsManager::Secret.Id':
        return ref(id);
      case 'AWS::IAM::Role.Arn':
        return `arn:${n.partition}:iam::${n.account}:role/${id}`;
      case 'AWS::Logs::LogGroup.Arn':
        return `arn:${n.partition}:logs:${n.region}:${n.account}:log-group:${id}:*`;
      default:
        throw new AslDefinitionError(`CloudFormation: Fn::GetAtt ${id}.${attribute} (${r.Type}) has no stand-in`);
    }
  };
  const resolve = (v: unknown): Json => {
    if (v === null || typeof v !== 'object') return v as Json;
    if (Array.isArray(v)) return v.map(resolve);
    const keys = Object.keys(v);
    const o = v as Record<string, unknown>;
    if (keys.length === 1 && (keys[0]!.startsWith('Fn::') || keys[0] === 'Ref')) {
      const k = keys[0]!;
      const arg = o[k];
      switch (k) {
        case 'Ref':
          return ref(String(arg));
        case 'Fn::GetAtt': {
          const [id, attribute] = Array.isArray(arg) ? (arg as string[]) : String(arg).split('.');
          return getAtt(id!, attribute!);
        }
        case 'Fn::Join': {
          const [sep, parts] = arg as [string, unknown[]];
          return (resolve(parts) as Json[]).map(String).join(sep);
        }
        case 'Fn::Select': {
          const [index, list] = arg as [unknown, unknown];
          return (resolve(list) as Json[])[Number(resolve(index))]!;
        }
        case 'Fn::Split': {
          const [sep, text] = arg as [string, unknown];
          return String(resolve(text)).split(sep);
        }
        case 'Fn::Sub': {
          const [text, vars] = (Array.isArray(arg) ? arg : [arg, {}]) as [string, Record<string, unknown>];
          return text.replace(/\$\{([^}]+)\}/g, (_m, name: string) => {
            if (vars[name] !== undefined) return String(resolve(vars[name]));
            const [id, attribute] = name.split('.');
            return attribute === undefined ? ref(id!) : getAtt(id!, attribute);
          });
        }
        default:
          throw new AslDefinitionError(`CloudFormation: ${k} has no stand-in`);
      }
    }
    return Object.fromEntries(keys.map((key) => [key, resolve(o[key])]));
  };
  return resolve(value);
}

/** The one state machine of a template, its definition resolved, and the template's Lambda functions. */
export function stateMachineOf(template: TemplateJson, names: CloudFormationNames = {}): SynthesizedStateMachine {
  const machines = Object.entries(template.Resources).filter(([, r]) => r.Type === 'AWS::StepFunctions::StateMachine');
  if (machines.length !== 1) throw new AslDefinitionError(`expected one state machine in the template, found ${machines.length}`);
  const [logicalId, machine] = machines[0]!;
  const text = resolveTemplateValue(machine.Properties?.DefinitionString, template, names);
  if (typeof text !== 'string') throw new AslDefinitionError('DefinitionString does not resolve to a string');
  const functions = new Map<string, SynthesizedFunction>();
  for (const [id, r] of Object.entries(template.Resources)) {
    if (r.Type !== 'AWS::Lambda::Function') continue;
    const p = r.Properties ?? {};
    const variables = resolveTemplateValue((p.Environment as { Variables?: unknown } | undefined)?.Variables ?? {}, template, names) as Record<string, Json>;
    functions.set(id, {
      logicalId: id,
      arn: String(resolveTemplateValue({ 'Fn::GetAtt': [id, 'Arn'] }, template, names)),
      environment: Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, String(v)])),
      timeoutSeconds: Number(p.Timeout ?? 3),
      memoryMb: Number(p.MemorySize ?? 128),
    });
  }
  return { logicalId, arn: String(resolveTemplateValue({ Ref: logicalId }, template, names)), definition: JSON.parse(text) as AslStates, functions };
}
