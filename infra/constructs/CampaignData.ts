import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { IConstruct } from 'constructs';
import { logicalId } from './logicalId.js';
import { ATHENA_RESULTS_EXPIRY_DAYS, BEDROCK_BATCH_EXPIRY_DAYS, PREFIX, SCRATCH_EXPIRY_DAYS, TTL_ATTRIBUTE } from '../../lib/config/index.js';
import { COMPUTE_BUDGET_ATTRIBUTES } from '../../lib/store/dynamo/budgetAttributes.js';

/** Item reads of a table (ConditionCheckItem: the condition-only action of a transaction). */
const ITEM_READS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:ConditionCheckItem'] as const;
/** Item writes of a table. */
const ITEM_WRITES = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'] as const;

export interface CampaignDataProps {
  /** RETAIN by default: replies cost money to regenerate. */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * Where a campaign lives on AWS (DESIGN.md "Data contracts"): the data bucket with the same key layout
 * as `data/` locally, the ledger table (item, part and campaign states) and the budget table
 * (cap, spend, reservations).
 */
export class CampaignData extends Construct {
  public readonly bucket: s3.Bucket;
  public readonly accessLogs: s3.Bucket;
  public readonly ledger: dynamodb.TableV2;
  public readonly budget: dynamodb.TableV2;

