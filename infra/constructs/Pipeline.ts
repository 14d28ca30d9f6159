import { Aws, Duration, Stack, Validations } from 'aws-cdk-lib';
import type { CfnElement } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { ENV, PREFIX } from '../../lib/config/index.js';
import { WORKER_RETRY, WORKER_RETRYABLE_ERROR, WORKER_THROTTLE_RETRY } from '../../lib/config/pipeline.js';
import { FUNCTION_SIZING, REPORT_ROUNDS, SHARDS_PER_BATCH } from '../../lib/config/sizing.js';
import type { FunctionSizing } from '../../lib/config/sizing.js';
import type { Analytics } from './Analytics.js';
import type { BedrockBatch } from './BedrockBatch.js';
import { grantBedrockConverse } from './bedrockModels.js';
import type { CampaignData } from './CampaignData.js';
import type { GpuBatch } from './GpuBatch.js';
import { Handler } from './Handler.js';
import type { ProviderSecrets } from './ProviderSecrets.js';
import { logicalId } from './logicalId.js';

/**
 * The Map's manifest reader, granted s3:GetObject on the bucket's `scratch/` only (the plan writes
 * every manifest there); S3JsonItemReader's own grant is the whole bucket.
 */
class ScratchManifestReader extends sfn.S3JsonItemReader {
  constructor(private readonly scratch: s3.IBucket, key: string) {
    super({ bucket: scratch, key });
  }
  public override providePolicyStatements(): iam.PolicyStatement[] {
    return [new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [this.scratch.arnForObjects(`${PREFIX.scratch}*`)] })];
  }
}

/** The Map's result writer, granted what ResultWriterV2 asks for under its prefix only (its own grant is the whole bucket). */
class ScratchResultWriter extends sfn.ResultWriterV2 {
  constructor(private readonly scratch: s3.IBucket, private readonly under: string) {
    super({ bucket: scratch, prefix: under });
  }
  public override providePolicyStatements(): iam.PolicyStatement[] {
    return [
      new iam.PolicyStatement({
        actions: ['s3:PutObject', 's3:GetObject', 's3:ListMultipartUploadParts', 's3:AbortMultipartUpload'],
        resources: [this.scratch.arnForObjects(`${this.under}*`)],
      }),
    ];
  }
}

/** The worker's sizing with `reserved` concurrency; 0 reserves none (a reserved concurrency of 0 would stop the function). */
function workerSizing(reserved: number): FunctionSizing {
  const { reservedConcurrency: _default, ...rest } = FUNCTION_SIZING.worker;
  return reserved === 0 ? rest : { ...rest, reservedConcurrency: reserved };
}

export interface PipelineProps {
  readonly data: CampaignData;
  readonly analytics: Analytics;
  /** Shards handed to one worker invocation (ItemBatcher). Default SHARDS_PER_BATCH (lib/config/sizing.ts). */
  readonly shardsPerBatch?: number;
  /**
   * The worker's reserved concurrency, the ceiling on its copies whatever a campaign asks for
   * (context `sondage:workerConcurrency`). Default FUNCTION_SIZING.worker's; 0 reserves none.
   */
  readonly workerConcurrency?: number;
  /** When present, the GPU shards of each wave (`$.plan.wave.gpu`) run as a Batch array job beside the Map. */
  readonly gpuBatch?: GpuBatch;
  /** When present, the worker may run Bedrock batch inference jobs as its service role (`-c sondage:bedrockBatch=true`). */
  readonly bedrockBatch?: BedrockBatch;
  /** Provider keys; read by the plan (to check them) and the worker, nothing else. */
  readonly secrets: ProviderSecrets;
}

/**
 * The Standard state machine of one campaign execution, a loop over the waves of the battery's
 * phase graph (DESIGN.md "The flow of one campaign"): (inputs defaulted) → Plan wave → if every
 * phase has run: Athena (SQL stage) → Report; else the wave's shards (a Distributed Map of worker
 * Lambdas, and with a GPU queue a Batch array job beside it) → Plan wave again, told the phases
 * run so far. Every step is caught by a state that records the failure in the ledger. The plan
 * Lambda writes one shard manifest per wave to `scratch/`; a re-started execution resumes because
 * the plan lists only shards with work left. No phase name appears here: the plan decides.
 */
export class Pipeline extends Construct {
  public readonly stateMachine: sfn.StateMachine;
  public readonly plan: Handler;
  public readonly worker: Handler;
  public readonly report: Handler;
  public readonly recordFailure: Handler;

