import * as athena from 'aws-cdk-lib/aws-athena';
import * as glue from 'aws-cdk-lib/aws-glue';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Aws, Stack, Validations } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import type { IConstruct } from 'constructs';
import type { CfnElement } from 'aws-cdk-lib';
import { logicalId } from './logicalId.js';
import { glueTableName } from '../../lib/analysis/athena.js';
import type { Battery } from '../../lib/battery/types.js';
import { allBatteries } from '../../lib/batteries/index.js';
import { DEFAULT_BYTES_SCANNED_CUTOFF, PREFIX } from '../../lib/config/index.js';
import { athenaType, tableColumns } from '../../lib/store/schemas.js';
import type { TableName } from '../../lib/store/types.js';

export interface AnalyticsProps {
  readonly bucket: s3.IBucket;
  /** Athena cancels a query that scans more. Default DEFAULT_BYTES_SCANNED_CUTOFF (10 GiB). */
  readonly bytesScannedCutoff?: number;
  /** The batteries whose tables and queries are deployed; default every registered one (lib/batteries). */
  readonly batteries?: readonly Battery[];
}

/** A Glue table: its name, and the battery whose prompts it holds (none for the shared tables). */
interface GlueTableSpec {
  readonly name: string;
  readonly table: TableName;
  readonly battery?: Battery;
}

/**
 * Athena over the campaign Parquet (DESIGN.md "The flow of one campaign", SQL stage): the shared
 * `replies` and `readings` tables and one `<battery>_prompts` table per battery (its own typed
 * design columns, so queries need no per-battery JSON parsing and run unchanged on DuckDB), partition
 * projection instead of crawlers, a workgroup whose settings clients cannot override, and every
 * battery's SQL files as named queries.
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
  /** Glue tables by name: `replies`, `readings`, and `<battery>_prompts` per battery. */
  public readonly tables: Readonly<Record<string, glue.CfnTable>>;
  /** The batteries deployed. */
  public readonly batteries: readonly Battery[];

  constructor(scope: Construct, id: string, props: AnalyticsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.databaseName = `sondage_${stack.stackName.toLowerCase().replace(/[^a-z0-9_]/g, '_')}`;
    this.database = new glue.CfnDatabase(this, 'Database', {
      catalogId: stack.account,
      databaseInput: { name: this.databaseName, description: 'sondage campaign tables (Parquet in the data bucket)' },
    });

    this.batteries = props.batteries ?? allBatteries();
    // Language is an enum partition key over every battery's languages (a closed list is what lets a
    // query without a language filter enumerate the partitions).
    const languages = [...new Set(this.batteries.flatMap((b) => b.languages))];
    const specs: GlueTableSpec[] = [
      ...this.batteries.map((b) => ({ name: glueTableName(b.name, 'prompts'), table: 'prompts' as const, battery: b })),
      { name: 'replies', table: 'replies' },
      { name: 'readings', table: 'readings' },
    ];
    const tables: Record<string, glue.CfnTable> = {};
    for (const { name, table: kind, battery } of specs) {
      const root = `s3://${props.bucket.bucketName}/${PREFIX.campaigns}`;
      const id = battery ? `PromptsTable-${battery.name}` : `${kind[0]!.toUpperCase()}${kind.slice(1)}Table`;
      const table = new glue.CfnTable(this, id, {
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
            'projection.language.values': (battery?.languages ?? languages).join(','),
            'storage.location.template': `${root}\${campaign_key}/\${phase_key}/${kind}/model=\${model}/language=\${language}/`,
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
            columns: tableColumns(kind, battery?.prompts).map((c) => ({ name: c.name, type: athenaType(c.type) })),
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

    // One named query per SQL file of a battery (the core's chosen_replies and one_reading are
    // subqueries of them, over sources a battery names its own way), for any campaign: the campaign and model are
    // execution parameters (see namedQueryText), so the saved queries need no redeploy for a new campaign.
    for (const battery of this.batteries) {
      for (const name of battery.analysis.sql.queries) {
        const query = new athena.CfnNamedQuery(this, `Query-${battery.name}-${name}`, {
          name: namedQueryName(battery, name),
          description: `${battery.name}: ${name}.sql. Execution parameters: ${namedQueryParameters(battery).join(', ')} (quoted, e.g. 'my-campaign')`.slice(0, 1024),
          database: this.databaseName,
          workGroup: this.workgroup.name,
          queryString: namedQueryText(battery, name, this.databaseName),
        });
        query.node.addDependency(this.workgroup);
      }
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
        resources: [glueArn('catalog'), glueArn(`database/${this.databaseName}`), ...Object.keys(this.tables).map((t) => glueArn(`table/${this.databaseName}/${t}`))],
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

/** The `?` execution parameters of a battery's named queries, in the order Athena binds them: campaign and model per source. */
export function namedQueryParameters(battery: Battery): string[] {
  return Object.keys(battery.analysis.namedSources).flatMap((name) => [`${name} campaign`, `${name} model`]);
}

/** A named query's name: `sondage-<battery>-<query>`. */
export function namedQueryName(battery: Battery, query: string): string {
  return `sondage-${battery.name}-${query}`;
}

/**
 * An analysis SQL file of a battery as an Athena named query over the Glue tables, for any
 * campaign: rendered with each table placeholder a common table expression (`sondage_<name>`) that
 * filters its table to `campaign_key = ?`, `model = ?` and the phases the battery reads it from
 * (`analysis.namedSources`). Injected partition projection needs static values for those keys, and
 * Athena substitutes execution parameters before planning, so the parameters satisfy it (the
 * console asks for them; the CLI passes `--execution-parameters "'my-campaign'" "'alpha'" …`,
 * campaign and model once per source, namedQueryParameters). One model per run: every analysis
 * query groups by model. A file that starts its own WITH gets the table expressions prepended to its list.
 */
export function namedQueryText(battery: Battery, name: string, database: string): string {
  const sources = Object.entries(battery.analysis.namedSources);
  const cte = Object.fromEntries(sources.map(([source]) => [source, `sondage_${source}`]));
  const rendered = battery.analysis.sql.render(name, cte);
  const ctes = sources
    .map(
      ([source, { table, phases }]) =>
        `${cte[source]} AS (\n  SELECT * FROM "${database}"."${glueTableName(battery.name, table)}"\n  WHERE campaign_key = ? AND model = ? AND phase_key IN (${phases.map((p) => `'${p}'`).join(', ')})\n)`,
    )
    .join(',\n');
  const head = /^((?:[ \t]*--[^\n]*\n|[ \t]*\n)*)[ \t]*WITH\s/i.exec(rendered);
  if (head) return `${head[1]}WITH\n${ctes},\n${rendered.slice(head[0].length)}`;
  return `WITH\n${ctes}\n${rendered}`;
}
