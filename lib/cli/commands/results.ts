/**
 * `sondage results <campaign>` (issue 4, "CLI: `sondage results <campaign>` runs the report query
 * through Athena"): the analysis of a deployed campaign with its SQL stage on Athena, printed as the
 * local run prints it, and written as the local run writes it when `--out` is given. Thin over
 * lib/store/AthenaQueryable.ts analyzeOnAthena, the report Lambda's analysis.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { formatConsoleTable, writeResults } from '../../analysis/index.js';
import { DEFAULT_OUTPUTS_FILE, ENV, STACK_OUTPUTS } from '../../config/index.js';
import { loadCampaign } from '../../design/loadCampaign.js';
import { CampaignFileError, formatIssues } from '../../errors.js';
import { AthenaQueryable, analyzeOnAthena } from '../../store/AthenaQueryable.js';
import type { AthenaQueryableOptions } from '../../store/AthenaQueryable.js';
import { assertSafeSegment, campaignPrefix } from '../../store/layout.js';
import { S3BlobStore } from '../../store/S3BlobStore.js';

/** What the command reads of the parsed arguments (a subset of lib/cli/main.ts CliArgs). */
export interface ResultsArgs {
  /** The campaign: its name, or its campaign file (the name is read from it). */
  readonly file: string;
  readonly out?: string;
  /** `workgroup`, `database`, `bucket`, `athena-endpoint`, `outputs`, by flag name. */
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
}

/** The stack's analysis resources. */
export interface AnalyticsNames {
  readonly bucket: string;
  readonly workgroup: string;
  readonly database: string;
}

/** Per name: its flag, its SONDAGE_* variable (lib/config ENV), its stack output. */
const SOURCES: Record<keyof AnalyticsNames, { readonly flag: string; readonly env: string; readonly output: string }> = {
  bucket: { flag: 'bucket', env: ENV.bucket, output: STACK_OUTPUTS.bucket },
  workgroup: { flag: 'workgroup', env: ENV.athenaWorkgroup, output: STACK_OUTPUTS.athenaWorkgroup },
  database: { flag: 'database', env: ENV.glueDatabase, output: STACK_OUTPUTS.glueDatabase },
};

/**
 * Bucket, workgroup and database, each from its flag, else its SONDAGE_* variable, else the stack
 * outputs file (`--outputs`, default sondage.aws.json, as `cdk deploy --outputs-file` writes it).
 * The file is read only when a name is still missing.
 * @example await resolveAnalyticsNames({ workgroup: 'sondage-Sondage' }, process.env)
 */
export async function resolveAnalyticsNames(
  values: Readonly<Record<string, string | boolean | undefined>>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<AnalyticsNames> {
  const found: Partial<Record<keyof AnalyticsNames, string>> = {};
  const names = Object.keys(SOURCES) as (keyof AnalyticsNames)[];
  for (const name of names) {
    const flag = values[SOURCES[name].flag];
    const value = typeof flag === 'string' && flag !== '' ? flag : env[SOURCES[name].env];
    if (value) found[name] = value;
  }
  const missing = names.filter((n) => found[n] === undefined);
  if (missing.length === 0) return found as AnalyticsNames;

  const file = typeof values.outputs === 'string' && values.outputs !== '' ? values.outputs : DEFAULT_OUTPUTS_FILE;
  const instead = missing.map((n) => `--${SOURCES[n].flag} (or ${SOURCES[n].env})`).join(', ');
  const fail = (where: string, message: string): never => {
    const issue = { file, path: where, message };
    throw new CampaignFileError(formatIssues([issue]), [issue]);
  };
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such stack outputs file' : code ? `cannot read the stack outputs file (${code})` : `not valid JSON (${(err as Error).message})`;
    return fail('', `${why}; write it with \`npx cdk deploy --outputs-file ${file}\`, point --outputs at it, or give ${instead}`);
  }
  // The file holds every deployed stack of the app; ours is the one with the analysis outputs.
  const stacks = typeof raw === 'object' && raw !== null && !Array.isArray(raw)
    ? Object.entries(raw as Record<string, unknown>).filter(
        (e): e is [string, Record<string, unknown>] => typeof e[1] === 'object' && e[1] !== null && STACK_OUTPUTS.athenaWorkgroup in e[1],
      )
    : [];
  if (stacks.length !== 1) {
    return fail('', `expected one stack with a ${STACK_OUTPUTS.athenaWorkgroup} output, found ${stacks.length}; give ${instead}`);
  }
  const [stackName, outputs] = stacks[0]!;
  for (const name of missing) {
    const value = outputs[SOURCES[name].output];
    if (typeof value !== 'string' || value === '') fail(`${stackName}.${SOURCES[name].output}`, `missing; expected the ${name} (or give --${SOURCES[name].flag})`);
    found[name] = value as string;
  }
  return found as AnalyticsNames;
}

/** The campaign id: the positional itself, or the name inside the campaign file it points to. */
async function campaignName(arg: string): Promise<string> {
  if (/\.ya?ml$/i.test(arg)) return (await loadCampaign(arg)).name;
  assertSafeSegment('campaign id', arg);
  return arg;
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
  const campaign = await campaignName(args.file);
  const names = await resolveAnalyticsNames(args.values, env);
  const athenaEndpoint = typeof args.values['athena-endpoint'] === 'string' ? args.values['athena-endpoint'] : undefined;
  const s3Endpoint = env[ENV.s3Endpoint] || undefined;
  const sdkS3Override = env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL;
  const db = new AthenaQueryable({
    workgroup: names.workgroup,
    database: names.database,
    clientConfig: athenaEndpoint ? { endpoint: athenaEndpoint } : {},
    ...options.athena,
  });
  // Path-style where an endpoint is overridden: LocalStack and S3 look-alikes need no wildcard DNS.
  const store = new S3BlobStore({
    bucket: names.bucket,
    clientConfig: s3Endpoint ? { endpoint: s3Endpoint, forcePathStyle: true } : sdkS3Override ? { forcePathStyle: true } : {},
  });
  const run = await analyzeOnAthena({ db, store, campaign });
  process.stdout.write(`${formatConsoleTable(run.analysis)}\n`);
  process.stdout.write(`athena: ${run.queryExecutionIds.length} queries in workgroup ${names.workgroup}, database ${names.database} (models ${run.models.join(', ')})\n`);
  if (args.out !== undefined) {
    const out = path.resolve(args.out);
    await mkdir(out, { recursive: true });
    const source = `s3://${names.bucket}/${campaignPrefix(campaign)}`;
    await writeResults(
      async (name, content) => {
        const file = path.join(out, ...name.split('/'));
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(file, content);
      },
      run.analysis,
      { campaign, source },
    );
    process.stdout.write(`results: ${out}\n`);
  } else {
    process.stdout.write(`results: add --out DIR to write the files here; the pipeline's report step writes them to s3://${names.bucket}/${campaignPrefix(campaign)}results/\n`);
  }
  return 0;
}
