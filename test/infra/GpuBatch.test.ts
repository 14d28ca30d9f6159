// eslint-disable-next-line no-restricted-imports -- the infra tests inspect the CDK app; lib/ still may not import it
import { Match } from 'aws-cdk-lib/assertions';
import aslValidator from 'asl-validator';
import { beforeAll, describe, expect, it } from 'vitest';
import { CONTEXT, ENV, GPU_ENV, GPU_STACK_OUTPUTS } from '../../lib/config/index.js';
import { GPU_JOB } from '../../lib/config/sizing.js';
import { IDLE_TAIL_SECONDS } from '../../lib/gpu/instanceTime.js';
import { EXIT_CODES } from '../../lib/gpu/probeJob.js';
import { allStates, iamStatements, synthesize, tokenText } from './synth.js';
import type { Statement, Synthesized } from './synth.js';

let s: Synthesized;
beforeAll(() => {
  // No Dockerfile, no Docker, no credentials: the job definition names an image in the stack's
  // repository, which batch-images/probe/build.sh pushes apart from synth and deploy.
  s = synthesize({ [CONTEXT.gpu]: 'true', [CONTEXT.gpuInstanceTypes]: 'g6e.xlarge,g5.12xlarge', [CONTEXT.gpuImage]: 'sha256:' + 'ab'.repeat(32) });
});

/** The policy statements of the one role whose logical id starts with `prefix`. */
function statementsOf(prefix: string): Statement[] {
  return iamStatements(s.template).filter((st) => st.policy.startsWith(prefix));
}

