import { Aws, Validations } from 'aws-cdk-lib';
import type { CfnElement } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import type { IConstruct } from 'constructs';
import { PREFIX } from '../../lib/config/index.js';
import type { BedrockBatchSettings } from '../../lib/config/index.js';
import type { CampaignData } from './CampaignData.js';
import { acknowledgeBedrockModels, bedrockModelArns } from './bedrockModels.js';
import { logicalId } from './logicalId.js';

export interface BedrockBatchProps {
  readonly data: CampaignData;
}

/**
 * Bedrock batch inference on AWS (`mode: batch` on a `provider: bedrock` model; docs/aws.md): the
 * service role Bedrock assumes to read a job's input and write its output, both under the data
 * bucket's PREFIX.bedrockBatch, and the grants that let the worker submit, watch and stop jobs that
 * run as that role and nothing else. Deployed with `-c sondage:bedrockBatch=true`; a stack without
 * it grants no batch action, and its plan refuses such a campaign before anything is spent
 * (lib/run/bedrockBatchChecks.ts).
 *
 * The role and the prefix are the stack's, not the campaign's, because IAM is fixed at deploy time
 * while a campaign names its `bedrock_batch` when it runs: the plan checks that the two agree.
 */
export class BedrockBatch extends Construct {
  /** The service role `bedrock.amazonaws.com` assumes for this account's jobs in this region. */
  public readonly serviceRole: iam.Role;
  /** What a campaign's `bedrock_batch` names on this stack (the plan function's ENV.bedrockBatch). */
  public readonly settings: BedrockBatchSettings;
  readonly #data: CampaignData;

  constructor(scope: Construct, id: string, props: BedrockBatchProps) {
    super(scope, id);
    this.#data = props.data;
    const partition = Aws.PARTITION;
    const jobs = `arn:${partition}:bedrock:${Aws.REGION}:${Aws.ACCOUNT_ID}:model-invocation-job/*`;
    // The confused-deputy guard AWS recommends for this role: only Bedrock, only for this account's
    // batch jobs in this region, may assume it.
    this.serviceRole = new iam.Role(this, 'ServiceRole', {
      description: 'sondage: Amazon Bedrock batch inference jobs read their input and write their output under bedrock-batch/ of the data bucket',
      assumedBy: new iam.ServicePrincipal('bedrock.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID }, ArnLike: { 'aws:SourceArn': jobs } },
      }),
    });
    const bucket = props.data.bucket;
    this.serviceRole.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['s3:GetObject', 's3:PutObject'], resources: [bucket.arnForObjects(`${PREFIX.bedrockBatch}*`)] }));
    this.serviceRole.addToPrincipalPolicy(
      new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [bucket.bucketArn], conditions: { StringLike: { 's3:prefix': [`${PREFIX.bedrockBatch}*`] } } }),
    );
    // A job whose model id is a cross-region inference profile invokes it as this role.
    this.serviceRole.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['bedrock:InvokeModel'], resources: bedrockModelArns() }));
    this.acknowledgeObjects(this.serviceRole, 'Bedrock reads the job input and writes its output');
    acknowledgeBedrockModels(this.serviceRole, 'the service role of batch jobs: a job invokes the model, or the inference profile, the campaign names when it runs');
    this.settings = { role_arn: this.serviceRole.roleArn, s3_uri: `s3://${bucket.bucketName}/${PREFIX.bedrockBatch.replace(/\/$/, '')}` };
  }

  /**
   * The worker's share (lib/providers/bedrock/BedrockBatchClient.ts): create, look up, watch and stop
   * jobs; pass the service role to Bedrock and no other role; the jobs' files under the prefix.
   */
  public grantSubmit(fn: { readonly role?: iam.IRole }): void {
    // The role, not the function: cdk-nag reports on the role's policy, which is not the function's child.
    const grantee = fn.role;
    if (!grantee) throw new Error('the worker has no role to grant Bedrock batch inference to');
    const jobs = `arn:${Aws.PARTITION}:bedrock:${Aws.REGION}:${Aws.ACCOUNT_ID}:model-invocation-job/*`;
    iam.Grant.addToPrincipal({ grantee, actions: ['bedrock:CreateModelInvocationJob'], resourceArns: [...bedrockModelArns(), jobs] });
    iam.Grant.addToPrincipal({ grantee, actions: ['bedrock:GetModelInvocationJob', 'bedrock:StopModelInvocationJob'], resourceArns: [jobs] });
    // ListModelInvocationJobs (finding a crashed submission's job by name) names no resource type.
    iam.Grant.addToPrincipal({ grantee, actions: ['bedrock:ListModelInvocationJobs'], resourceArns: ['*'] });
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['iam:PassRole'],
      resourceArns: [this.serviceRole.roleArn],
      conditions: { StringEquals: { 'iam:PassedToService': 'bedrock.amazonaws.com' } },
    });
    iam.Grant.addToPrincipal({ grantee, actions: ['s3:GetObject', 's3:PutObject'], resourceArns: [this.#data.bucket.arnForObjects(`${PREFIX.bedrockBatch}*`)] });
    this.acknowledgeObjects(grantee, 'the worker uploads a job input and reads its output');
    acknowledgeBedrockModels(grantee, 'bedrock:CreateModelInvocationJob only: the campaign names the model, or the inference profile, when it runs');
    Validations.of(grantee).acknowledge(
      {
        id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:<AWS::Region>:<AWS::AccountId>:model-invocation-job/*]',
        reason: "Bedrock batch jobs of this account and region: create, get and stop; a job's id is known only once it is created.",
      },
      { id: 'AwsSolutions-IAM5[Resource::*]', reason: 'bedrock:ListModelInvocationJobs only, which has no resource type: a crashed submission finds its job by name.' },
    );
  }

  private acknowledgeObjects(scope: IConstruct, why: string): void {
    Validations.of(scope).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${logicalId(this.#data.bucket.node.defaultChild as CfnElement)}.Arn>/${PREFIX.bedrockBatch}*]`,
      reason: `Objects under the ${PREFIX.bedrockBatch} prefix of the campaign bucket only: ${why}; one folder per job, named when it is submitted.`,
    });
  }
}
