/**
 * What `sondage --help` and `sondage <command> --help` print: one entry per command, its usage
 * lines, what it does, and the options it takes (the same names the parser accepts, main.ts).
 */
import { DEFAULT_OUTPUTS_FILE } from '../config/index.js';

export interface CommandHelp {
  /** Usage lines, without the leading `sondage `. */
  readonly usage: readonly string[];
  /** What it does, a few lines. */
  readonly summary: string;
  /** Option → one line, for the options the command takes. */
  readonly options: Readonly<Record<string, string>>;
  /** Exit code → what it means, for commands whose codes say more than success and failure. */
  readonly exitCodes?: Readonly<Record<number, string>>;
}

const DATA_DIR = "where prompts, replies, readings, the ledger and results go (default: the campaign's data_dir)";
const STACK = {
  '--outputs FILE': `the stack's outputs (\`cdk deploy --outputs-file FILE\`; default ${DEFAULT_OUTPUTS_FILE})`,
  '--bucket, --state-machine, --ledger-table, --budget-table': 'override one name of the outputs file (or the SONDAGE_* variables)',
};

export const COMMAND_HELP: Readonly<Record<string, CommandHelp>> = {
  run: {
    usage: ['run <campaign.yaml> [--data-dir DIR] [--allow-partial] [--quiet] [--poll-interval SECONDS] [--retry-failed] [--threads N] [--max-wait SECONDS]'],
    summary:
      "plan, ask, read, analyse and report the campaign's battery on this machine, phase after phase;\nresumable: run it again after a kill or a budget stop and only the missing items are requested",
    options: {
      '--data-dir DIR': DATA_DIR,
      '--allow-partial': 'start even when the expected cost exceeds budget_usd; stops at the cap',
      '--quiet': 'no progress bar',
      '--poll-interval S': 'seconds between polls of open provider batches',
      '--retry-failed': 'also ask again the items whose last attempt failed for good (refusal, content_filter, bad_request, not_found, or an empty reply); every run re-asks transient failures (rate_limit, server_error, timeout, connection, malformed_response) without it',
      '--threads N': 'threads that run the partitions of simulated models (1: one thread); default: the cores, up to 4, for a wave of 20,000 calls or more, as many as fit 2 GB and the free memory, each thread costing the heap the main thread holds (its copy of the design) and the rows of its partitions. Real providers always run on the main thread',
      '--max-wait S': "the longest Retry-After a provider may ask for that the run sits out (default 300); a longer one stops that model's calls, keeps its items pending and says when to resume",
    },
    exitCodes: {
      0: 'done (some items may have failed: the run says how many)',
      1: 'bad input (the campaign file, a file it names, a flag) or a data folder that cannot take the data (a file, read-only, full); what was committed is kept',
      3: 'stopped at the budget cap, or because a provider reported more usage than a call reserved (the run names the model)',
      4: "a provider rejected an API key: that endpoint's items stay pending, the others are collected and analysed",
      5: 'calls were made and none was answered (every item failed): see `sondage status --failures 5`',
      6: "a provider asked to wait longer than --max-wait: that model's items stay pending, the run says when to resume",
      7: 'a readout (P(True)) could be read for none of its rows: every figure resting on it is "–"; the WARNING line says why',
      130: 'interrupted (Ctrl-C, SIGTERM); run again to resume',
    },
  },
  plan: {
    usage: ['plan <campaign.yaml> [--aws]'],
    summary: 'print the inventory per model and phase and its cost estimate; calls nothing',
    options: { '--aws': 'add what the AWS pipeline itself costs (Lambda, Step Functions, S3, DynamoDB, Athena)' },
  },
  analyze: {
    usage: ['analyze <campaign.yaml> [--data-dir DIR]', 'analyze --battery NAME --replies <file-or-dir> --out DIR [--input NAME=FILE …] [--drop-bad-rows] [--draws N] [--seed N] [--full-precision]'],
    summary:
      'run the battery\'s analysis again on what has been collected; or analyse replies collected elsewhere\nin the battery\'s format (`sondage batteries` lists each format); a bad row refuses the input\n(every problem in DIR/import_issues.csv) unless --drop-bad-rows',
    options: {
      '--data-dir DIR': DATA_DIR,
      '--battery NAME': 'with --replies: the battery the rows belong to',
      '--replies PATH': 'a replies file, or a folder of them',
      '--out DIR': 'with --replies: where the result files (and converted tables) go',
      '--input NAME=FILE': 'with --replies: another file the battery needs (X-Value: qa_pairs=FILE); repeatable',
      '--drop-bad-rows': 'with --replies: leave bad rows out (listed in import_issues.csv) and analyse the rest',
      '--draws N': 'with --replies: bootstrap draws (FAR-6: 300, P(True): 200); written to byo_manifest.json',
      '--seed N': 'with --replies: bootstrap seed (FAR-6, P(True)); written to byo_manifest.json',
      '--full-precision': 'with --replies: numbers in the result CSVs at full precision (default: 6 decimals)',
    },
  },
  start: {
    usage: ['start <campaign.yaml> --aws [--retry-failed] [--allow-partial] [--outputs FILE]'],
    summary: 'validate the campaign here, upload it with the files it names, start the state machine;\nstarting again after a stop resumes from the ledger',
    options: {
      '--aws': 'required: the deployed stack',
      '--retry-failed': 'ask again the items whose last attempt failed for good',
      '--allow-partial': 'start even when the expected cost exceeds budget_usd; the execution plans it too and stops at the cap',
      ...STACK,
    },
  },
  status: {
    usage: ['status <campaign> [--aws] [--failures N] [--outputs FILE] [--data-dir DIR]'],
    summary: 'progress per phase, spend against the cap, open provider batches, recorded failures',
    options: { '--aws': 'the deployed stack instead of this machine', '--failures N': 'how many recorded failures to show', '--data-dir DIR': DATA_DIR, ...STACK },
  },
  stop: {
    usage: ['stop <campaign> [--aws] [--outputs FILE] [--data-dir DIR]'],
    summary: 'stop the running execution(s) and cancel open provider batches; nothing collected is lost',
    options: { '--aws': 'the deployed stack instead of this machine', '--data-dir DIR': DATA_DIR, ...STACK },
  },
  results: {
    usage: ['results <campaign> [--workgroup W] [--database D] [--athena-endpoint URL] [--out DIR]'],
    summary: "run the battery's analysis through Athena and print its results table",
    options: {
      '--out DIR': 'also write the result files there',
      '--workgroup W, --database D': 'override the Athena workgroup and Glue database of the outputs file',
      '--athena-endpoint URL': 'an Athena-speaking endpoint (tests, LocalStack)',
      ...STACK,
    },
  },
  purge: {
    usage: ['purge <campaign> [--data-dir DIR] [--yes]', 'purge <campaign> --aws [--yes] [--outputs FILE]'],
    summary: `delete one campaign's data after showing what will be deleted and asking y/N:
  here:   its folder <data dir>/campaigns/<campaign>/ (prompts, replies, readings, journals, results,
          input) and its rows in <data dir>/ledger.sqlite; other campaigns are not touched
  --aws:  every version of every object under s3://<bucket>/campaigns/<campaign>/ and the campaign's
          items in the ledger and budget tables
refuses while the campaign runs: here while a run holds its lock, on AWS while an execution runs or
ended less than the worker timeout ago (its workers may still be writing); <campaign> is its name,
or its campaign file`,
    options: {
      '--data-dir DIR': 'the data directory (default: the campaign file\'s data_dir; needed with a name)',
      '--yes': 'do not ask (needed when standard input is not a terminal)',
      '--aws': 'the deployed stack instead of this machine',
      ...STACK,
    },
  },
  batteries: {
    usage: ['batteries [NAME | PATH]'],
    summary:
      'list the batteries (studies) sondage runs: where each comes from, phases, who answers each, languages,\nreaders, roles, the format of replies brought from elsewhere; PATH loads a battery of your own first',
    options: {},
  },
  new: {
    usage: ['new battery <name> [--dir DIR]'],
    summary:
      'write a working battery of your own to start from, in DIR/<name>/ (default: the current folder): the\nbattery module, questions, SQL, a campaign with simulated models, a test and a README; run it at once',
    options: { '--dir DIR': 'the folder to create <name>/ in (default: the current folder)' },
  },
  view: {
    usage: ['view [campaign.yaml] [--data-dir DIR] [--port N]'],
    summary: "a read-only viewer in the browser, on 127.0.0.1 only: the data folder's campaigns, live progress,\nresult tables, and from any cell the replies behind it with every reading (docs/view.md)",
    options: { '--data-dir DIR': 'the data folder to show (default: the campaign file\'s data_dir)', '--port N': 'the port on 127.0.0.1 (default 4178; 0: any free port)' },
  },
  schema: {
    usage: ['schema'],
    summary: "print the campaign file's JSON Schema, every battery's design section included (for editor completion)",
    options: {},
  },
};

