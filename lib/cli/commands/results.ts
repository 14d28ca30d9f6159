/**
 * `sondage results <campaign>`: the analysis of a deployed campaign with its SQL stage on Athena, printed as the
 * local run prints it, and written as the local run writes it when `--out` is given. Thin over
 * lib/analysis/athena.ts analyzeOnAthena, the report Lambda's analysis; the battery and its phases
 * come from the campaign file, or from the campaign the pipeline uploaded.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { awsReportSpend } from '../../analysis/storedSpend.js';
import { analyzeOnAthena } from '../../analysis/athena.js';
import { ANALYTICS_NAMES, resolveStack } from '../aws.js';
import { ENV } from '../../config/index.js';
import { campaignEntries } from '../../design/campaign.js';
import { downloadCampaign } from '../../run/campaignInput.js';
import { loadRunContext } from '../../run/context.js';
import type { RunContext } from '../../run/context.js';
import { AthenaQueryable } from '../../store/AthenaQueryable.js';
import { prepareOutDir } from '../../store/dataDir.js';
import type { AthenaQueryableOptions } from '../../store/AthenaQueryable.js';
import { assertSafeSegment, campaignPrefix } from '../../store/layout.js';
import { S3BlobStore } from '../../store/S3BlobStore.js';

/** What the command reads of the parsed arguments (a subset of lib/cli/main.ts CliArgs). */
export interface ResultsArgs {
  /** The campaign: its name, or its campaign file (the name is read from it). */
  readonly file: string;
  readonly out?: string;
  /** `workgroup`, `database`, `bucket`, `athena-endpoint`, `outputs`, by flag name. */
  readonly values: Readonly<Record<string, string | boolean | string[] | undefined>>;
}

function isCampaignFile(arg: string): boolean {
  return /\.ya?ml$/i.test(arg);
}

/** The campaign: its file, or, given a name, the campaign the pipeline uploaded (`campaigns/<c>/input/`). */
async function campaignContext(arg: string, store: S3BlobStore): Promise<RunContext> {
  if (isCampaignFile(arg)) return loadRunContext(arg);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sondage-results-'));
  try {
    return await downloadCampaign(store, arg, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Test seams: how the Athena client polls (the defaults wait as a person would). */
export interface ResultsOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly athena?: Pick<AthenaQueryableOptions, 'sleep' | 'pollInitialMs' | 'pollMaxMs'>;
}

/**
 * Runs the analysis through Athena, prints the console table, writes the result files under
 * `--out` when given. Endpoints: `--athena-endpoint`, else the SDK's AWS_ENDPOINT_URL_ATHENA; S3 by
 * SONDAGE_S3_ENDPOINT or the SDK's AWS_ENDPOINT_URL_S3.
 */
export async function resultsCommand(args: ResultsArgs, options: ResultsOptions = {}): Promise<number> {
  const env = options.env ?? process.env;
  // A bad campaign id is refused before anything is asked of AWS.
  if (!isCampaignFile(args.file)) assertSafeSegment('campaign id', args.file);
  const names = await resolveStack({ values: args.values, env }, ANALYTICS_NAMES);
  const athenaEndpoint = typeof args.values['athena-endpoint'] === 'string' ? args.values['athena-endpoint'] : undefined;
  const s3Endpoint = env[ENV.s3Endpoint] || undefined;
  const sdkS3Override = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL;
  const db = new AthenaQueryable({
    workgroup: names.athenaWorkgroup,
    database: names.glueDatabase,
    clientConfig: athenaEndpoint ? { endpoint: athenaEndpoint } : {},
    ...options.athena,
  });
  // Path-style where an endpoint is overridden: LocalStack and S3 look-alikes need no wildcard DNS.
  const store = new S3BlobStore({
    bucket: names.bucket,
    clientConfig: s3Endpoint ? { endpoint: s3Endpoint, forcePathStyle: true } : sdkS3Override ? { forcePathStyle: true } : {},
  });
  // A bad --out is refused before any Athena query runs (queries are paid for).
  const out = args.out === undefined ? undefined : await prepareOutDir(args.out, '--out');
  const ctx = await campaignContext(args.file, store);
  const campaign = ctx.campaign.name;
  const { battery } = ctx;
  const run = await analyzeOnAthena({ db, store, battery, campaign: ctx.campaign, design: ctx.campaign.design, languages: ctx.design.languages, phases: ctx.graph.phases.map((p) => p.name) });
  process.stdout.write(`${battery.analysis.console(run.results)}\n`);
  process.stdout.write(`athena: ${run.queryExecutionIds.length} queries in workgroup ${names.athenaWorkgroup}, database ${names.glueDatabase} (models ${run.models.join(', ')})\n`);
  if (out !== undefined) {
    const source = `s3://${names.bucket}/${campaignPrefix(campaign)}`;
    const simulated = campaignEntries(ctx.campaign).some((m) => m.provider === 'simulated');
    // The ledger is not read here (the command needs only the analytics stack's names): an overrun,
    // if any, is in `sondage status --aws` and in the report step's summary.md.
    for (const [name, content] of battery.analysis.files(run.results, { campaign, simulated, source, spend: awsReportSpend(ctx.campaign, run.spentUsd, undefined) })) {
      const file = path.join(out, ...name.split('/'));
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, content);
    }
    process.stdout.write(`results: ${out}\n`);
  } else {
    process.stdout.write(`results: add --out DIR to write the files here; the pipeline's report step writes them to s3://${names.bucket}/${campaignPrefix(campaign)}results/\n`);
  }
  return 0;
}
