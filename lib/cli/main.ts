import { parseArgs } from 'node:util';
import { SondageError } from '../errors.js';
import { DEFAULT_OUTPUTS_FILE } from '../config/index.js';

const USAGE = `sondage — cost-bounded multilingual measurement campaigns on language models

Usage:
  sondage run <campaign.yaml> [--data-dir DIR] [--allow-partial] [--quiet] [--poll-interval SECONDS] [--retry-failed]
      plan, generate, read (token rule + judge), analyse, report; resumable: run it again after
      a kill or a budget stop and only the missing items are requested
  sondage plan <campaign.yaml> [--aws]
      print the inventory size and the cost estimate per model and phase; calls nothing
      (--aws: add what the AWS pipeline itself costs)
  sondage analyze <campaign.yaml> [--data-dir DIR]
      re-run the analysis on what has been collected
  sondage analyze --replies <file-or-dir> --out DIR
      analyse replies collected elsewhere (JSONL, CSV or Parquet rows as in
      schema/replies.schema.json); bad rows are listed and left out
  sondage start <campaign.yaml> --aws [--retry-failed] [--outputs FILE]
      validate the campaign here, upload it with the files it names, start the state machine;
      starting again after a stop resumes from the ledger
  sondage status <campaign> [--aws] [--outputs FILE] [--data-dir DIR]
      progress per phase, spend against the cap, open provider batches, recorded failures
  sondage results <campaign> [--workgroup W] [--database D] [--athena-endpoint URL] [--out DIR]
      run the analysis through Athena and print the results table
  sondage stop <campaign> [--aws] [--outputs FILE] [--data-dir DIR]
      stop the running execution(s) and cancel open provider batches; nothing collected is lost
  sondage schema
      print the campaign file's JSON Schema (for editor completion)

Options:
  --data-dir DIR     where prompts, replies, readings, the ledger and results go
                     (default: the campaign's data_dir)
  --allow-partial    start even when the expected cost exceeds budget_usd; stops at the cap
  --quiet            no progress bar
  --poll-interval S  run: seconds between polls of open provider batches
  --retry-failed     run/start: ask again the items whose last attempt failed for good (refusal,
                     content filter, bad request); a plain run re-asks only transient failures
  --aws              plan/start/status/stop: the deployed stack instead of this machine
  --outputs FILE     the stack's outputs (\`cdk deploy --outputs-file FILE\`; default ${DEFAULT_OUTPUTS_FILE});
                     --bucket, --state-machine, --ledger-table, --budget-table or the SONDAGE_*
                     variables override single names
  --replies PATH     analyze: a replies file, or a folder of them
  --out DIR          analyze --replies / results: where the results files and tables go

Endpoints: the AWS SDK's own AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SFN and
AWS_ENDPOINT_URL_ATHENA (or AWS_ENDPOINT_URL) point the AWS commands at LocalStack or local servers.
`;

/** The `sondage` command. Returns the exit code; thin over lib/. */
export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'run':
        return await (await import('./commands/run.js')).runCommand(parse(command, rest));
      case 'plan':
        return await (await import('./commands/plan.js')).planCommand(parse(command, rest));
      case 'analyze':
      case 'analyse':
        return await (await import('./commands/analyze.js')).analyzeCommand(parse('analyze', rest));
      case 'start':
        return await (await import('./commands/start.js')).startCommand(parse(command, rest));
      case 'status':
        return await (await import('./commands/status.js')).statusCommand(parse(command, rest));
      case 'stop':
        return await (await import('./commands/stop.js')).stopCommand(parse(command, rest));
      case 'results':
        return await (await import('./commands/results.js')).resultsCommand(parse(command, rest));
      case 'purge': // parses its own options and --help (lib/cli/commands/purge.ts PURGE_USAGE)
        return await (await import('./commands/purge.js')).purgeCommand(rest);
      case 'schema':
        return await (await import('./commands/schema.js')).schemaCommand();
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(USAGE);
        return command === undefined ? 1 : 0;
      default:
        process.stderr.write(`sondage: unknown command "${command}"\n\n${USAGE}`);
        return 2;
    }
  } catch (err) {
    if (err instanceof SondageError) {
      process.stderr.write(`${err.message}\n`);
      return 1;
    }
    throw err;
  }
}