function optionLines(options: Readonly<Record<string, string>>): string {
  const width = Math.max(0, ...Object.keys(options).map((k) => k.length));
  return Object.entries(options)
    .map(([k, v]) => `  ${k.padEnd(width)}  ${v}`)
    .join('\n');
}

/** `sondage <command> --help`. */
export function commandHelp(command: string): string {
  const h = COMMAND_HELP[command]!;
  const usage = h.usage.map((u) => `  sondage ${u}`).join('\n');
  const options = Object.keys(h.options).length > 0 ? `\nOptions:\n${optionLines({ ...h.options, '--help': 'this text' })}\n` : '';
  const codes = h.exitCodes ? `\nExit codes:\n${optionLines(Object.fromEntries(Object.entries(h.exitCodes)))}\n` : '';
  return `Usage:\n${usage}\n\n${h.summary}\n${options}${codes}`;
}

/** `sondage --help`. */
export function generalHelp(): string {
  const commands = Object.values(COMMAND_HELP)
    .map((h) => `${h.usage.map((u) => `  sondage ${u}`).join('\n')}\n${h.summary.replace(/^/gm, '      ')}`)
    .join('\n');
  return `sondage — cost-bounded multilingual measurement campaigns on language models

Usage:
${commands}
  sondage <command> --help     the command's options
  sondage --version

Endpoints: the AWS SDK's own AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SFN and
AWS_ENDPOINT_URL_ATHENA (or AWS_ENDPOINT_URL) point the AWS commands at LocalStack or local servers.
`;
}
