import * as athena from 'aws-cdk-lib/aws-athena';
import * as glue from 'aws-cdk-lib/aws-glue';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Aws, Stack, Validations } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import type { IConstruct } from 'constructs';
import type { CfnElement } from 'aws-cdk-lib';
import { logicalId } from './logicalId.js';
import { FAR6_SQL } from '../../lib/batteries/far6/sqlLibrary.js';
import { DEFAULT_BYTES_SCANNED_CUTOFF, PREFIX } from '../../lib/config/index.js';
import { LANGUAGES } from '../../lib/batteries/far6/types.js';
import { athenaType, tableColumns } from '../../lib/store/schemas.js';
import { FAR6_PROMPT_COLUMNS } from '../../lib/batteries/far6/promptColumns.js';
import type { TableName } from '../../lib/store/types.js';

export interface AnalyticsProps {
  readonly bucket: s3.IBucket;
  /** Athena cancels a query that scans more. Default DEFAULT_BYTES_SCANNED_CUTOFF (10 GiB). */
  readonly bytesScannedCutoff?: number;
}

const TABLES: readonly TableName[] = ['prompts', 'replies', 'readings'];

/**
 * Athena over the campaign Parquet (DESIGN.md "The flow of one campaign", SQL stage): one Glue table per
 * kind of file, partition projection instead of crawlers, a workgroup whose settings clients cannot
 * override, and the SQL files of lib/analysis/sql as named queries.
 *
 * The layout `campaigns/<c>/<phase>/<table>/model=<m>/language=<l>/` puts campaign and phase in the
 * path, so they are partition keys too. They are called `campaign_key`/`phase_key` because the files
 * also hold `campaign`/`phase` columns and Athena rejects a partition key that repeats a column.
 * Campaign, phase and model are open-ended: `injected` projection, so every query names its values
 * (the analysis passes `WHERE campaign_key = … AND phase_key = … AND model IN (…)` subqueries as
 * the table sources of renderSql); languages are the closed list of lib/design.
 */
export class Analytics extends Construct {
  public readonly database: glue.CfnDatabase;
  public readonly databaseName: string;
  public readonly workgroup: athena.CfnWorkGroup;
  public readonly tables: Readonly<Record<TableName, glue.CfnTable>>;