describe('GpuBatch (context sondage:gpu=true)', () => {
  it('runs each instance type on Spot and on-demand, the NVIDIA ECS AMI on Amazon Linux 2023, scaling to zero after the stated scale-down delay', () => {
    const envs = s.template.findResources('AWS::Batch::ComputeEnvironment');
    const resources = Object.values(envs).map((e) => (e as { Properties: { ComputeResources: Record<string, unknown> } }).Properties.ComputeResources);
    expect(resources.map((r) => `${(r.InstanceTypes as string[]).join()}/${String(r.Type)}`).sort()).toEqual([
      'g5.12xlarge/EC2',
      'g5.12xlarge/SPOT',
      'g6e.xlarge/EC2',
      'g6e.xlarge/SPOT',
    ]);
    for (const r of resources) {
      expect(r).toMatchObject({ MinvCpus: 0, Ec2Configuration: [{ ImageType: 'ECS_AL2023_NVIDIA' }], LaunchTemplate: expect.anything() as unknown });
      // A stated idle time after an instance's last job, the one each job charges (lib/gpu/instanceTime.ts IDLE_TAIL_SECONDS).
      expect(r.ScalingPolicy).toEqual({ MinScaleDownDelayMinutes: GPU_JOB.scaleDownDelayMinutes });
    }
    expect(IDLE_TAIL_SECONDS).toBeGreaterThanOrEqual(GPU_JOB.scaleDownDelayMinutes * 60);
    // One queue per compute environment: a model runs on exactly the instance type it names.
    expect(Object.keys(s.template.findResources('AWS::Batch::JobQueue'))).toHaveLength(4);
    s.template.hasResourceProperties('AWS::EC2::LaunchTemplate', {
      LaunchTemplateData: Match.objectLike({
        MetadataOptions: Match.objectLike({ HttpTokens: 'required' }),
        BlockDeviceMappings: [{ DeviceName: '/dev/xvda', Ebs: Match.objectLike({ Encrypted: true, VolumeSize: 200, VolumeType: 'gp3' }) }],
      }),
    });
  });

  it('asks for a GPU, passes bucket, tables, secret, deadline and the instance folder, and retries a Spot reclaim or a worker failure but not a bad job', () => {
    s.template.hasResourceProperties('AWS::Batch::JobDefinition', {
      Type: 'container',
      ContainerProperties: Match.objectLike({
        ResourceRequirements: Match.arrayWith([{ Type: 'GPU', Value: '1' }]),
        Environment: Match.arrayWith([
          { Name: ENV.bucket, Value: Match.anyValue() },
          { Name: ENV.ledgerTable, Value: Match.anyValue() },
          { Name: ENV.budgetTable, Value: Match.anyValue() },
          { Name: ENV.providerSecretArn, Value: Match.anyValue() },
          { Name: GPU_ENV.deadlineSeconds, Value: String(GPU_JOB.attemptTimeoutSeconds - GPU_JOB.deadlineMarginSeconds) },
          { Name: GPU_ENV.instanceDir, Value: '/var/lib/sondage-instance' },
        ]),
        // The instance's own folder, where each attempt records up to when the instance was charged (lib/gpu/instanceClock.ts).
        Volumes: [{ Name: 'instance', Host: { SourcePath: '/var/lib/sondage-instance' } }],
        MountPoints: [{ SourceVolume: 'instance', ContainerPath: '/var/lib/sondage-instance' }],
        LinuxParameters: { InitProcessEnabled: true, SharedMemorySize: 4096 },
        Image: Match.objectLike({ 'Fn::Join': ['', Match.arrayWith([Match.stringLikeRegexp('@sha256:abab')])] }),
      }),
      RetryStrategy: {
        Attempts: GPU_JOB.attempts,
        EvaluateOnExit: [
          { Action: 'RETRY', OnStatusReason: 'Host EC2*' },
          { Action: 'EXIT', OnReason: 'CannotPullContainerError:*' },
          { Action: 'EXIT', OnExitCode: String(EXIT_CODES.config) },
          { Action: 'EXIT', OnExitCode: String(EXIT_CODES.serverExited) },
          { Action: 'RETRY', OnReason: '*' },
        ],
      },
      Timeout: { AttemptDurationSeconds: GPU_JOB.attemptTimeoutSeconds },
    });
    s.template.hasResourceProperties('AWS::ECR::Repository', { ImageScanningConfiguration: { ScanOnPush: true } });
    s.template.hasOutput(GPU_STACK_OUTPUTS.gpuJobQueues, {});
    s.template.hasOutput(GPU_STACK_OUTPUTS.probeRepository, {});
  });

  it('tells the plan function its queues by instance type and capacity', () => {
    const plan = Object.values(s.template.findResources('AWS::Lambda::Function')).find((f) =>
      String((f as { Properties: { Description?: string } }).Properties.Description).includes('registers items'),
    ) as { Properties: { Environment: { Variables: Record<string, unknown> } } };
    const queues = JSON.parse(tokenText(plan.Properties.Environment.Variables[ENV.gpuQueues])) as Record<string, string>;
    expect(Object.keys(queues).sort()).toEqual(['g5.12xlarge/on-demand', 'g5.12xlarge/spot', 'g6e.xlarge/on-demand', 'g6e.xlarge/spot']);
  });

  it("runs a wave's GPU jobs beside its Lambda Map, one Batch job per model: an array of its groups of shards, or a plain job for one", () => {
    const states = allStates(s.definition);
    const parallel = s.definition.States['Run the wave'];
    expect(parallel).toMatchObject({ Type: 'Parallel', ResultPath: null, Next: 'Next wave' });
    expect(parallel?.Catch).toEqual([expect.objectContaining({ Next: 'Record failure' })]);
    expect((parallel!.Branches as { StartAt: string }[]).map((b) => b.StartAt)).toEqual(['Any Lambda shards?', "Run the wave's GPU jobs"]);
    expect(states.get("Run the wave's GPU jobs")).toMatchObject({ Type: 'Map', ItemsPath: '$.plan.wave.gpu.jobs', ItemSelector: { 'job.$': '$$.Map.Item.Value' }, ResultPath: null });
    expect(states.get('Array job or single job?')).toMatchObject({
      Choices: [{ Variable: '$.job.children', NumericGreaterThanEquals: 2, Next: 'GpuArrayJob' }],
      Default: 'GpuSingleJob',
    });
    const overrides = { 'ResourceRequirements.$': '$.job.resources', 'Environment.$': '$.job.environment' };
    const array = states.get('GpuArrayJob');
    expect(array).toMatchObject({
      Type: 'Task',
      Resource: 'arn:aws:states:::batch:submitJob.sync',
      Parameters: { 'JobName.$': '$.job.jobName', 'JobQueue.$': '$.job.jobQueue', ArrayProperties: { 'Size.$': '$.job.children' }, ContainerOverrides: overrides },
      ResultPath: null,
    });
    const single = states.get('GpuSingleJob');
    expect(single?.Parameters).not.toHaveProperty('ArrayProperties');
    expect(single?.Parameters).toMatchObject({ ContainerOverrides: overrides });
    expect((array?.Parameters as { JobDefinition: string }).JobDefinition).toMatch(/^gpubatchjobdefinition/);
    // Inside the Parallel nothing reaches the failure state on its own: the Parallel catches for both branches.
    expect(array?.Catch).toBeUndefined();
    expect(states.get("Run the wave's shards")?.Catch).toBeUndefined();
  });

  it('grants the state machine submitJob.sync on its queues and job definition only, with the events rule .sync needs', () => {
    const batch = statementsOf('PipelineStateMachineRole').filter((st) => st.actions.some((a) => a.startsWith('batch:') || a.startsWith('events:')));
    const by = (action: string) => batch.filter((st) => st.actions.includes(action));
    const submit = by('batch:SubmitJob');
    expect(submit).toHaveLength(1);
    expect(submit[0]!.actions).toEqual(['batch:SubmitJob']);
    const queueRefs = Object.keys(s.template.findResources('AWS::Batch::JobQueue')).map((id) => ({ 'Fn::GetAtt': [id, 'JobQueueArn'] }));
    const jobDefinition = Object.keys(s.template.findResources('AWS::Batch::JobDefinition')).map((id) => ({ Ref: id }));
    expect(submit[0]!.resources).toEqual(expect.arrayContaining([...queueRefs, ...jobDefinition]));
    expect(submit[0]!.resources).toHaveLength(queueRefs.length + 1);
    expect(by('batch:DescribeJobs')).toEqual([expect.objectContaining({ actions: ['batch:DescribeJobs'], resources: ['*'] })]);
    const terminate = by('batch:TerminateJob');
    expect(terminate).toHaveLength(1);
    expect(tokenText(terminate[0]!.resources[0])).toBe('arn:aws:batch:us-east-1:123456789012:job/*');
    const events = by('events:PutRule');
    expect(events[0]!.actions.sort()).toEqual(['events:DescribeRule', 'events:PutRule', 'events:PutTargets']);
    expect(tokenText(events[0]!.resources[0])).toBe('arn:aws:events:us-east-1:123456789012:rule/StepFunctionsGetEventsForBatchJobsRule');
    // No other Batch or EventBridge action anywhere, and none on a wildcard action.
    expect(new Set(batch.flatMap((st) => st.actions))).toEqual(new Set(['batch:SubmitJob', 'batch:DescribeJobs', 'batch:TerminateJob', 'events:PutTargets', 'events:PutRule', 'events:DescribeRule']));
  });

  it("gives the job role the campaign's objects, the ledger, the weights (read only) and the provider secret, nothing else", () => {
    const job = statementsOf('GpuBatchJobRole');
    const actions = new Set(job.flatMap((st) => st.actions));
    expect([...actions].filter((a) => !a.startsWith('dynamodb:') && !a.startsWith('s3:'))).toEqual(
      expect.arrayContaining(['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret']),
    );
    const weights = job.find((st) => st.resources.some((r) => tokenText(r).endsWith('/weights/*')));
    expect(weights?.actions).toEqual(['s3:GetObject']);
    const writes = job.filter((st) => st.actions.includes('s3:PutObject')).flatMap((st) => st.resources.map(tokenText));
    expect(writes.every((r) => /\/(campaigns|scratch)\/\*$/.test(r))).toBe(true);
  });

  it('still passes asl-validator, grants no wildcard action and has no unacknowledged cdk-nag finding', () => {
    expect(aslValidator(structuredClone(s.definition)).errorsText('\n')).toBe('');
    expect(iamStatements(s.template).flatMap((st) => st.actions.filter((a) => a.includes('*')))).toEqual([]);
    expect(s.nagFindings).toEqual([]);
  });

  it('refuses an instance type it does not know, naming the known ones', () => {
    expect(() => synthesize({ [CONTEXT.gpu]: 'true', [CONTEXT.gpuInstanceTypes]: 'p9.mega' })).toThrow(/unknown instance type\(s\) p9\.mega.*g5\.xlarge/);
  });
});
