import { existsSync } from 'node:fs';
import { Duration, Size, Validations } from 'aws-cdk-lib';
import * as batch from 'aws-cdk-lib/aws-batch';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { SondageError } from '../../lib/errors.js';
import type { CampaignData } from './CampaignData.js';

export interface GpuBatchProps {
  readonly data: CampaignData;
  /** Folder with the worker image's Dockerfile (built by cdk-assets at deploy, not at synth). */
  readonly imageDirectory: string;
  /** Default g5/g6 sizes with one GPU. */
  readonly instanceTypes?: readonly ec2.InstanceType[];
  /** Default 64: at most 16 g5.xlarge at once. */
  readonly maxvCpus?: number;
}

/**
 * Local (open-weight) models on AWS Batch (DESIGN.md "On AWS"): a managed EC2 compute environment of
 * Spot GPU instances on the NVIDIA ECS AMI, one queue, and a job definition that asks for one GPU and
 * retries a job whose Spot instance was reclaimed. The state machine submits one array job per shard
 * manifest (`submitJob.sync`).
 */
export class GpuBatch extends Construct {
  public readonly vpc: ec2.Vpc;
  public readonly queue: batch.JobQueue;
  public readonly jobDefinition: batch.EcsJobDefinition;
  public readonly jobRole: iam.Role;

  constructor(scope: Construct, id: string, props: GpuBatchProps) {
    super(scope, id);
    if (!existsSync(`${props.imageDirectory}/Dockerfile`)) {
      throw new SondageError(
        `GpuBatch: no Dockerfile in "${props.imageDirectory}"; build the GPU worker image there first or pass -c sondage:gpuImageDir=<folder>`,
      );
    }
    const flowLogs = new logs.LogGroup(this, 'FlowLogs', { retention: logs.RetentionDays.ONE_MONTH });
    this.vpc = new ec2.Vpc(this, 'Vpc', {
      maxAzs: 2,
      // One NAT: the instances pull the image from ECR and read weights from S3, nothing else.
      natGateways: 1,
      subnetConfiguration: [
        { name: 'public', subnetType: ec2.SubnetType.PUBLIC },
        { name: 'private', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      ],
      flowLogs: { all: { destination: ec2.FlowLogDestination.toCloudWatchLogs(flowLogs) } },
    });
    this.vpc.addGatewayEndpoint('S3', { service: ec2.GatewayVpcEndpointAwsService.S3 });

    const compute = new batch.ManagedEc2EcsComputeEnvironment(this, 'Compute', {
      vpc: this.vpc,
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      spot: true,
      allocationStrategy: batch.AllocationStrategy.SPOT_PRICE_CAPACITY_OPTIMIZED,
      useOptimalInstanceClasses: false,
      instanceTypes: [...(props.instanceTypes ?? [new ec2.InstanceType('g5.xlarge'), new ec2.InstanceType('g6.xlarge'), new ec2.InstanceType('g5.2xlarge')])],
      images: [{ imageType: batch.EcsMachineImageType.ECS_AL2_NVIDIA }],
      minvCpus: 0,
      maxvCpus: props.maxvCpus ?? 64,
    });
    Validations.of(compute).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonEC2ContainerServiceforEC2Role]',
      reason:
        'The instance role of ECS container instances: AWS maintains it for registering with the cluster and pulling images; the job itself runs under JobRole.',
    });
    this.queue = new batch.JobQueue(this, 'Queue', { computeEnvironments: [{ computeEnvironment: compute, order: 1 }] });

    this.jobRole = new iam.Role(this, 'JobRole', { assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com') });
    props.data.grantWorker(this.jobRole);
    props.data.acknowledgePrefixGrants(this.jobRole);
    const jobLogs = new logs.LogGroup(this, 'JobLogs', { retention: logs.RetentionDays.ONE_MONTH });
    const container = new batch.EcsEc2ContainerDefinition(this, 'Container', {
      image: ecs.ContainerImage.fromAsset(props.imageDirectory),
      cpu: 4,
      memory: Size.gibibytes(15),
      gpu: 1,
      jobRole: this.jobRole,
      logging: ecs.LogDriver.awsLogs({ streamPrefix: 'gpu', logGroup: jobLogs }),
    });
    this.jobDefinition = new batch.EcsJobDefinition(this, 'JobDefinition', {
      container,
      retryAttempts: 5,
      retryStrategies: [
        batch.RetryStrategy.of(batch.Action.RETRY, batch.Reason.SPOT_INSTANCE_RECLAIMED),
        batch.RetryStrategy.of(batch.Action.EXIT, batch.Reason.CANNOT_PULL_CONTAINER),
      ],
      timeout: Duration.hours(6),
    });
    Validations.of(container).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Only ecr:GetAuthorizationToken, which has no resource-level permissions; image pulls are scoped to the asset repository.',
    });
  }
}
