import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// eslint-disable-next-line no-restricted-imports -- the infra tests inspect the CDK app; lib/ still may not import it
import { Match } from 'aws-cdk-lib/assertions';
import aslValidator from 'asl-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTEXT } from '../../lib/config/index.js';
import { allStates, iamStatements, synthesize } from './synth.js';
import type { Synthesized } from './synth.js';

let dir: string;
let s: Synthesized;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sondage-gpu-'));
  mkdirSync(join(dir, 'image'));
  writeFileSync(join(dir, 'image', 'Dockerfile'), 'FROM public.ecr.aws/docker/library/alpine:3\n');
  // The image asset is staged at synth; Docker builds it only at deploy, so no Docker is needed here.
  s = synthesize({ [CONTEXT.gpu]: 'true', [CONTEXT.gpuImageDir]: join(dir, 'image') });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('GpuBatch (context sondage:gpu=true)', () => {
  it('runs Spot GPU instances on the NVIDIA ECS AMI, scaling to zero', () => {
    s.template.hasResourceProperties('AWS::Batch::ComputeEnvironment', {
      Type: 'managed',
      ComputeResources: Match.objectLike({
        Type: 'SPOT',
        MinvCpus: 0,
        InstanceTypes: Match.arrayWith(['g5.xlarge']),
        Ec2Configuration: [{ ImageType: 'ECS_AL2_NVIDIA' }],
      }),
    });
  });

  it('asks for one GPU and retries a job whose Spot instance was reclaimed', () => {
    s.template.hasResourceProperties('AWS::Batch::JobDefinition', {
      ContainerProperties: Match.objectLike({ ResourceRequirements: Match.arrayWith([{ Type: 'GPU', Value: '1' }]) }),
      RetryStrategy: {
        Attempts: 5,
        EvaluateOnExit: Match.arrayWith([{ Action: 'RETRY', OnStatusReason: 'Host EC2*' }]),
      },
    });
  });

  it("runs a wave's GPU shards as a Batch array job beside its Lambda Map, and waits for both", () => {
    const states = allStates(s.definition);
    const parallel = s.definition.States["Run the wave"];
    expect(parallel).toMatchObject({ Type: 'Parallel', ResultPath: null, Next: 'Next wave' });
    expect(parallel?.Catch).toEqual([expect.objectContaining({ Next: 'Record failure' })]);
    const branches = (parallel!.Branches as { StartAt: string }[]).map((b) => b.StartAt);
    expect(branches).toEqual(['Any Lambda shards?', 'By GPU shard count']);
    expect(s.definition.States['Every phase run?']?.Default).toBe('Run the wave');
    // AWS Batch array sizes run from 2: one shard is a plain job, none is skipped.
    expect(states.get('By GPU shard count')).toMatchObject({
      Choices: [
        { Variable: '$.plan.wave.gpu.shardCount', NumericGreaterThanEquals: 2, Next: "Run the wave's GPU shards" },
        { Variable: '$.plan.wave.gpu.shardCount', NumericEquals: 1, Next: "Run the wave's GPU shard" },
      ],
      Default: 'No GPU shards in this wave',
    });
    const single = states.get("Run the wave's GPU shard");
    expect(single?.Parameters).not.toHaveProperty('ArrayProperties');
    expect(single?.Parameters).toMatchObject({ ContainerOverrides: { Environment: expect.arrayContaining([{ Name: 'SONDAGE_SHARD_INDEX', Value: '0' }]) as unknown } });
    const job = states.get("Run the wave's GPU shards");
    expect(String(job?.Resource)).toMatch(/:states:::batch:submitJob\.sync$/);
    expect(job?.Parameters).toMatchObject({
      ArrayProperties: { 'Size.$': '$.plan.wave.gpu.shardCount' },
      ContainerOverrides: { Environment: expect.arrayContaining([{ Name: 'SONDAGE_MANIFEST_KEY', 'Value.$': '$.plan.wave.gpu.manifestKey' }]) as unknown },
    });
    // Inside the Parallel nothing reaches the failure state on its own: the Parallel catches for both branches.
    expect(job?.Catch).toBeUndefined();
    expect(states.get("Run the wave's shards")?.Catch).toBeUndefined();
  });

  it('still passes asl-validator, grants no wildcard action and has no unacknowledged cdk-nag finding', () => {
    expect(aslValidator(structuredClone(s.definition)).errorsText('\n')).toBe('');
    expect(iamStatements(s.template).flatMap((st) => st.actions.filter((a) => a.includes('*')))).toEqual([]);
    expect(s.nagFindings).toEqual([]);
  });

  it('refuses a missing image folder with the fix', () => {
    expect(() => synthesize({ [CONTEXT.gpu]: 'true', [CONTEXT.gpuImageDir]: join(dir, 'nowhere') })).toThrow(
      /no Dockerfile in ".*nowhere".*sondage:gpuImageDir/,
    );
  });
});
