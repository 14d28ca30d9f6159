/**
 * A campaign's items in the two DynamoDB tables as a PurgeSource (`sondage purge --aws`). Loaded
 * lazily by the CLI, like DynamoLedger, not re-exported from lib/store/index.ts.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { ScanCommandInput } from '@aws-sdk/lib-dynamodb';
import { SondageError } from '../errors.js';
import type { PurgeCount, PurgeSource, PurgeSurvey } from './purge.js';
import { backoff, queryPages } from './dynamo/context.js';

/** Parallel Scan segments of the ledger table. */
const SCAN_SEGMENTS = 4;
/** BatchWriteItem takes at most 25 requests. */
const BATCH_WRITE_ITEMS = 25;
const WRITE_CONCURRENCY = 8;
/** Retries of deletes DynamoDB hands back unprocessed (throttled), with backoff. */
const BATCH_WRITE_RETRIES = 12;

/** What DynamoLedger's partition-key kinds hold, for people; another kind shows its own name. */
const LEDGER_KINDS: Readonly<Record<string, string>> = {
  ITEM: 'item states',
  PART: 'committed parts',
  SEQ: 'registration counters',
  BATCH: 'provider batches and batch intents',
  FAILURE: 'recorded failures',
};
const BUDGET_KINDS: Readonly<Record<string, string>> = { BUDGET: 'budget (cap and spend)', RES: 'reservations' };

type Key = { readonly pk: string; readonly sk: string };
interface DynamoPlan {
  readonly ledger: readonly Key[];
  readonly budget: readonly Key[];
}

/**
 * The campaign a ledger-table partition key belongs to. DynamoLedger keys every ledger row
 * `<KIND>#<campaign>` or `<KIND>#<campaign>#<more>` (ITEM#c#phase, PART#c#phase, SEQ#c#phase,
 * BATCH#c, FAILURE#c), and campaign names cannot hold `#` (layout.ts safe segments), so the second
 * field is the campaign whatever follows it (a phase, a shard). test/store/purge.test.ts fills
 * a ledger through DynamoLedger's own methods and checks that this finds every row.
 * @example ledgerKeyCampaign('ITEM#demo#generate') // 'demo'
 */
export function ledgerKeyCampaign(pk: string): string | undefined {
  const m = /^[A-Z][A-Z0-9_]*#([^#]+)(?:#|$)/.exec(pk);
  return m?.[1];
}

function tallyKinds(keys: readonly Key[], kindOf: (k: Key) => string, labels: Readonly<Record<string, string>>): PurgeCount[] {
  const by = new Map<string, number>();
  for (const k of keys) by.set(kindOf(k), (by.get(kindOf(k)) ?? 0) + 1);
  return [...by].map(([kind, count]) => ({ what: labels[kind] ?? kind, count }));
}

export interface DynamoCampaignItemsOptions {
  readonly ledgerTable: string;
  readonly budgetTable: string;
  readonly client: DynamoDBClient;
}

/**
 * The campaign's rows in the ledger table (found by a Scan: their partition keys are many, one per
 * phase, and may gain shards, so no set of Queries is sure to reach them all; the Scan reads the
 * whole table once, in SCAN_SEGMENTS parallel segments, keys only) and in the budget table (one
 * Query: its partition key is the campaign). Deleted by key, 25 per BatchWriteItem, throttled
 * deletes retried with backoff.
 *
 * The CLI's credentials need dynamodb:Scan and dynamodb:BatchWriteItem on the ledger table, and
 * dynamodb:Query and dynamodb:BatchWriteItem on the budget table.
 */
export class DynamoCampaignItems implements PurgeSource<DynamoPlan> {
  private readonly db: DynamoDBDocumentClient;
  private readonly ledgerTable: string;
  private readonly budgetTable: string;

  constructor(options: DynamoCampaignItemsOptions) {
    this.db = DynamoDBDocumentClient.from(options.client);
    this.ledgerTable = options.ledgerTable;
    this.budgetTable = options.budgetTable;
  }