  constructor(scope: Construct, id: string, props: PipelineProps) {
    super(scope, id);
    const { data, analytics } = props;
    const environment = {
      [ENV.bucket]: data.bucket.bucketName,
      [ENV.ledgerTable]: data.ledger.tableName,
      [ENV.budgetTable]: data.budget.tableName,
      [ENV.glueDatabase]: analytics.databaseName,
      [ENV.athenaWorkgroup]: analytics.workgroup.name,
    };
    const withKeys = { ...environment, [ENV.providerSecretArn]: props.secrets.secret.secretArn };
    // The plan fans out no more worker copies than the worker may run at once.
    const copiesEnv = props.workerConcurrency === undefined ? withKeys : { ...withKeys, [ENV.workerCopies]: String(props.workerConcurrency) };
    // The Bedrock batch role and prefix: the plan refuses a campaign's bedrock_batch that names others.
    const planEnv = props.bedrockBatch ? { ...copiesEnv, [ENV.bedrockBatch]: Stack.of(this).toJsonString(props.bedrockBatch.settings) } : copiesEnv;

    this.plan = new Handler(this, 'Plan', {
      name: 'plan',
      description: 'sondage: registers items in the ledger, writes the shard manifests',
      sizing: FUNCTION_SIZING.plan,
      // The GPU queues by instance type and capacity: the plan routes a runs_on: gpu model to its own.
      environment: props.gpuBatch ? { ...planEnv, [ENV.gpuQueues]: Stack.of(this).toJsonString(props.gpuBatch.queueMap()) } : planEnv,
    });
    this.worker = new Handler(this, 'Worker', {
      name: 'worker',
      description: 'sondage: runs a batch of shards against a model API under the budget',
      // 0: none reserved (the account's pool); the plan then fans out UNRESERVED_WORKER_COPIES at most.
      sizing: props.workerConcurrency === undefined ? FUNCTION_SIZING.worker : workerSizing(props.workerConcurrency),
      environment: withKeys,
    });
    this.report = new Handler(this, 'Report', {
      name: 'report',
      description: 'sondage: statistics over the Athena results, report to S3',
      sizing: FUNCTION_SIZING.report,
      environment,
    });
    this.recordFailure = new Handler(this, 'RecordFailure', {
      name: 'record-failure',
      description: 'sondage: records a failed execution step in the ledger',
      sizing: FUNCTION_SIZING.recordFailure,
      environment,
    });

    // Each function is granted what its handler calls, no more (test/infra/SondageStack.test.ts).
    // The plan writes the cap; the worker's budget writes cannot (CampaignData.grantWorker).
    data.grantPlan(this.plan.fn);
    data.grantWorker(this.worker.fn);
    props.secrets.grantRead(this.plan.fn);
    props.secrets.grantRead(this.worker.fn);
    grantBedrockConverse(this.worker.fn);
    props.bedrockBatch?.grantSubmit(this.worker.fn);
    // The report reads the uploaded campaign and the Parquet listing, writes its result files, no ledger.
    data.grantReadCampaigns(this.report.fn);
    data.grantWriteResults(this.report.fn);
    data.grantReadOverrun(this.report.fn);
    data.acknowledgeResultsGrant(this.report);
    // The report runs the rest of the SQL stage on Athena (lib/store/AthenaQueryable.ts).
    analytics.grantQuery(this.report.fn, data.bucket);
    // record-failure writes one ledger item per failure: nothing of the bucket or the budget.
    data.grantRecordFailures(this.recordFailure.fn);
    for (const h of [this.plan, this.worker]) data.acknowledgePrefixGrants(h);

    const failed = new sfn.Fail(this, 'Failed', { error: 'SondageFailed', causePath: '$.failure.Cause' });
    const record = this.invoke('RecordFailureStep', 'Record failure', this.recordFailure.fn, sfn.JsonPath.DISCARD, {
      campaign: sfn.JsonPath.stringAt('$.campaign'),
      execution: sfn.JsonPath.stringAt('$$.Execution.Id'),
      failure: sfn.JsonPath.objectAt('$.failure'),
    });
    record.addCatch(failed, { resultPath: sfn.JsonPath.DISCARD });
    record.next(failed);
    const onFailure = { resultPath: '$.failure' };

    const planStep = this.invoke('PlanStep', 'Plan wave', this.plan.fn, '$.plan', {
      campaign: sfn.JsonPath.stringAt('$.campaign'),
      execution: sfn.JsonPath.stringAt('$$.Execution.Name'),
      // A boolean at run time (the path is only read; stringAt writes the ".$" key).
      retryFailed: sfn.JsonPath.stringAt('$.retryFailed'),
      allowPartial: sfn.JsonPath.stringAt('$.allowPartial'),
      phasesRun: sfn.JsonPath.listAt('$.phasesRun'),
    });
    planStep.addCatch(record, onFailure);

    const map = new sfn.DistributedMap(this, 'WaveMap', {
      stateName: 'Run the wave\'s shards',
      itemReader: new ScratchManifestReader(data.bucket, sfn.JsonPath.stringAt('$.plan.wave.lambda.manifestKey')),
      maxConcurrencyPath: '$.plan.wave.lambda.maxConcurrency',
      toleratedFailurePercentagePath: '$.plan.wave.lambda.toleratedFailurePercentage',
      itemBatcher: new sfn.ItemBatcher({
        maxItemsPerBatch: props.shardsPerBatch ?? SHARDS_PER_BATCH,
        // ItemBatcher renders BatchInput as given (no JsonPath tokens): the ".$" keys are written out.
        // pollSeconds rides along for the item processor's Wait state (the worker logs it as its next call);
        // retryFailed for the worker's partition spec (`sondage start --aws --retry-failed`); copies
        // for each worker's share of a model's rate limits.
        batchInput: {
          'campaign.$': '$.campaign',
          'execution.$': '$$.Execution.Name',
          'pollSeconds.$': '$.plan.wave.lambda.pollSeconds',
          'retryFailed.$': '$.retryFailed',
          'copies.$': '$.plan.wave.lambda.maxConcurrency',
        },
      }),
      resultWriterV2: new ScratchResultWriter(data.bucket, `${PREFIX.scratch}map-results/`),
      resultPath: sfn.JsonPath.DISCARD,
    });
    map.itemProcessor(this.shardLoop());
    // Inside the GPU Parallel a branch cannot reach the failure state: the Parallel catches instead.
    if (!props.gpuBatch) map.addCatch(record, onFailure);

    // A CustomState rather than tasks.AthenaStartQueryExecution: that task grants s3:GetObject on
    // every bucket and glue:Create/Delete* on the database; analytics.grantQuery grants only what
    // this query needs.
    const sql = new sfn.CustomState(this, 'SqlStep', {
      stateJson: {
        Type: 'Task',
        Resource: `arn:${Aws.PARTITION}:states:::athena:startQueryExecution.sync`,
        Parameters: {
          'QueryString.$': '$.plan.analysis.queryString',
          WorkGroup: analytics.workgroup.name,
          QueryExecutionContext: { Database: analytics.databaseName },
          // No result reuse: an execution analyses what it has just written (a --retry-failed rerun
          // within the hour would be answered from the previous run's result, without its items).
          // The report adopts this query's execution by id, so nothing is scanned twice.
        },
        ResultPath: '$.sql',
        Retry: [
          {
            ErrorEquals: ['Athena.TooManyRequestsException', 'Athena.InternalServerException'],
            IntervalSeconds: 5,
            MaxAttempts: 5,
            BackoffRate: 2,
            JitterStrategy: 'FULL',
          },
        ],
      },
    });
    sql.addCatch(record, onFailure);

    // The report waits on Athena only while its invocation has time (functions/report/handler.ts):
    // it answers `again` with the queries it started, and is invoked again after a Wait with that
    // answer as its progress, at most REPORT_ROUNDS.maxRounds times (then it stops the query still
    // running and fails naming it, caught below). Its first round starts from no progress.
    const reportStart = new sfn.Pass(this, 'ReportStart', {
      stateName: 'Report: no round yet',
      result: sfn.Result.fromObject({ round: 0, queries: {} }),
      resultPath: '$.report',
    });
    const reportStep = this.invoke('ReportStep', 'Report', this.report.fn, '$.report', {
      campaign: sfn.JsonPath.stringAt('$.campaign'),
      queryExecutionId: sfn.JsonPath.stringAt('$.sql.QueryExecution.QueryExecutionId'),
      maxRounds: REPORT_ROUNDS.maxRounds,
      progress: sfn.JsonPath.objectAt('$.report'),
    });
    reportStep.addCatch(record, onFailure);
    const reportWait = new sfn.Wait(this, 'ReportWait', {
      stateName: 'Wait for the analysis queries',
      time: sfn.WaitTime.secondsPath('$.report.waitSeconds'),
    });
    const reportAgain = sfn.Condition.and(sfn.Condition.isPresent('$.report.again'), sfn.Condition.booleanEquals('$.report.again', true));
    const reportLoop = new sfn.Choice(this, 'ReportAgain', { stateName: 'Analysis queries still running?' })
      .when(reportAgain, reportWait.next(reportStep))
      .otherwise(new sfn.Succeed(this, 'Done'));

    // The Lambda half of a wave: the Map, unless the wave has no Lambda shard.
    const lambdaShards = new sfn.Choice(this, 'AnyLambdaShards', { stateName: 'Any Lambda shards?' })
      .when(sfn.Condition.numberGreaterThan('$.plan.wave.lambda.shardCount', 0), map)
      .otherwise(new sfn.Pass(this, 'NoLambdaShards', { stateName: 'No Lambda shards in this wave' }))
      .afterwards();
    let wave: sfn.INextable & sfn.IChainable = lambdaShards;
    if (props.gpuBatch) {
      const both = new sfn.Parallel(this, 'WaveBranches', { stateName: 'Run the wave', resultPath: sfn.JsonPath.DISCARD });
      both.branch(lambdaShards).branch(this.gpuJobs(props.gpuBatch));
      both.addCatch(record, onFailure);
      wave = both;
    }

    // The phases run so far ride along: the next plan is told them (an absent path would fail the read).
    const nextWave = new sfn.Pass(this, 'NextWave', { stateName: 'Next wave', inputPath: '$.plan.phasesRun', resultPath: '$.phasesRun' });
    const allRun = new sfn.Choice(this, 'AllPhasesRun', { stateName: 'Every phase run?' })
      .when(sfn.Condition.booleanEquals('$.plan.done', true), sql)
      .otherwise(wave);
    wave.next(nextWave);
    nextWave.next(planStep);

    // A path that is absent fails the state that reads it: an input without retryFailed or
    // allowPartial (an older CLI, an execution started by hand) gets false here, and phasesRun
    // starts empty, before the plan and the map read them.
    const retryDefault = new sfn.Pass(this, 'RetryFailedDefault', { stateName: 'Retry failed: default false', result: sfn.Result.fromBoolean(false), resultPath: '$.retryFailed' });
    const partialDefault = new sfn.Pass(this, 'AllowPartialDefault', { stateName: 'Allow partial: default false', result: sfn.Result.fromBoolean(false), resultPath: '$.allowPartial' });
    const startWithDefaults = new sfn.Pass(this, 'PhasesRunStart', { stateName: 'No phase run yet', result: sfn.Result.fromArray([]), resultPath: '$.phasesRun' });
    const partialGiven = new sfn.Choice(this, 'AllowPartialGiven', { stateName: 'Allow partial given?' })
      .when(sfn.Condition.isPresent('$.allowPartial'), startWithDefaults)
      .otherwise(partialDefault);
    retryDefault.next(partialGiven);
    partialDefault.next(startWithDefaults);
    startWithDefaults.next(planStep);
    const definition = new sfn.Choice(this, 'RetryFailedGiven', { stateName: 'Retry failed given?' })
      .when(sfn.Condition.isPresent('$.retryFailed'), partialGiven)
      .otherwise(retryDefault);
    planStep.next(allRun);
    sql.next(reportStart).next(reportStep).next(reportLoop);

    const logGroup = new logs.LogGroup(this, 'ExecutionLogs', { retention: logs.RetentionDays.THREE_MONTHS });
    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      stateMachineName: `sondage-${Stack.of(this).stackName}`,
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromChainable(definition),
      timeout: Duration.days(7),
      tracingEnabled: true,
      // Execution data holds prompts: keep it out of the logs.
      logs: { destination: logGroup, level: sfn.LogLevel.ALL, includeExecutionData: false },
    });
    analytics.grantQuery(this.stateMachine, data.bucket);
    if (props.gpuBatch) {
      props.gpuBatch.grantSubmitSync(this.stateMachine);
      Validations.of(this.stateMachine).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:batch:<AWS::Region>:<AWS::AccountId>:job/*]',
        reason: 'batch:TerminateJob only, on jobs of this account and region: a stopped execution terminates the GPU job it submitted, whose id is known only at run time.',
      });
    }
    Validations.of(this.stateMachine).acknowledge(
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'Only the CloudWatch Logs delivery actions (logs:*LogDelivery, PutResourcePolicy, Describe*) and X-Ray actions that Step Functions logging and tracing require' +
          (props.gpuBatch ? ', and batch:DescribeJobs, which submitJob.sync polls' : '') +
          '; none of them supports resource-level permissions.',
      },
      ...[this.plan, this.worker, this.report, this.recordFailure].map((h) => ({
        id: `AwsSolutions-IAM5[Resource::<${logicalId(h.fn.node.defaultChild as CfnElement)}.Arn>:*]`,
        reason: 'Versions and aliases of this one function (the ":*" qualifier that LambdaInvoke grants), no other function.',
      })),
      {
        id: `AwsSolutions-IAM5[Resource::<${logicalId(data.bucket.node.defaultChild as CfnElement)}.Arn>/${PREFIX.scratch}*]`,
        reason: 'The Distributed Map ItemReader reads the shard manifest whose key the plan returns at run time, always under scratch/: s3:GetObject there only.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${logicalId(data.bucket.node.defaultChild as CfnElement)}.Arn>/${PREFIX.scratch}map-results/*]`,
        reason: 'The Distributed Map ResultWriter writes its run results (object names chosen by Step Functions) under scratch/map-results/ only.',
      },
      ...['', '/*'].map((suffix) => ({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:{"Fn::Select":[6,{"Fn::Split":[":",{"Ref":"${logicalId(this.stateMachine.node.defaultChild as CfnElement)}"}]}]}${suffix}:*]`,
        reason: 'Executions (and Distributed Map child executions) of this state machine only, whose names are chosen at run time.',
      })),
    );
  }

  /**
   * A state that invokes `fn` (with `payload`, or else the state's input) and keeps only the
   * function's answer, at `resultPath`. Lambda's service errors (throttling, a function still
   * starting) are retried as LambdaInvoke does by default.
   */
  private invoke(id: string, stateName: string, fn: tasks.LambdaInvokeProps['lambdaFunction'], resultPath: string, payload?: Record<string, unknown>): tasks.LambdaInvoke {
    return new tasks.LambdaInvoke(this, id, {
      stateName,
      lambdaFunction: fn,
      ...(payload !== undefined ? { payload: sfn.TaskInput.fromObject(payload) } : {}),
      payloadResponseOnly: true,
      retryOnServiceExceptions: true,
      resultPath,
    });
  }

  /**
   * The item processor of a wave's Map: invoke the worker with the
   * batch of shards; while it answers `again` (items left when its time ran short, or provider
   * batches submitted and not yet collected) wait the plan's `pollSeconds` and invoke it again with
   * its previous answer at `$.result` (WorkerEvent), whose `turns` the worker counts: past
   * MAX_WORKER_TURNS (lib/config/pipeline.ts) it fails the batch. One loop serves sync shards cut short by the
   * Lambda timeout and provider-batch shards (submit, then poll) alike. Child executions are Standard: a provider batch may
   * take up to 24 h, past Express's 5 minutes.
   */
  private shardLoop(): sfn.IChainable {
    const invoke = this.invoke('WaveShards', 'Run a batch of shards', this.worker.fn, '$.result');
    // Reserved concurrency throttles what runs past it: a Map restarted while old children still
    // run, or two campaigns at once, each Map sized to the whole reservation (the plan cannot see
    // the other execution). A throttled invocation never started, so waiting for a slot is always
    // safe: up to a minute between tries, about 40 minutes in all, so the two share the reservation
    // first come, first served, instead of failing batches (WORKER_THROTTLE_RETRY).
    invoke.addRetry({
      errors: ['Lambda.TooManyRequestsException'],
      interval: Duration.seconds(WORKER_THROTTLE_RETRY.intervalSeconds),
      backoffRate: WORKER_THROTTLE_RETRY.backoffRate,
      maxDelay: Duration.seconds(WORKER_THROTTLE_RETRY.maxDelaySeconds),
      maxAttempts: WORKER_THROTTLE_RETRY.maxAttempts,
      jitterStrategy: sfn.JitterType.FULL,
    });
    // S3 or DynamoDB throttling, a server fault, a broken connection past the SDK's retries: the
    // worker names it WORKER_RETRYABLE_ERROR only after its salvage committed what the failed shard
    // journaled and released its reservations, so the batch, invoked again, asks nothing twice.
    // A killed runtime (Runtime.ExitError, Runtime.OutOfMemory, Sandbox.Timedout) is not retried
    // here: its reservations are held under this execution and its last part may be uploaded
    // uncommitted; only the next execution (whose plan bills the one and whose worker adopts the
    // other) can settle them without paying or counting twice. It goes to the give-up step.
    invoke.addRetry({
      errors: [WORKER_RETRYABLE_ERROR],
      interval: Duration.seconds(WORKER_RETRY.intervalSeconds),
      backoffRate: WORKER_RETRY.backoffRate,
      maxAttempts: WORKER_RETRY.maxAttempts,
      jitterStrategy: sfn.JitterType.FULL,
    });
    const wait = new sfn.Wait(this, 'WaveWait', {
      stateName: 'Wait before invoking again',
      time: sfn.WaitTime.secondsPath('$.BatchInput.pollSeconds'),
    });
    const settled = new sfn.Succeed(this, 'WaveSettled', { stateName: 'Batch settled', outputPath: '$.result' });
    const again = sfn.Condition.and(sfn.Condition.isPresent('$.result.again'), sfn.Condition.booleanEquals('$.result.again', true));
    // A batch whose invocation failed after its retries: the worker, invoked once more with the
    // failure (WorkerEvent.failure), records the batch's pending items failed and the failure in
    // the ledger; then the child fails, and the Map's tolerance (aws.tolerated_failure_percentage) decides.
    const shardFailed = new sfn.Fail(this, 'WaveShardsFailed', { stateName: 'Batch failed', error: 'ShardFailed', causePath: '$.failure.Cause' });
    const giveUp = this.invoke('WaveGiveUp', 'Record the batch failed', this.worker.fn, sfn.JsonPath.DISCARD);
    giveUp.addCatch(shardFailed, { resultPath: sfn.JsonPath.DISCARD });
    giveUp.next(shardFailed);
    invoke.addCatch(giveUp, { resultPath: '$.failure' });
    return invoke.next(
      new sfn.Choice(this, 'WaveAgain', { stateName: 'More work in this batch?' })
        .when(again, wait.next(invoke))
        .otherwise(settled),
    );
  }

  /**
   * The GPU half of a wave: one AWS Batch job per runs_on: gpu model with shards in it (the plan's
   * `$.plan.wave.gpu.jobs`, none when the wave has no GPU shard), all at once, each waited for
   * with `submitJob.sync`. A job is an array job, one child per group of shards (about an hour of
   * work, one model load); AWS Batch takes arrays of 2 to 10,000 only, so a job of one group is a
   * plain job (its environment, from the plan, names group 0). Batch retries a failed or reclaimed
   * child (the job definition's retry strategy); the job fails the wave only when a child has used
   * its attempts, and a re-started execution resumes from the ledger.
   *
   * CustomState rather than tasks.BatchSubmitJob: the queue comes from the plan at run time, and
   * BatchSubmitJob then grants batch:SubmitJob on every queue and job definition ("*");
   * GpuBatch.grantSubmitSync grants this stack's queues and job definition only.
   */
  private gpuJobs(gpu: GpuBatch): sfn.IChainable {
    // A CustomState's id is its state name.
    const submit = (id: string, array: boolean) =>
      new sfn.CustomState(this, id, {
        stateJson: {
          Type: 'Task',
          Resource: `arn:${Aws.PARTITION}:states:::batch:submitJob.sync`,
          Parameters: {
            'JobName.$': '$.job.jobName',
            'JobQueue.$': '$.job.jobQueue',
            JobDefinition: gpu.jobDefinition.jobDefinitionArn,
            ...(array ? { ArrayProperties: { 'Size.$': '$.job.children' } } : {}),
            ContainerOverrides: { 'ResourceRequirements.$': '$.job.resources', 'Environment.$': '$.job.environment' },
          },
          ResultPath: null,
        },
      });
    const byCount = new sfn.Choice(this, 'ByGpuChildCount', { stateName: 'Array job or single job?' })
      .when(sfn.Condition.numberGreaterThanEquals('$.job.children', 2), submit('GpuArrayJob', true))
      .otherwise(submit('GpuSingleJob', false));
    const jobs = new sfn.Map(this, 'GpuJobs', {
      stateName: "Run the wave's GPU jobs",
      itemsPath: '$.plan.wave.gpu.jobs',
      itemSelector: { 'job.$': '$$.Map.Item.Value' },
      resultPath: sfn.JsonPath.DISCARD,
    });
    jobs.itemProcessor(byCount);
    return jobs;
  }

  /** Lets a principal (the CLI's role) start, watch and stop executions. */
  public grantOperate(grantee: iam.IGrantable): void {
    this.stateMachine.grantStartExecution(grantee);
    this.stateMachine.grantRead(grantee);
    this.stateMachine.grantExecution(grantee, 'states:StopExecution');
  }
}