  constructor(scope: Construct, id: string, props: CampaignDataProps = {}) {
    super(scope, id);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;

    this.accessLogs = new s3.Bucket(this, 'AccessLogs', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ id: 'expire-access-logs', expiration: Duration.days(365) }],
      removalPolicy,
    });
    // cdk-nag's S1 (server access logs) passes over a bucket that is an access-log target: nothing to acknowledge.

    this.bucket = new s3.Bucket(this, 'Bucket', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      versioned: true,
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: 'data-bucket/',
      lifecycleRules: [
        { id: 'expire-scratch', prefix: PREFIX.scratch, expiration: Duration.days(SCRATCH_EXPIRY_DAYS), noncurrentVersionExpiration: Duration.days(1) },
        {
          id: 'expire-athena-results',
          prefix: PREFIX.athenaResults,
          expiration: Duration.days(ATHENA_RESULTS_EXPIRY_DAYS),
          noncurrentVersionExpiration: Duration.days(1),
        },
        {
          // Bedrock batch jobs' input and output JSONL (infra/constructs/BedrockBatch.ts): the replies
          // are stored as Parquet once a job is read, so its files are only worth keeping until then.
          id: 'expire-bedrock-batch',
          prefix: PREFIX.bedrockBatch,
          expiration: Duration.days(BEDROCK_BATCH_EXPIRY_DAYS),
          noncurrentVersionExpiration: Duration.days(1),
        },
        // Versioning guards replies against an overwrite; old versions need not live forever.
        { id: 'expire-old-versions', noncurrentVersionExpiration: Duration.days(30), abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy,
    });

    const common = {
      billing: dynamodb.Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy,
    } as const;
    // pk = CAMPAIGN#c | ITEM#c#phase#shard (16 shards, lib/store/DynamoLedger.ts ITEM_SHARDS) | PART#c#phase | BATCH#c#phase; sk = item id, part key, batch id.
    // Provider batch ids are only useful while the batch runs: they carry a TTL.
    this.ledger = new dynamodb.TableV2(this, 'Ledger', {
      ...common,
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
      timeToLiveAttribute: TTL_ATTRIBUTE,
    });
    // pk = campaign; sk = BUDGET | RES#<reservation id>. No TTL: a reservation deleted behind the
    // budget item's back would leave its amount reserved forever; `releaseStale` removes them instead.
    this.budget = new dynamodb.TableV2(this, 'Budget', {
      ...common,
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
    });
  }

  /**
   * Least privilege for the plan: campaign and scratch objects, the two tables' item operations.
   * The plan alone writes the cap (initCampaign, for `sondage start --aws`).
   */
  public grantPlan(grantee: iam.IGrantable): void {
    this.grantObjects(grantee);
    this.ledger.grant(grantee, ...ITEM_READS, ...ITEM_WRITES);
    this.budget.grant(grantee, ...ITEM_READS, ...ITEM_WRITES);
  }

  /**
   * Least privilege for a worker Lambda and the GPU job: campaign and scratch objects, the ledger
   * table's item operations, and the budget table's reads and only the writes whose attributes are
   * all in COMPUTE_BUDGET_ATTRIBUTES (lib/store/dynamo/budgetAttributes.ts), so that neither can
   * write the cap. DynamoDB checks `dynamodb:Attributes` on each PutItem, UpdateItem and DeleteItem,
   * inside a TransactWriteItems too (its actions are governed by those permissions); it cannot
   * check an update's arithmetic, so a role that settles spend can still move the headroom
   * (docs/aws-security.md says what that leaves).
   */
  public grantWorker(grantee: iam.IGrantable): void {
    this.grantObjects(grantee);
    this.ledger.grant(grantee, ...ITEM_READS, ...ITEM_WRITES);
    this.budget.grant(grantee, ...ITEM_READS);
    iam.Grant.addToPrincipal({
      grantee,
      // No BatchWriteItem: the budget table is written one item, or one transaction, at a time.
      actions: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
      resourceArns: [this.budget.tableArn],
      conditions: { 'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...COMPUTE_BUDGET_ATTRIBUTES] } },
    });
  }

  private grantObjects(grantee: iam.IGrantable): void {
    iam.Grant.addToPrincipal({
      grantee,
      actions: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
      resourceArns: [this.bucket.arnForObjects(`${PREFIX.campaigns}*`), this.bucket.arnForObjects(`${PREFIX.scratch}*`)],
    });
    iam.Grant.addToPrincipal({ grantee, actions: ['s3:ListBucket'], resourceArns: [this.bucket.bucketArn] });
  }

  /**
   * Acknowledges cdk-nag's wildcard finding for the object prefixes grantWorker names, on the
   * construct holding the grantee's policy: `campaigns/*` and `scratch/*` are key prefixes (one
   * object per part file), not wildcards over actions or over other buckets.
   */
  public acknowledgePrefixGrants(scope: IConstruct): void {
    const bucketId = logicalId(this.bucket.node.defaultChild as s3.CfnBucket);
    for (const prefix of [PREFIX.campaigns, PREFIX.scratch]) {
      Validations.of(scope).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${prefix}*]`,
        reason: `Objects under the ${prefix} prefix of the campaign bucket only: a worker writes one part file per shard, keys unknown before the run.`,
      });
    }
  }

  /**
   * The report's writes: its result files, `campaigns/<c>/results/…`, and nothing else of the
   * bucket (it reads the campaign through grantReadCampaigns and the Parquet through Athena).
   */
  public grantWriteResults(grantee: iam.IGrantable): void {
    iam.Grant.addToPrincipal({ grantee, actions: ['s3:PutObject'], resourceArns: [this.bucket.arnForObjects(`${PREFIX.campaigns}*/results/*`)] });
  }

  /** Acknowledges cdk-nag's wildcard finding for grantWriteResults' key pattern, on the grantee's construct. */
  public acknowledgeResultsGrant(scope: IConstruct): void {
    const bucketId = logicalId(this.bucket.node.defaultChild as s3.CfnBucket);
    Validations.of(scope).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${PREFIX.campaigns}*/results/*]`,
      reason: 'PutObject on the result files of a campaign only (campaigns/<campaign>/results/<file>): the campaign is known only at run time.',
    });
  }

  /** The report's one ledger call: DynamoLedger.overrunOf, a GetItem on the budget table. */
  public grantReadOverrun(grantee: iam.IGrantable): void {
    this.budget.grant(grantee, 'dynamodb:GetItem');
  }

  /** record-failure's one call: DynamoLedger.recordFailure, an UpdateItem on the ledger table. */
  public grantRecordFailures(grantee: iam.IGrantable): void {
    this.ledger.grant(grantee, 'dynamodb:UpdateItem');
  }

  /** Read-only access to the campaign Parquet (Athena through the state machine, the report). */
  public grantReadCampaigns(grantee: iam.IGrantable): void {
    iam.Grant.addToPrincipal({ grantee, actions: ['s3:GetObject'], resourceArns: [this.bucket.arnForObjects(`${PREFIX.campaigns}*`)] });
    iam.Grant.addToPrincipal({ grantee, actions: ['s3:ListBucket', 's3:GetBucketLocation'], resourceArns: [this.bucket.bucketArn] });
  }
}
