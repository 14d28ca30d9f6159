import { CfnOutput, Fn, Stack, Tags } from 'aws-cdk-lib';
import type { RemovalPolicy, StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { BEDROCK_BATCH_STACK_OUTPUTS, COST_TAG, GPU_STACK_OUTPUTS, STACK_OUTPUTS } from '../../lib/config/index.js';
import { Analytics } from '../constructs/Analytics.js';
import { CampaignData } from '../constructs/CampaignData.js';
import { BedrockBatch } from '../constructs/BedrockBatch.js';
import { GpuBatch } from '../constructs/GpuBatch.js';
import type { GpuBatchProps } from '../constructs/GpuBatch.js';
import { Operations } from '../constructs/Operations.js';
import { Pipeline } from '../constructs/Pipeline.js';
import { ProviderSecrets } from '../constructs/ProviderSecrets.js';

export interface SondageStackProps extends StackProps {
  readonly removalPolicy?: RemovalPolicy;
  /** Adds the AWS Batch GPU queues for runs_on: gpu models (context `sondage:gpu=true`). */
  readonly gpu?: Pick<GpuBatchProps, 'instanceTypes' | 'image' | 'maxInstances'>;
  /** The worker's reserved concurrency (context `sondage:workerConcurrency`; 0: none). Default FUNCTION_SIZING.worker's. */
  readonly workerConcurrency?: number;
  /** Athena's per-query bytes-scanned cutoff (context `sondage:athenaCutoffGiB`). Default DEFAULT_BYTES_SCANNED_CUTOFF. */
  readonly bytesScannedCutoff?: number;
  /** Adds the Bedrock batch inference service role and the worker's grants (context `sondage:bedrockBatch=true`). */
  readonly bedrockBatch?: boolean;
}

/** The whole deployment: the stack only composes constructs (STYLE.md "CDK constructs"). */
export class SondageStack extends Stack {
  public readonly data: CampaignData;
  public readonly analytics: Analytics;
  public readonly pipeline: Pipeline;
  public readonly gpuBatch?: GpuBatch;
  public readonly bedrockBatch?: BedrockBatch;
  public readonly secrets: ProviderSecrets;
  public readonly operations: Operations;

  constructor(scope: Construct, id: string, props: SondageStackProps = {}) {
    super(scope, id, props);
    this.data = new CampaignData(this, 'CampaignData', props.removalPolicy === undefined ? {} : { removalPolicy: props.removalPolicy });
    this.analytics = new Analytics(this, 'Analytics', {
      bucket: this.data.bucket,
      ...(props.bytesScannedCutoff === undefined ? {} : { bytesScannedCutoff: props.bytesScannedCutoff }),
    });
    this.secrets = new ProviderSecrets(this, 'ProviderSecrets');
    if (props.gpu) this.gpuBatch = new GpuBatch(this, 'GpuBatch', { data: this.data, secrets: this.secrets, ...props.gpu });
    if (props.bedrockBatch) this.bedrockBatch = new BedrockBatch(this, 'BedrockBatch', { data: this.data });
    this.pipeline = new Pipeline(this, 'Pipeline', {
      data: this.data,
      ...(this.bedrockBatch ? { bedrockBatch: this.bedrockBatch } : {}),
      analytics: this.analytics,
      secrets: this.secrets,
      ...(this.gpuBatch ? { gpuBatch: this.gpuBatch } : {}),
      ...(props.workerConcurrency !== undefined ? { workerConcurrency: props.workerConcurrency } : {}),
    });
    // What the CLI's AWS commands read from `cdk deploy --outputs-file` (lib/config STACK_OUTPUTS).
    const outputs: Record<keyof typeof STACK_OUTPUTS, string> = {
      bucket: this.data.bucket.bucketName,
      stateMachineArn: this.pipeline.stateMachine.stateMachineArn,
      ledgerTable: this.data.ledger.tableName,
      budgetTable: this.data.budget.tableName,
      athenaWorkgroup: this.analytics.workgroup.name,
      glueDatabase: this.analytics.databaseName,
    };
    for (const [key, value] of Object.entries(outputs) as [keyof typeof STACK_OUTPUTS, string][]) {
      new CfnOutput(this, STACK_OUTPUTS[key], { value, description: `sondage ${key} (read by the sondage CLI)` });
    }
    if (this.gpuBatch) {
      new CfnOutput(this, GPU_STACK_OUTPUTS.gpuJobQueues, {
        value: Fn.join(',', this.gpuBatch.queues.map((q) => q.queue.jobQueueArn)),
        description: 'sondage GPU job queues (status --aws and stop --aws list and terminate GPU jobs there)',
      });
      new CfnOutput(this, GPU_STACK_OUTPUTS.probeRepository, {
        value: this.gpuBatch.repository.repositoryUri,
        description: 'sondage probe image repository (batch-images/probe/build.sh pushes here)',
      });
    }
    if (this.bedrockBatch) {
      new CfnOutput(this, BEDROCK_BATCH_STACK_OUTPUTS.roleArn, {
        value: this.bedrockBatch.settings.role_arn,
        description: "sondage Bedrock batch service role: a campaign's bedrock_batch.role_arn on this stack",
      });
      new CfnOutput(this, BEDROCK_BATCH_STACK_OUTPUTS.s3Uri, {
        value: this.bedrockBatch.settings.s3_uri,
        description: "sondage Bedrock batch files: a campaign's bedrock_batch.s3_uri on this stack (this prefix or below it)",
      });
    }
    // Alarms, dashboard, AWS Budgets; last, as it watches the functions and queues above.
    this.operations = new Operations(this, 'Operations', {
      stateMachine: this.pipeline.stateMachine,
      athenaWorkgroup: this.analytics.workgroup.name,
      tables: [
        { id: 'LedgerTable', table: this.data.ledger },
        { id: 'BudgetTable', table: this.data.budget },
      ],
      ...Operations.contextProps(this),
    });
    // The cost allocation tag the AWS Budgets budget filters on (activate it once in the Billing console).
    Tags.of(this).add(COST_TAG, this.stackName);
  }
}
