import { SondageError } from '../errors.js';
import { describeStorageFailure } from '../store/storageErrors.js';
import { readFileSync } from 'node:fs';
import { parse } from './args.js';
import { packageRoot } from './packageRoot.js';
import { COMMAND_HELP, commandHelp, generalHelp } from './help.js';

/** The version in package.json. */
function version(): string {
  return (JSON.parse(readFileSync(new URL('package.json', packageRoot()), 'utf8')) as { version: string }).version;
}

/** The `sondage` command. Returns the exit code; thin over lib/. */
export async function main(argv: readonly string[]): Promise<number> {
  const [given, ...rest] = argv;
  const command = given === 'analyse' ? 'analyze' : given;
  try {
    if (command !== undefined && Object.hasOwn(COMMAND_HELP, command) && (rest.includes('--help') || rest.includes('-h'))) {
      process.stdout.write(commandHelp(command));
      return 0;
    }
    // One case per command, each with its own literal import: a command's module (and its
    // dependencies) is loaded only when it runs, and bundlers can follow a literal path.
    switch (command) {
      case 'run':
        return await (await import('./commands/run.js')).runCommand(parse(command, rest));
      case 'plan':
        return await (await import('./commands/plan.js')).planCommand(parse(command, rest));
      case 'analyze':
        return await (await import('./commands/analyze.js')).analyzeCommand(parse(command, rest));
      case 'start':
        return await (await import('./commands/start.js')).startCommand(parse(command, rest));
      case 'status':
        return await (await import('./commands/status.js')).statusCommand(parse(command, rest));
      case 'stop':
        return await (await import('./commands/stop.js')).stopCommand(parse(command, rest));
      case 'results':
        return await (await import('./commands/results.js')).resultsCommand(parse(command, rest));
      case 'batteries':
        return await (await import('./commands/batteries.js')).batteriesCommand(parse(command, rest));
      case 'new':
        return await (await import('./commands/new.js')).newCommand(parse(command, rest));
      case 'purge': // parses its own options (lib/cli/commands/purge.ts); --help is answered above
        return await (await import('./commands/purge.js')).purgeCommand(rest);
      case 'view': // parses its own options (lib/cli/commands/view.ts); --help is answered above
        return await (await import('./commands/view.js')).viewCommand(rest);
      case 'schema':
        parse(command, rest);
        return await (await import('./commands/schema.js')).schemaCommand();
      case '--version':
      case '-v':
        process.stdout.write(`sondage ${version()}\n`);
        return 0;
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        if (command === 'help' && rest[0] !== undefined && Object.hasOwn(COMMAND_HELP, rest[0])) {
          process.stdout.write(commandHelp(rest[0]));
          return 0;
        }
        if (command !== undefined) {
          process.stdout.write(generalHelp());
          return 0;
        }
        // No command is a usage error (docs/troubleshooting.md, exit 1): the help goes where errors go.
        process.stderr.write(`sondage: no command given\n\n${generalHelp()}`);
        return 1;
      default:
        process.stderr.write(`sondage: unknown command "${command}"\n\n${generalHelp()}`);
        return 2;
    }
  } catch (err) {
    if (err instanceof SondageError) {
      process.stderr.write(`${err.message}\n`);
      return 1;
    }
    // The machine's failures (disk full, read-only folder, damaged ledger): a sentence, not a trace.
    const storage = describeStorageFailure(err);
    if (storage !== undefined) {
      process.stderr.write(`${storage}\n`);
      return 1;
    }
    throw err;
  }
}