  constructor(scope: Construct, id: string, props: AnalyticsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.databaseName = `sondage_${stack.stackName.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`;
    this.database = new glue.CfnDatabase(this, 'Database', {
      catalogId: stack.account,
      databaseInput: { name: this.databaseName, description: 'sondage campaign tables (Parquet in the data bucket)' },
    });

    const tables = {} as Record<TableName, glue.CfnTable>;
    for (const name of TABLES) {
      const root = `s3://${props.bucket.bucketName}/${PREFIX.campaigns}`;
      const table = new glue.CfnTable(this, `${name[0]!.toUpperCase()}${name.slice(1)}Table`, {
        catalogId: stack.account,
        databaseName: this.databaseName,
        tableInput: {
          name,
          tableType: 'EXTERNAL_TABLE',
          parameters: {
            classification: 'parquet',
            'projection.enabled': 'true',
            'projection.campaign_key.type': 'injected',
            'projection.phase_key.type': 'injected',
            'projection.model.type': 'injected',
            'projection.language.type': 'enum',
            'projection.language.values': LANGUAGES.join(','),
            'storage.location.template': `${root}\${campaign_key}/\${phase_key}/${name}/model=\${model}/language=\${language}/`,
          },
          partitionKeys: [
            { name: 'campaign_key', type: 'string' },
            { name: 'phase_key', type: 'string' },
            { name: 'model', type: 'string' },
            { name: 'language', type: 'string' },
          ],
          storageDescriptor: {
            location: root,
            inputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat',
            outputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat',
            serdeInfo: { serializationLibrary: 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe' },
            columns: tableColumns(name, FAR6_PROMPT_COLUMNS).map((c) => ({ name: c.name, type: athenaType(c.type) })),
          },
        },
      });
      table.node.addDependency(this.database);
      tables[name] = table;
    }
    this.tables = tables;

    this.workgroup = new athena.CfnWorkGroup(this, 'WorkGroup', {
      name: `sondage-${stack.stackName}`,
      description: 'sondage analysis: bytes-scanned cutoff, results encrypted in the data bucket',
      recursiveDeleteOption: true,
      workGroupConfiguration: {
        bytesScannedCutoffPerQuery: props.bytesScannedCutoff ?? DEFAULT_BYTES_SCANNED_CUTOFF,
        // Clients cannot pick another output location or switch encryption off.
        enforceWorkGroupConfiguration: true,
        publishCloudWatchMetricsEnabled: true,
        engineVersion: { selectedEngineVersion: 'Athena engine version 3' },
        resultConfiguration: {
          outputLocation: `s3://${props.bucket.bucketName}/${PREFIX.athenaResults}`,
          encryptionConfiguration: { encryptionOption: 'SSE_S3' },
        },
      },
    });

    // One named query per analysis SQL file, for any campaign: the campaign and model are execution
    // parameters (see namedQueryText), so the saved queries need no redeploy for a new campaign.
    for (const name of FAR6_SQL.allQueries()) {
      const query = new athena.CfnNamedQuery(this, `Query-${name}`, {
        name: `sondage-${name}`,
        description: `lib/analysis/sql/${name}.sql. Execution parameters: ${NAMED_QUERY_PARAMETERS.join(', ')} (quoted, e.g. 'far6-demo')`.slice(0, 1024),
        database: this.databaseName,
        workGroup: this.workgroup.name,
        queryString: namedQueryText(name, this.databaseName),
      });
      query.node.addDependency(this.workgroup);
    }
  }

  /**
   * What running an analysis query needs and nothing more: the workgroup, read access to the
   * catalog entries and the campaign Parquet, write access to the results prefix.
   */
  public grantQuery(grantee: iam.IGrantable & IConstruct, bucket: s3.IBucket): void {
    const glueArn = (resource: string): string => `arn:${Aws.PARTITION}:glue:${Aws.REGION}:${Aws.ACCOUNT_ID}:${resource}`;
    const statements = [
      new iam.PolicyStatement({
        // GetQueryResults: the report Lambda pages the rows of its queries (the state machine's step only waits).
        actions: ['athena:StartQueryExecution', 'athena:GetQueryExecution', 'athena:GetQueryResults', 'athena:StopQueryExecution'],
        resources: [`arn:${Aws.PARTITION}:athena:${Aws.REGION}:${Aws.ACCOUNT_ID}:workgroup/${this.workgroup.name}`],
      }),
      new iam.PolicyStatement({
        actions: ['glue:GetDatabase', 'glue:GetTable', 'glue:GetPartitions'],
        resources: [glueArn('catalog'), glueArn(`database/${this.databaseName}`), ...TABLES.map((t) => glueArn(`table/${this.databaseName}/${t}`))],
      }),
      new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [bucket.arnForObjects(`${PREFIX.campaigns}*`)] }),
      new iam.PolicyStatement({
        actions: ['s3:GetObject', 's3:PutObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
        resources: [bucket.arnForObjects(`${PREFIX.athenaResults}*`)],
      }),
      new iam.PolicyStatement({ actions: ['s3:ListBucket', 's3:GetBucketLocation', 's3:ListBucketMultipartUploads'], resources: [bucket.bucketArn] }),
    ];
    for (const statement of statements) grantee.grantPrincipal.addToPrincipalPolicy(statement);
    const bucketId = logicalId(bucket.node.defaultChild as CfnElement);
    // On the role when there is one: its default policy is where cdk-nag finds the prefixes.
    const holder = grantee.grantPrincipal instanceof Construct ? grantee.grantPrincipal : grantee;
    Validations.of(holder).acknowledge(
      {
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${PREFIX.athenaResults}*]`,
        reason: 'Athena writes one result object per query under the results prefix, with names it picks at run time.',
      },
      {
        id: `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${PREFIX.campaigns}*]`,
        reason: 'Athena reads the campaign Parquet under campaigns/, whose part files are written at run time: read-only.',
      },
    );
  }
}

/** The table sources of the named queries: common table expressions the query text starts with. */
const CTE: Readonly<Record<TableName, string>> = { prompts: 'sondage_prompts', replies: 'sondage_replies', readings: 'sondage_readings' };
/** Phases each table is read from: readings of a generate-phase reply may come from the judge phase. */
const PHASES_OF: Readonly<Record<TableName, readonly string[]>> = { prompts: ['generate'], replies: ['generate'], readings: ['generate', 'judge'] };

/** The `?` execution parameters of every named query, in the order Athena binds them. */
export const NAMED_QUERY_PARAMETERS: readonly string[] = TABLES.flatMap((t) => [`${t} campaign`, `${t} model`]);

/**
 * An analysis SQL file as an Athena named query over the Glue tables, for any campaign: renderSql
 * with each table source a common table expression that filters the table to `campaign_key = ?`
 * and `model = ?`. Injected partition projection needs static values for those keys, and Athena
 * substitutes execution parameters before planning, so the parameters satisfy it (the console asks
 * for them; the CLI passes `--execution-parameters "'far6-demo'" "'alpha'" …`, campaign and model
 * once per table, NAMED_QUERY_PARAMETERS). One model per run: every analysis query groups by model.
 * A file that starts its own WITH gets the table expressions prepended to its list.
 */
export function namedQueryText(name: string, database: string): string {
  const rendered = FAR6_SQL.render(name, CTE);
  const ctes = TABLES.map(
    (t) =>
      `${CTE[t]} AS (\n  SELECT * FROM "${database}"."${t}"\n  WHERE campaign_key = ? AND model = ? AND phase_key IN (${PHASES_OF[t].map((p) => `'${p}'`).join(', ')})\n)`,
  ).join(',\n');
  const head = /^((?:[ \t]*--[^\n]*\n|[ \t]*\n)*)[ \t]*WITH\s/i.exec(rendered);
  if (head) return `${head[1]}WITH\n${ctes},\n${rendered.slice(head[0].length)}`;
  return `WITH\n${ctes}\n${rendered}`;
}