  private async scanSegment(campaign: string, segment: number): Promise<Key[]> {
    const out: Key[] = [];
    let start: ScanCommandInput['ExclusiveStartKey'];
    do {
      const page = await this.db.send(
        new ScanCommand({
          TableName: this.ledgerTable,
          ProjectionExpression: '#pk, #sk',
          ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
          Segment: segment,
          TotalSegments: SCAN_SEGMENTS,
          ConsistentRead: true,
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of page.Items ?? []) {
        if (typeof item.pk === 'string' && typeof item.sk === 'string' && ledgerKeyCampaign(item.pk) === campaign) out.push({ pk: item.pk, sk: item.sk });
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return out;
  }

  private async budgetKeys(campaign: string): Promise<Key[]> {
    const items = await queryPages(this.db, {
      TableName: this.budgetTable,
      KeyConditionExpression: '#pk = :c',
      ProjectionExpression: '#pk, #sk',
      ExpressionAttributeNames: { '#pk': 'pk', '#sk': 'sk' },
      ExpressionAttributeValues: { ':c': campaign },
      ConsistentRead: true,
    });
    return items.flatMap((item) => (typeof item.sk === 'string' ? [{ pk: campaign, sk: item.sk }] : []));
  }

  async survey(campaign: string): Promise<PurgeSurvey<DynamoPlan>> {
    const segments = await Promise.all(Array.from({ length: SCAN_SEGMENTS }, (_, i) => this.scanSegment(campaign, i)));
    const ledger = segments.flat();
    const budget = await this.budgetKeys(campaign);
    const counts = [
      ...tallyKinds(ledger, (k) => k.pk.slice(0, k.pk.indexOf('#')), LEDGER_KINDS).map((c) => ({ ...c, what: `ledger: ${c.what}` })),
      ...tallyKinds(budget, (k) => k.sk.split('#')[0]!, BUDGET_KINDS).map((c) => ({ ...c, what: `budget: ${c.what}` })),
    ];
    return { where: `DynamoDB tables ${this.ledgerTable} and ${this.budgetTable}`, counts, plan: { ledger, budget } };
  }

  private async deleteKeys(table: string, keys: readonly Key[], progress: (n: number) => void): Promise<void> {
    const batches: Key[][] = [];
    for (let i = 0; i < keys.length; i += BATCH_WRITE_ITEMS) batches.push(keys.slice(i, i + BATCH_WRITE_ITEMS));
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < batches.length) {
        let pending: Key[] = batches[next++]!;
        for (let attempt = 0; pending.length > 0; attempt++) {
          if (attempt > BATCH_WRITE_RETRIES) {
            throw new SondageError(`DynamoDB kept ${pending.length} deletes in ${table} unprocessed after ${BATCH_WRITE_RETRIES} retries (throttled); the rest were deleted`);
          }
          if (attempt > 0) await backoff(attempt);
          const out = await this.db.send(new BatchWriteCommand({ RequestItems: { [table]: pending.map((Key) => ({ DeleteRequest: { Key } })) } }));
          const left = (out.UnprocessedItems?.[table] ?? []).map((r) => r.DeleteRequest?.Key as Key | undefined).filter((k): k is Key => k !== undefined);
          progress(pending.length - left.length);
          pending = left;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(WRITE_CONCURRENCY, batches.length) }, lane));
  }

  async purge(_campaign: string, survey: PurgeSurvey<DynamoPlan>, onProgress?: (deleted: number) => void): Promise<readonly PurgeCount[]> {
    let deleted = 0;
    const progress = (n: number): void => {
      deleted += n;
      onProgress?.(deleted);
    };
    // The budget last: a purge interrupted half-way leaves the spend counted, so a run started
    // before the purge is finished cannot spend the cap a second time.
    await this.deleteKeys(this.ledgerTable, survey.plan.ledger, progress);
    await this.deleteKeys(this.budgetTable, survey.plan.budget, progress);
    return survey.counts;
  }
}