export interface CliArgs {
  /** The first positional: a campaign file, or (status, stop, results) a campaign file or name. */
  readonly file: string;
  readonly dataDir?: string;
  readonly allowPartial: boolean;
  readonly quiet: boolean;
  /** analyze --replies: replies collected elsewhere (then `file` is empty). */
  readonly replies?: string;
  readonly out?: string;
  /** plan/start/status/stop: against the deployed stack. */
  readonly aws: boolean;
  /** run: `--poll-interval` as given (the command validates it). */
  readonly pollInterval?: string;
  /** The stack's outputs file (`--outputs`). */
  readonly outputs?: string;
  /** Every option as parsed, by its flag name (`values['poll-interval']`), for command-specific flags. */
  readonly values: Readonly<Record<string, string | boolean | string[] | undefined>>;
}

type OptionSpec = { readonly type: 'string'; readonly multiple?: boolean } | { readonly type: 'boolean'; readonly default?: boolean };

const STRING: OptionSpec = { type: 'string' };
const FLAG: OptionSpec = { type: 'boolean', default: false };
const STRINGS: OptionSpec = { type: 'string', multiple: true };

/** Names of the stack resources, each overriding the outputs file (lib/cli/aws.ts). */
const STACK_FLAGS = {
  outputs: STRING,
  bucket: STRING,
  'state-machine': STRING,
  'ledger-table': STRING,
  'budget-table': STRING,
} as const;

/** The options each command accepts; anything else is an error, so a typo never passes silently. */
const OPTIONS: Readonly<Record<string, Readonly<Record<string, OptionSpec>>>> = {
  run: { 'data-dir': STRING, 'allow-partial': FLAG, quiet: FLAG, 'poll-interval': STRING, 'retry-failed': FLAG },
  plan: { 'data-dir': STRING, 'allow-partial': FLAG, quiet: FLAG, aws: FLAG, ...STACK_FLAGS },
  analyze: { 'data-dir': STRING, 'allow-partial': FLAG, quiet: FLAG, replies: STRING, out: STRING, battery: STRING, input: STRINGS },
  start: { 'allow-partial': FLAG, aws: FLAG, 'retry-failed': FLAG, ...STACK_FLAGS },
  status: { 'data-dir': STRING, aws: FLAG, failures: STRING, ...STACK_FLAGS },
  stop: { 'data-dir': STRING, aws: FLAG, ...STACK_FLAGS },
  results: {
    'data-dir': STRING,
    out: STRING,
    workgroup: STRING,
    database: STRING,
    'athena-endpoint': STRING,
    ...STACK_FLAGS,
  },
};

/** Parses one command's arguments (exported for tests). */
export function parse(command: string, args: readonly string[]): CliArgs {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], allowPositionals: true, options: { ...OPTIONS[command] } });
  } catch (err) {
    throw new SondageError(`sondage ${command}: ${(err as Error).message}\n\n${USAGE}`);
  }
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
  const str = (name: string): string | undefined => (typeof values[name] === 'string' ? (values[name] as string) : undefined);
  const common = {
    allowPartial: values['allow-partial'] === true,
    quiet: values.quiet === true,
    aws: values.aws === true,
    ...(str('data-dir') ? { dataDir: str('data-dir') } : {}),
    ...(str('poll-interval') !== undefined ? { pollInterval: str('poll-interval') } : {}),
    ...(str('outputs') !== undefined ? { outputs: str('outputs') } : {}),
    ...(str('out') !== undefined ? { out: str('out') } : {}),
    values,
  };
  if (command === 'analyze' && (values.replies !== undefined || values.out !== undefined)) {
    const replies = str('replies');
    const out = str('out');
    if (!replies || !out) throw new SondageError(`sondage: --replies and --out go together\n\n${USAGE}`);
    if (parsed.positionals.length > 0) throw new SondageError(`sondage: give either a campaign file or --replies, not both\n\n${USAGE}`);
    return { ...common, file: '', replies, out };
  }
  const file = parsed.positionals[0];
  if (!file) {
    const what = ['status', 'stop', 'results'].includes(command) ? 'campaign file or name' : 'campaign file';
    throw new SondageError(`sondage: missing the ${what}\n\n${USAGE}`);
  }
  if (parsed.positionals.length > 1) {
    throw new SondageError(`sondage ${command}: one campaign at a time (got ${parsed.positionals.join(', ')})\n\n${USAGE}`);
  }
  return { ...common, file };
}
