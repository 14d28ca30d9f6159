/**
 * The deployed stack, faked on 127.0.0.1 for the CLI's `--aws` tests: S3, DynamoDB and Step Functions
 * servers, the SDK's own endpoint variables pointing at them, and the outputs file `cdk deploy
 * --outputs-file` would write. Nothing reaches AWS: credentials are dummies and the shared config
 * files are pointed away.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, vi } from 'vitest';
import { STACK_OUTPUTS } from '../../lib/config/index.js';
import { DynamoLedger } from '../../lib/store/DynamoLedger.js';
import { startDynamoServer } from '../store/dynamoServer.js';
import type { DynamoServer } from '../store/dynamoServer.js';
import { startS3Server } from '../store/s3Server.js';
import type { S3Server } from '../store/s3Server.js';
import { tempDir } from './campaigns.js';
import { startSfnServer } from './sfnServer.js';
import type { SfnServer } from './sfnServer.js';

export const STACK = {
  bucket: 'sondage-data-test',
  stateMachineArn: 'arn:aws:states:us-east-1:123456789012:stateMachine:SondagePipeline',
  ledgerTable: 'sondage-ledger',
  budgetTable: 'sondage-budget',
} as const;

export interface AwsFakes {
  readonly s3: S3Server;
  readonly dynamo: DynamoServer;
  readonly sfn: SfnServer;
  /** The outputs file, `{"Sondage": {…}}`. */
  readonly outputsFile: string;
  /** A ledger on the fake DynamoDB, for filling and checking it. */
  ledger(): DynamoLedger;
  /** Opens a ledger on the fake DynamoDB, lets `fill` write to it, and closes it whatever happens. */
  withLedger(fill: (ledger: DynamoLedger) => Promise<void>): Promise<void>;
  /** The bucket's objects as key → text, under `prefix`. */
  objects(prefix?: string): Map<string, string>;
  close(): Promise<void>;
}

export async function startAwsFakes(dir: string): Promise<AwsFakes> {
  const [s3, dynamo, sfn] = await Promise.all([startS3Server(), startDynamoServer(), startSfnServer()]);
  vi.stubEnv('AWS_ENDPOINT_URL_S3', s3.url);
  vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', dynamo.url);
  vi.stubEnv('AWS_ENDPOINT_URL_SFN', sfn.url);
  vi.stubEnv('AWS_REGION', 'us-east-1');
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
  vi.stubEnv('AWS_MAX_ATTEMPTS', '1');
  // The SDK warns once per process that Node 20 support ends in 2027; the tests compare stderr.
  vi.stubEnv('AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED', 'true');
  vi.stubEnv('AWS_PROFILE', undefined);
  vi.stubEnv('AWS_CONFIG_FILE', path.join(dir, 'no-aws-config'));
  vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', path.join(dir, 'no-aws-credentials'));
  for (const name of ['SONDAGE_BUCKET', 'SONDAGE_LEDGER_TABLE', 'SONDAGE_BUDGET_TABLE', 'SONDAGE_STATE_MACHINE_ARN', 'AWS_ENDPOINT_URL']) vi.stubEnv(name, undefined);

  const outputsFile = path.join(dir, 'sondage.aws.json');
  await writeFile(
    outputsFile,
    JSON.stringify({
      Sondage: {
        [STACK_OUTPUTS.bucket]: STACK.bucket,
        [STACK_OUTPUTS.stateMachineArn]: STACK.stateMachineArn,
        [STACK_OUTPUTS.ledgerTable]: STACK.ledgerTable,
        [STACK_OUTPUTS.budgetTable]: STACK.budgetTable,
        [STACK_OUTPUTS.athenaWorkgroup]: 'sondage',
        [STACK_OUTPUTS.glueDatabase]: 'sondage',
      },
    }),
  );
  const ledger = (): DynamoLedger =>
    new DynamoLedger({
      ledgerTable: STACK.ledgerTable,
      budgetTable: STACK.budgetTable,
      clientConfig: { endpoint: dynamo.url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 },
    });
  return {
    s3,
    dynamo,
    sfn,
    outputsFile,
    ledger,
    async withLedger(fill) {
      const open = ledger();
      try {
        await fill(open);
      } finally {
        await open.close();
      }
    },
    objects(prefix = '') {
      const out = new Map<string, string>();
      for (const [id, body] of s3.objects) {
        const key = id.slice(STACK.bucket.length + 1);
        if (id.startsWith(`${STACK.bucket}/`) && key.startsWith(prefix)) out.set(key, body.toString('utf8'));
      }
      return out;
    },
    async close() {
      vi.unstubAllEnvs();
      await Promise.all([s3.close(), dynamo.close(), sfn.close()]);
    },
  };
}

/** The fakes of {@link startAwsFakes} and the temp folder they were started in. */
export interface AwsFakesInTempDir extends Omit<AwsFakes, 'close'> {
  readonly dir: string;
}

/**
 * Starts the fakes in a fresh temp folder before the file's (or describe block's) tests and closes
 * both after them: the set-up every `--aws` CLI test repeated. Read its fields inside tests and
 * hooks only; a `beforeAll` registered after this call sees them started.
 *
 * @example
 * const aws = useAwsFakes('cli-stop');
 * it('…', async () => { await runMain(['stop', '--aws', aws.outputsFile]); });
 */
export function useAwsFakes(prefix: string): AwsFakesInTempDir {
  let made: { dir: string; cleanup: () => Promise<void> } | undefined;
  let fakes: AwsFakes | undefined;
  beforeAll(async () => {
    made = await tempDir(prefix);
    fakes = await startAwsFakes(made.dir);
  });
  afterAll(async () => {
    await fakes?.close();
    await made?.cleanup();
    fakes = made = undefined;
  });
  const live = (): { fakes: AwsFakes; dir: string } => {
    if (fakes === undefined || made === undefined) throw new Error(`useAwsFakes('${prefix}'): read outside a test or hook`);
    return { fakes, dir: made.dir };
  };
  return {
    get dir() {
      return live().dir;
    },
    get s3() {
      return live().fakes.s3;
    },
    get dynamo() {
      return live().fakes.dynamo;
    },
    get sfn() {
      return live().fakes.sfn;
    },
    get outputsFile() {
      return live().fakes.outputsFile;
    },
    ledger: () => live().fakes.ledger(),
    withLedger: (fill) => live().fakes.withLedger(fill),
    objects: (under?: string) => live().fakes.objects(under),
  };
}
