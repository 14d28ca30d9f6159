import { Duration, RemovalPolicy, Size, Stack, Validations } from 'aws-cdk-lib';
import type { CfnElement } from 'aws-cdk-lib';
import * as batch from 'aws-cdk-lib/aws-batch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecr from 'aws-cdk-lib/aws-ecr';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { DEFAULT_GPU_IMAGE_TAG, DEFAULT_GPU_INSTANCE_TYPES, DEFAULT_GPU_MAX_INSTANCES, ENV, GPU_ENV, gpuQueueKey, PREFIX } from '../../lib/config/index.js';
import { GPU_JOB } from '../../lib/config/sizing.js';
import { SondageError } from '../../lib/errors.js';
import { NOT_RETRIED_EXIT_CODES } from '../../lib/gpu/probeJob.js';
import { GPU_CAPACITIES, GPU_INSTANCE_TYPES, gpuInstance, jobResources } from '../../lib/gpu/instances.js';
import type { GpuCapacity } from '../../lib/gpu/instances.js';
import type { CampaignData } from './CampaignData.js';
import { logicalId } from './logicalId.js';
import type { ProviderSecrets } from './ProviderSecrets.js';

export interface GpuBatchProps {
  readonly data: CampaignData;
  /** The provider secret: a GPU job reads HF_TOKEN from it for weights on the Hugging Face Hub. */
  readonly secrets: ProviderSecrets;
  /** Instance types to deploy queues for (lib/gpu/gpuInstances.json). Default DEFAULT_GPU_INSTANCE_TYPES. */
  readonly instanceTypes?: readonly string[];
  /** Tag or `sha256:` digest of the probe image in this stack's repository. Default DEFAULT_GPU_IMAGE_TAG. */
  readonly image?: string;
  /** Most instances of one type and capacity at once. Default DEFAULT_GPU_MAX_INSTANCES. */
  readonly maxInstances?: number;
}

/** One queue of the stack: an instance type and a capacity, over a compute environment of its own. */
export interface GpuQueue {
  readonly instanceType: string;
  readonly capacity: GpuCapacity;
  readonly queue: batch.JobQueue;
}

/** Root volume of a GPU instance: the probe image (~10 GB compressed), the weights and vLLM's caches. */
const ROOT_VOLUME_GIB = 200;
/** The instance folder every job mounts at the same path (GPU_ENV.instanceDir). */
const INSTANCE_DIR = '/var/lib/sondage-instance';
/** /dev/shm of the container: PyTorch and NCCL share tensors through it across tensor-parallel workers. */
const SHARED_MEMORY_GIB = 4;

/**
 * Open-weight models on AWS Batch (docs/gpu.md): for each
 * instance type, a Spot and an on-demand compute environment (the NVIDIA ECS AMI on Amazon Linux
 * 2023, scaling to zero) with a queue each, so that a model runs on exactly the instance type its
 * campaign entry names and is priced as the plan priced it; one job definition whose container is
 * the probe image (batch-images/probe: vLLM + the worker), its resources overridden per model by
 * the plan; and the ECR repository that image is pushed to.
 *
 * The image is not built here: `cdk synth` and `cdk deploy` need no Docker, and the job definition
 * names a tag or digest in the repository that `batch-images/probe/build.sh` pushes to (README
 * "Open-weight models on AWS Batch GPU"). A job whose image is missing fails fast on
 * CannotPullContainerError, which is not retried.
 */
export class GpuBatch extends Construct {
  public readonly vpc: ec2.Vpc;
  public readonly repository: ecr.Repository;
  public readonly queues: readonly GpuQueue[];
  public readonly jobDefinition: batch.EcsJobDefinition;
  public readonly jobRole: iam.Role;

