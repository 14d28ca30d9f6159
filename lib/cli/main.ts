import { parseArgs } from 'node:util';
import { SondageError } from '../errors.js';

const USAGE = `sondage — cost-bounded multilingual measurement campaigns on language models

Usage:
  sondage run <campaign.yaml> [--data-dir DIR] [--allow-partial] [--quiet]
      plan, generate, read (token rule + judge), analyse, report; resumable: run it again after
      a kill or a budget stop and only the missing items are requested
  sondage plan <campaign.yaml>
      print the inventory size and the cost estimate per model and phase; calls nothing
  sondage analyze <campaign.yaml> [--data-dir DIR]
      re-run the analysis on what has been collected
  sondage analyze --replies <file-or-dir> --out DIR
      analyse replies collected elsewhere (JSONL, CSV or Parquet rows as in
      schema/replies.schema.json); bad rows are listed and left out
  sondage schema
      print the campaign file's JSON Schema (for editor completion)

Options:
  --data-dir DIR     where prompts, replies, readings, the ledger and results go
                     (default: the campaign's data_dir)
  --allow-partial    start even when the expected cost exceeds budget_usd; stops at the cap
  --quiet            no progress bar
  --replies PATH     analyze: a replies file, or a folder of them
  --out DIR          analyze --replies: where the results files and tables go
`;

/** The `sondage` command. Returns the exit code; thin over lib/. */
export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'run':
        return await (await import('./commands/run.js')).runCommand(parse(rest));
      case 'plan':
        return await (await import('./commands/plan.js')).planCommand(parse(rest));
      case 'analyze':
      case 'analyse':
        return await (await import('./commands/analyze.js')).analyzeCommand(parse(rest, { replies: true }));
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
  readonly file: string;
  readonly dataDir?: string;
  readonly allowPartial: boolean;
  readonly quiet: boolean;
  /** analyze --replies: replies collected elsewhere (then `file` is empty). */
  readonly replies?: string;
  readonly out?: string;
}

function parse(args: readonly string[], accepts: { readonly replies?: boolean } = {}): CliArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: {
        'data-dir': { type: 'string' },
        'allow-partial': { type: 'boolean', default: false },
        quiet: { type: 'boolean', default: false },
        ...(accepts.replies ? { replies: { type: 'string' as const }, out: { type: 'string' as const } } : {}),
      },
    });
  } catch (err) {
    throw new SondageError(`sondage: ${(err as Error).message}\n\n${USAGE}`);
  }
  const values = parsed.values as typeof parsed.values & { replies?: string; out?: string };
  if (values.replies !== undefined || values.out !== undefined) {
    if (!values.replies || !values.out) throw new SondageError(`sondage: --replies and --out go together\n\n${USAGE}`);
    if (parsed.positionals.length > 0) throw new SondageError(`sondage: give either a campaign file or --replies, not both\n\n${USAGE}`);
    return { file: '', replies: values.replies, out: values.out, allowPartial: false, quiet: values.quiet ?? false };
  }
  const file = parsed.positionals[0];
  if (!file) throw new SondageError(`sondage: missing the campaign file\n\n${USAGE}`);
  return {
    file,
    ...(parsed.values['data-dir'] ? { dataDir: parsed.values['data-dir'] } : {}),
    allowPartial: parsed.values['allow-partial'] ?? false,
    quiet: parsed.values.quiet ?? false,
  };
}
