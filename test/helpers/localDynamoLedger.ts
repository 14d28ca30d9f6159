/**
 * A DynamoLedger on the DynamoDB-speaking server of test/store/dynamoServer.ts, started before the
 * tests of a file (or describe block) and closed after them.
 */
import { afterAll, beforeAll } from 'vitest';
import { DynamoLedger } from '../../lib/store/DynamoLedger.js';
import { startDynamoServer, type DynamoServer } from '../store/dynamoServer.js';

export interface LocalDynamoLedger {
  readonly server: DynamoServer;
  readonly ledger: DynamoLedger;
}

/**
 * Registers the hooks; read the fields inside tests and hooks only.
 *
 * @example
 * const dynamo = useLocalDynamoLedger();
 * it('…', async () => { await dynamo.ledger.registerItems(…); });
 */
export function useLocalDynamoLedger(): LocalDynamoLedger {
  const dynamo = useDynamoLedgers();
  let ledger: DynamoLedger | undefined;
  afterAll(async () => {
    await ledger?.close();
    ledger = undefined;
  });
  return {
    get server() {
      return dynamo.server;
    },
    get ledger() {
      ledger ??= dynamo.open();
      return ledger;
    },
  };
}

export interface DynamoLedgers {
  readonly server: DynamoServer;
  /** A new DynamoLedger on the server (tables `ledger` and `budget`), as run `runId` when given; the caller closes it. */
  open(runId?: string): DynamoLedger;
}

/**
 * The DynamoDB-speaking server for all the tests of a file, and fresh ledgers on it: for tests that
 * open several ledgers (one per run, or one per backend of an `it.each`). Registers the hooks; call
 * `open` and read `server` inside tests and hooks only.
 *
 * @example
 * const dynamo = useDynamoLedgers();
 * it('…', async () => { const ledger = dynamo.open('exec-1'); … await ledger.close(); });
 */
export function useDynamoLedgers(): DynamoLedgers {
  let server: DynamoServer | undefined;
  beforeAll(async () => {
    server = await startDynamoServer();
  });
  afterAll(async () => {
    await server?.close();
    server = undefined;
  });
  const live = (): DynamoServer => {
    if (server === undefined) throw new Error('useDynamoLedgers: read outside a test or hook');
    return server;
  };
  return {
    get server() {
      return live();
    },
    open: (runId) =>
      new DynamoLedger({
        ledgerTable: 'ledger',
        budgetTable: 'budget',
        ...(runId === undefined ? {} : { runId }),
        clientConfig: { endpoint: live().url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 },
      }),
  };
}