  constructor(scope: Construct, id: string, props: GpuBatchProps) {
    super(scope, id);
    const types = [...new Set(props.instanceTypes ?? DEFAULT_GPU_INSTANCE_TYPES)];
    const unknown = types.filter((t) => !(GPU_INSTANCE_TYPES as readonly string[]).includes(t));
    if (types.length === 0 || unknown.length > 0) {
      throw new SondageError(
        `GpuBatch: ${unknown.length > 0 ? `unknown instance type(s) ${unknown.join(', ')}` : 'no instance type'}; ` +
          `pass -c sondage:gpuInstanceTypes=<types, comma-separated> from ${GPU_INSTANCE_TYPES.join(', ')}`,
      );
    }
    const maxInstances = props.maxInstances ?? DEFAULT_GPU_MAX_INSTANCES;
    if (!Number.isInteger(maxInstances) || maxInstances < 1) throw new SondageError(`GpuBatch: maxInstances must be a whole number ≥ 1, got ${String(maxInstances)}`);

    const flowLogs = new logs.LogGroup(this, 'FlowLogs', { retention: logs.RetentionDays.ONE_MONTH });
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      maxAzs: 2,
      // One NAT: ECR's API, CloudWatch Logs, Secrets Manager, and the Hugging Face Hub for `gpu.hub`
      // models. Weights from the bucket, image layers (ECR keeps them in S3) and the ledger go through
      // the gateway endpoints below, which cost nothing per GB.
      natGateways: 1,
      subnetConfiguration: [
        { name: 'public', subnetType: ec2.SubnetType.PUBLIC },
        { name: 'private', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      ],
      flowLogs: { all: { destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogs) } },
    });
    this.vpc.addGatewayEndpoint('S3', { service: ec2.GatewayVpcEndpointAwsService.S3 });
    this.vpc.addGatewayEndpoint('DynamoDb', { service: ec2.GatewayVpcEndpointAwsService.DYNAMODB });

    this.repository = new ecr.Repository(this, 'ProbeImages', {
      imageScanOnPush: true,
      encryption: ecr.RepositoryEncryption.AES_256,
      lifecycleRules: [{ description: 'Keep the last 10 probe images', maxImageCount: 10 }],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const launchTemplate = new ec2.LaunchTemplate(this, 'Instances', {
      requireImdsv2: true,
      blockDevices: [{ deviceName: '/dev/xvda', volume: ec2.BlockDeviceVolume.ebs(ROOT_VOLUME_GIB, { encrypted: true, volumeType: ec2.EbsDeviceVolumeType.GP3 }) }],
    });

    const queues: GpuQueue[] = [];
    for (const type of types) {
      const inst = gpuInstance(type);
      for (const capacity of GPU_CAPACITIES) {
        const name = `${type.replace('.', '-')}-${capacity}`;
        const spot = capacity === 'spot';
        const compute = new batch.ManagedEc2EcsComputeEnvironment(this, `Compute-${name}`, {
          vpc: this.vpc,
          vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
          spot,
          allocationStrategy: spot ? batch.AllocationStrategy.SPOT_PRICE_CAPACITY_OPTIMIZED : batch.AllocationStrategy.BEST_FIT_PROGRESSIVE,
          useOptimalInstanceClasses: false,
          instanceTypes: [new ec2.InstanceType(type)],
          images: [{ imageType: batch.EcsMachineImageType.ECS_AL2023_NVIDIA }],
          launchTemplate,
          minvCpus: 0,
          maxvCpus: maxInstances * inst.vcpus,
        });
        // A stated idle time: Batch terminates an instance this long after its last job (ComputeScalingPolicy),
        // and each job charges up to it (lib/gpu/instanceTime.ts IDLE_TAIL_SECONDS). The L2 construct does not expose it.
        (compute.node.defaultChild as batch.CfnComputeEnvironment).addPropertyOverride('ComputeResources.ScalingPolicy', {
          MinScaleDownDelayMinutes: GPU_JOB.scaleDownDelayMinutes,
        });
        Validations.of(compute).acknowledge({
          id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonEC2ContainerServiceforEC2Role]',
          reason:
            'The instance role of ECS container instances: AWS maintains it for registering with the cluster and pulling images; the job itself runs under JobRole.',
        });
        const queue = new batch.JobQueue(this, `Queue-${name}`, { computeEnvironments: [{ computeEnvironment: compute, order: 1 }] });
        queues.push({ instanceType: type, capacity, queue });
      }
    }
    this.queues = queues;

    this.jobRole = new iam.Role(this, 'JobRole', { assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com') });
    // The campaign's objects and the ledger (as a Lambda worker), the weights (read only), the provider secret (HF_TOKEN).
    props.data.grantWorker(this.jobRole);
    props.data.acknowledgePrefixGrants(this.jobRole);
    iam.Grant.addToPrincipal({ grantee: this.jobRole, actions: ['s3:GetObject'], resourceArns: [props.data.bucket.arnForObjects(`${PREFIX.weights}*`)] });
    props.secrets.grantRead(this.jobRole);
    Validations.of(this.jobRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${logicalId(props.data.bucket.node.defaultChild as CfnElement)}.Arn>/${PREFIX.weights}*]`,
      reason: 'The model files under weights/ in the campaign bucket, read only: a GPU job downloads the files of its gpu.weights_prefix.',
    });

    const jobLogs = new logs.LogGroup(this, 'JobLogs', { retention: logs.RetentionDays.ONE_MONTH });
    const defaults = jobResources(types[0]!);
    const container = new batch.EcsEc2ContainerDefinition(this, 'Container', {
      image: ecs.ContainerImage.fromEcrRepository(this.repository, props.image ?? DEFAULT_GPU_IMAGE_TAG),
      // Overridden per model by the plan (GpuJob.resources): its GPUs and their share of the instance.
      cpu: defaults.vcpus,
      memory: Size.mebibytes(defaults.memoryMib),
      gpu: defaults.gpus,
      jobRole: this.jobRole,
      environment: {
        // The SDK's region: an ECS task on EC2 is not told it otherwise.
        AWS_REGION: Stack.of(this).region,
        [ENV.bucket]: props.data.bucket.bucketName,
        [ENV.ledgerTable]: props.data.ledger.tableName,
        [ENV.budgetTable]: props.data.budget.tableName,
        [ENV.providerSecretArn]: props.secrets.secret.secretArn,
        [GPU_ENV.deadlineSeconds]: String(GPU_JOB.attemptTimeoutSeconds - GPU_JOB.deadlineMarginSeconds),
        [GPU_ENV.instanceDir]: INSTANCE_DIR,
      },
      // A folder of the instance, shared by the jobs it runs one after another: each records up to when
      // the instance was charged, so the next is charged from there, not from the boot (lib/gpu/instanceClock.ts).
      volumes: [batch.EcsVolume.host({ name: 'instance', hostPath: INSTANCE_DIR, containerPath: INSTANCE_DIR })],
      // tini as PID 1 hands SIGTERM to the worker, which commits before the 30 s ECS gives it.
      linuxParameters: new batch.LinuxParameters(this, 'Linux', { initProcessEnabled: true, sharedMemorySize: Size.gibibytes(SHARED_MEMORY_GIB) }),
      logging: ecs.LogDriver.awsLogs({ streamPrefix: 'gpu', logGroup: jobLogs }),
    });
    Validations.of(container).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Only ecr:GetAuthorizationToken, which has no resource-level permissions; image pulls are scoped to the probe repository.',
    });
    // Batch reads the rules in order and takes the first that matches (at most five). Exit codes: lib/gpu/probeJob.ts EXIT_CODES;
    // a job that stopped itself with items left (interrupted) is retried by the last rule, and resumes.
    this.jobDefinition = new batch.EcsJobDefinition(this, 'JobDefinition', {
      container,
      retryAttempts: GPU_JOB.attempts,
      retryStrategies: [
        batch.RetryStrategy.of(batch.Action.RETRY, batch.Reason.SPOT_INSTANCE_RECLAIMED),
        batch.RetryStrategy.of(batch.Action.EXIT, batch.Reason.CANNOT_PULL_CONTAINER),
        ...NOT_RETRIED_EXIT_CODES.map((code) => batch.RetryStrategy.of(batch.Action.EXIT, batch.Reason.custom({ onExitCode: String(code) }))),
        batch.RetryStrategy.of(batch.Action.RETRY, batch.Reason.custom({ onReason: '*' })),
      ],
      timeout: Duration.seconds(GPU_JOB.attemptTimeoutSeconds),
    });
  }

  /** gpuQueueKey → queue ARN: the plan function's ENV.gpuQueues. */
  public queueMap(): Record<string, string> {
    return Object.fromEntries(this.queues.map((q) => [gpuQueueKey(q.instanceType, q.capacity), q.queue.jobQueueArn]));
  }

  /**
   * What a state machine needs to run this stack's GPU jobs with `batch:submitJob.sync`, and no
   * more (Step Functions, "IAM policies for AWS Batch"): SubmitJob on these queues and this job
   * definition's revision only; DescribeJobs, which has no resource-level permissions; TerminateJob
   * on jobs of this account and region (job ids are known only at run time: a stopped execution
   * terminates its job); and the events rule through which Step Functions hears of the job's end.
   */
  public grantSubmitSync(grantee: iam.IGrantable): void {
    const stack = Stack.of(this);
    iam.Grant.addToPrincipal({ grantee, actions: ['batch:SubmitJob'], resourceArns: [...this.queues.map((q) => q.queue.jobQueueArn), this.jobDefinition.jobDefinitionArn] });
    iam.Grant.addToPrincipal({ grantee, actions: ['batch:DescribeJobs'], resourceArns: ['*'] });
    iam.Grant.addToPrincipal({ grantee, actions: ['batch:TerminateJob'], resourceArns: [stack.formatArn({ service: 'batch', resource: 'job', resourceName: '*' })] });
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['events:PutTargets', 'events:PutRule', 'events:DescribeRule'],
      resourceArns: [stack.formatArn({ service: 'events', resource: 'rule', resourceName: 'StepFunctionsGetEventsForBatchJobsRule' })],
    });
  }
}
