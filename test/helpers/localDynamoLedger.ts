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
  let made: LocalDynamoLedger | undefined;
  beforeAll(async () => {
    const server = await startDynamoServer();
    const ledger = new DynamoLedger({
      ledgerTable: 'ledger',
      budgetTable: 'budget',
      clientConfig: { endpoint: server.url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 },
    });
    made = { server, ledger };
  });
  afterAll(async () => {
    await made?.ledger.close();
    await made?.server.close();
    made = undefined;
  });
  const live = (): LocalDynamoLedger => {
    if (made === undefined) throw new Error('useLocalDynamoLedger: read outside a test or hook');
    return made;
  };
  return {
    get server() {
      return live().server;
    },
    get ledger() {
      return live().ledger;
    },
  };
}
