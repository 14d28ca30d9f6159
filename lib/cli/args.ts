/**
 * The command line as the commands receive it: each command's options (anything else is an
 * error, so a typo never passes silently) and the parsed arguments. Apart from main.ts so that
 * the commands it loads can take CliArgs without importing it back.
 */
import { parseArgs } from 'node:util';
import { SondageError } from '../errors.js';
import { commandHelp } from './help.js';

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
  /** new: what to write, the word after `new` (`battery`; anything else is refused by the command). */
  readonly create?: string;
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
export const OPTIONS: Readonly<Record<string, Readonly<Record<string, OptionSpec>>>> = {
  run: { 'data-dir': STRING, 'allow-partial': FLAG, quiet: FLAG, 'poll-interval': STRING, 'retry-failed': FLAG, threads: STRING, 'max-wait': STRING },
  plan: { aws: FLAG },
  analyze: { 'data-dir': STRING, replies: STRING, out: STRING, battery: STRING, input: STRINGS, 'drop-bad-rows': FLAG, 'full-precision': FLAG, draws: STRING, seed: STRING },
  start: { 'allow-partial': FLAG, aws: FLAG, 'retry-failed': FLAG, ...STACK_FLAGS },
  status: { 'data-dir': STRING, aws: FLAG, failures: STRING, ...STACK_FLAGS },
  stop: { 'data-dir': STRING, aws: FLAG, ...STACK_FLAGS },
  batteries: {},
  new: { dir: STRING },
  // purge parses its arguments itself (lib/cli/commands/purge.ts); listed so that its help is checked against them.
  purge: { 'data-dir': STRING, yes: FLAG, aws: FLAG, ...STACK_FLAGS },
  schema: {},
  // view parses its arguments itself (its campaign file is optional; lib/cli/commands/view.ts).
  view: { 'data-dir': STRING, port: STRING },
  results: {
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
    throw new SondageError(`sondage ${command}: ${(err as Error).message}\n\n${commandHelp(command)}`);
  }
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
  // `--data-dir=` (an unset variable in a script) would silently fall back to the campaign's data_dir.
  if (values['data-dir'] === '') throw new SondageError(`sondage ${command}: --data-dir is empty; give a folder, or leave the flag out to use the campaign's data_dir`);
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
    if (!replies || !out) throw new SondageError(`sondage analyze: --replies and --out go together\n\n${commandHelp(command)}`);
    if (parsed.positionals.length > 0) throw new SondageError(`sondage analyze: give either a campaign file or --replies, not both\n\n${commandHelp(command)}`);
    return { ...common, file: '', replies, out };
  }
  if (command === 'new') {
    const [what, name, ...more] = parsed.positionals;
    // Another word than `battery` (a built-in battery's name) is answered by the command, which knows the batteries.
    if (what === undefined || (what === 'battery' && (!name || more.length > 0))) throw new SondageError(`sondage new: expected \`sondage new battery <name>\`\n\n${commandHelp(command)}`);
    return { ...common, file: name ?? '', create: what };
  }
  if (command === 'batteries' || command === 'schema') {
    if (parsed.positionals.length > (command === 'batteries' ? 1 : 0)) throw new SondageError(`sondage ${command}: unexpected ${parsed.positionals.join(' ')}\n\n${commandHelp(command)}`);
    return { ...common, file: parsed.positionals[0] ?? '' };
  }
  const file = parsed.positionals[0];
  if (!file) {
    const what = ['status', 'stop', 'results'].includes(command) ? 'campaign file or name' : 'campaign file';
    throw new SondageError(`sondage: missing the ${what}\n\n${commandHelp(command)}`);
  }
  if (parsed.positionals.length > 1) {
    throw new SondageError(`sondage ${command}: one campaign at a time (got ${parsed.positionals.join(', ')})\n\n${commandHelp(command)}`);
  }
  return { ...common, file };
}
