import { Aws, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { IConstruct } from 'constructs';

/**
 * The Bedrock models a campaign may name, as IAM resources: foundation models in any region (a
 * cross-region inference profile routes to the model in another one) and this account's inference
 * profiles in this region. Which models a campaign names is known only when it runs, so the model
 * id is the wildcard; the actions granted on them are not.
 */
export function bedrockModelArns(): string[] {
  return [`arn:${Aws.PARTITION}:bedrock:*::foundation-model/*`, `arn:${Aws.PARTITION}:bedrock:${Aws.REGION}:${Aws.ACCOUNT_ID}:inference-profile/*`];
}

/** Acknowledges cdk-nag's wildcard findings for bedrockModelArns on `scope`, saying `why`. */
export function acknowledgeBedrockModels(scope: IConstruct, why: string): void {
  Validations.of(scope).acknowledge(
    { id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/*]', reason: why },
    { id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:<AWS::Region>:<AWS::AccountId>:inference-profile/*]', reason: why },
  );
}

/** Provider bedrock: Converse is bedrock:InvokeModel, and nothing else, on bedrockModelArns. */
export function grantBedrockConverse(fn: { readonly role?: iam.IRole }): void {
  const role = fn.role;
  if (!role) throw new Error('the worker has no role to grant bedrock:InvokeModel to');
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['bedrock:InvokeModel'], resources: bedrockModelArns() }));
  acknowledgeBedrockModels(role, 'bedrock:InvokeModel only (Converse, provider bedrock): the campaign names its models, or an inference profile, when it runs.');
}
