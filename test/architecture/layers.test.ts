/**
 * Dependencies point down (docs/architecture.md, "Layout of the code"): the core
 * never reaches into a battery, a battery never into another, `lib/` carries no Lambda, CDK or
 * CLI glue, and there is no import cycle, type-only imports included.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/campaigns.js';
import { cycles, importGraph, plantedImports, type ImportEdge } from './importGraph.js';

const edges = importGraph(REPO_ROOT, ['lib', 'functions', 'infra']);

/** The folder that is a layer: `lib/<x>`, `lib/batteries/<x>`, `functions/<x>`, `infra/<x>`. */
function layer(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'lib' && parts[1] === 'batteries') return parts.slice(0, 3).join('/');
  return parts.slice(0, 2).join('/').replace(/\.ts$/, '');
}

interface Rule {
  readonly from: RegExp;
  readonly forbidden: RegExp;
  readonly why: string;
  /** Importing files exempt from the rule. */
  readonly except?: RegExp;
}

const AWS_GLUE = /^(@aws-sdk\/|aws-cdk-lib|constructs$|@middy\/|aws-lambda$|@aws-lambda-powertools\/)/;
const CORE = 'core|errors|config';

const RULES: readonly Rule[] = [
  { from: /^lib\//, forbidden: /^(functions|infra|bin|test|bench)\//, why: 'lib/ is the library; handlers, infrastructure and tests sit above it' },
  { from: /^lib\/(?!cli\/)/, forbidden: /^lib\/cli\//, why: 'the CLI is glue over lib/' },
  {
    from: /^lib\/(?!cli\/)/,
    forbidden: AWS_GLUE,
    // The Bedrock provider is a provider that speaks AWS: Converse, batch inference jobs and their
    // S3 files are its API. The registry loads it with import() on first use, so nothing else pays the SDK.
    except: /^lib\/(store\/(S3BlobStore|DynamoLedger|AthenaQueryable|S3CampaignObjects|DynamoCampaignItems|dynamo\/[A-Za-z]+)\.ts|providers\/bedrock\/[A-Za-z]+\.ts)$/,
    why: 'lib/ is free of AWS glue; only the AWS-backed stores and the Bedrock provider speak the SDK',
  },
  { from: /^lib\/core\//, forbidden: new RegExp(`^lib\\/(?!(${CORE})(\\/|\\.ts$))`), why: 'the shared data contracts depend on nothing' },
  { from: /^lib\/(design|battery|query|report|metrics|pricing|providers|store)\//, forbidden: /^lib\/(run|analysis|cli)\//, why: 'the run and the analysis drive these, not the other way round' },
  { from: /^lib\/design\//, forbidden: /^lib\/(providers|store|read)\//, why: 'parsing a campaign file needs no provider and no storage' },
  { from: /^lib\/battery\//, forbidden: /^lib\/(batteries|design)\//, why: 'the contract knows no battery and no campaign parser' },
  { from: /^lib\/(query|report|metrics|pricing|providers|store)\//, forbidden: /^lib\/(batteries|battery|design)\//, why: 'building blocks below the batteries' },
  { from: /^lib\/store\//, forbidden: /^lib\/(providers|pricing|report|metrics)\//, why: 'storage writes rows; it does not call models or compute statistics' },
  { from: /^lib\/providers\//, forbidden: /^lib\/(pricing|query|report|metrics)\//, why: 'providers call models; cost and statistics sit above them' },
  { from: /^lib\/batteries\/[^/]+\//, forbidden: /^lib\/(run|analysis|design|cli)\//, why: 'a battery gives the core its science; it never drives the core' },
  { from: /^lib\/(run|analysis|design|cli)\//, forbidden: /^lib\/batteries\/[^/]+\//, why: 'the core reaches batteries only through the registry (lib/batteries/index.ts)' },
  { from: /^lib\/analysis\//, forbidden: /^lib\/batteries\/index\.ts$/, why: 'the analysis is handed its battery' },
  { from: /^infra\//, forbidden: /^(functions\/|lib\/cli\/|lib\/batteries\/[^/]+\/)/, why: 'the stack bundles handlers by path; it imports lib/ only' },
  { from: /^functions\//, forbidden: /^(infra\/|lib\/cli\/|lib\/batteries\/[^/]+\/)/, why: 'handlers are thin over lib/' },
  { from: /^functions\/(?!shared\/)([^/]+)\//, forbidden: /^functions\/(?!shared\/)/, why: 'one handler never imports another; shared code lives in functions/shared' },
];

function violations(rule: Rule, among: readonly ImportEdge[] = edges): string[] {
  return among
    .filter((e: ImportEdge) => rule.from.test(e.from) && rule.forbidden.test(e.to) && !rule.except?.test(e.from))
    // A handler may import its own folder.
    .filter((e) => !(e.from.startsWith('functions/') && layer(e.from) === layer(e.to)))
    .map((e) => `${e.from}:${e.line} imports ${e.to}`);
}

describe('dependencies point down', () => {
  it('the graph is read: every layer is there', () => {
    const layers = new Set(edges.map((e) => layer(e.from)));
    for (const l of ['lib/core', 'lib/battery', 'lib/batteries/far6', 'lib/batteries/xvalue', 'lib/batteries/ptrue', 'lib/run', 'lib/cli', 'functions/worker', 'infra/constructs']) expect(layers).toContain(l);
    expect(edges.length).toBeGreaterThan(1000);
  });

  it.each(RULES.map((r) => [r.why, r] as const))('%s', (_why, rule) => {
    expect(violations(rule)).toEqual([]);
  });

  it('a battery never reaches into another', () => {
    const cross = edges.filter((e) => {
      const a = /^lib\/batteries\/([^/]+)\//.exec(e.from)?.[1];
      const b = /^lib\/batteries\/([^/]+)\//.exec(e.to)?.[1];
      return a !== undefined && b !== undefined && a !== b;
    });
    expect(cross.map((e) => `${e.from}:${e.line} imports ${e.to}`)).toEqual([]);
  });

  it('the Bedrock provider (and the AWS SDK it brings) is loaded only by the registry, with import() on first use', () => {
    const inside = (f: string) => f.startsWith('lib/providers/bedrock/');
    const eager = edges.filter((e) => inside(e.to) && !inside(e.from) && !e.dynamic && !e.typeOnly);
    expect(eager.map((e) => `${e.from}:${e.line} imports ${e.to}`)).toEqual([]);
    expect(edges.some((e) => e.from === 'lib/providers/registry.ts' && inside(e.to) && e.dynamic)).toBe(true);
  });

  it('there is no import cycle, type-only imports included', () => {
    expect(cycles(edges).map((c) => c.join(' → '))).toEqual([]);
  });

  it('the rules catch what they are meant to (a planted edge is reported)', () => {
    const planted = plantedImports(
      ['lib/batteries/xvalue/x.ts', 'lib/run/runCampaign.ts', 'type'],
      ['lib/design/campaign.ts', 'lib/providers/registry.ts'],
      ['lib/run/plan.ts', '@aws-sdk/client-s3'],
      ['lib/store/S3BlobStore.ts', '@aws-sdk/client-s3'],
    );
    const found = [...new Set(RULES.flatMap((r) => violations(r, planted)))].sort();
    expect(found).toEqual(['lib/batteries/xvalue/x.ts:1 imports lib/run/runCampaign.ts', 'lib/design/campaign.ts:2 imports lib/providers/registry.ts', 'lib/run/plan.ts:3 imports @aws-sdk/client-s3']);
    expect(cycles([planted[0]!, { ...planted[0]!, from: planted[0]!.to, to: planted[0]!.from }])).toHaveLength(1);
  });

  it('FAR-6 is named only in its own folder and the registry', () => {
    const files = execFileSync('git', ['grep', '-il', 'far6', '--', 'lib', 'functions', 'infra'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim().split('\n');
    expect(files.filter((f) => !f.startsWith('lib/batteries/far6/') && f !== 'lib/batteries/index.ts')).toEqual([]);
  });
});
