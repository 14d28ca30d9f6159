/**
 * A campaign's objects in the data bucket as a PurgeSource (`sondage purge --aws`). Loaded lazily
 * by the CLI, like S3BlobStore, not re-exported from lib/store/index.ts.
 */
import { DeleteObjectsCommand, ListObjectVersionsCommand } from '@aws-sdk/client-s3';
import type { ObjectIdentifier, S3Client } from '@aws-sdk/client-s3';
import { SondageError } from '../errors.js';
import { campaignPrefix } from './layout.js';
import type { PurgeCount, PurgeSource, PurgeSurvey } from './purge.js';

/** S3 deletes up to 1,000 keys per DeleteObjects request. */
const DELETE_BATCH = 1000;
/** DeleteObjects requests in flight. */
const DELETE_CONCURRENCY = 4;

type S3Plan = readonly ObjectIdentifier[];

export interface S3CampaignObjectsOptions {
  readonly bucket: string;
  readonly client: S3Client;
}

/**
 * Every version of every object under `campaigns/<campaign>/` (the bucket is versioned: a plain
 * delete would only hide the objects behind delete markers for the 30 days its lifecycle keeps
 * old versions), counted as current objects, older versions and delete markers, and deleted for
 * good by version id, 1,000 per DeleteObjects request. Objects outside the prefix (other
 * campaigns, `scratch/`, `athena-results/`) are never listed.
 *
 * The CLI's credentials need s3:ListBucketVersions and s3:DeleteObjectVersion on the bucket.
 *
 * @example const objects = new S3CampaignObjects({ bucket, client: new S3Client({}) });
 */
export class S3CampaignObjects implements PurgeSource<S3Plan> {
  private readonly bucket: string;
  private readonly client: S3Client;

  constructor(options: S3CampaignObjectsOptions) {
    this.bucket = options.bucket;
    this.client = options.client;
  }

  async survey(campaign: string): Promise<PurgeSurvey<S3Plan>> {
    const prefix = campaignPrefix(campaign);
    const plan: ObjectIdentifier[] = [];
    const current = { count: 0, bytes: 0 };
    const older = { count: 0, bytes: 0 };
    let markers = 0;
    let keyMarker: string | undefined;
    let versionMarker: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectVersionsCommand({
          Bucket: this.bucket,
          Prefix: prefix,
          ...(keyMarker !== undefined ? { KeyMarker: keyMarker } : {}),
          ...(versionMarker !== undefined ? { VersionIdMarker: versionMarker } : {}),
        }),
      );
      for (const v of page.Versions ?? []) {
        if (v.Key === undefined || !v.Key.startsWith(prefix)) continue;
        plan.push({ Key: v.Key, VersionId: v.VersionId ?? 'null' });
        const tally = v.IsLatest === false ? older : current;
        tally.count += 1;
        tally.bytes += v.Size ?? 0;
      }
      for (const m of page.DeleteMarkers ?? []) {
        if (m.Key === undefined || !m.Key.startsWith(prefix)) continue;
        plan.push({ Key: m.Key, VersionId: m.VersionId ?? 'null' });
        markers += 1;
      }
      const truncated = page.IsTruncated === true;
      keyMarker = truncated ? page.NextKeyMarker : undefined;
      versionMarker = truncated ? page.NextVersionIdMarker : undefined;
    } while (keyMarker !== undefined);
    const counts: PurgeCount[] = [{ what: 'objects', count: current.count, bytes: current.bytes }];
    if (older.count > 0) counts.push({ what: 'older versions of objects', count: older.count, bytes: older.bytes });
    if (markers > 0) counts.push({ what: 'delete markers', count: markers });
    return { where: `s3://${this.bucket}/${prefix}`, counts, plan };
  }

  async purge(_campaign: string, survey: PurgeSurvey<S3Plan>, onProgress?: (deleted: number) => void): Promise<readonly PurgeCount[]> {
    const batches: ObjectIdentifier[][] = [];
    for (let i = 0; i < survey.plan.length; i += DELETE_BATCH) batches.push(survey.plan.slice(i, i + DELETE_BATCH));
    const failed: string[] = [];
    let deleted = 0;
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < batches.length) {
        const objects = batches[next++]!;
        const out = await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: objects, Quiet: true } }));
        const errors = out.Errors ?? [];
        for (const e of errors) failed.push(`${e.Key ?? '?'} (version ${e.VersionId ?? '?'}): ${e.Code ?? 'Error'}${e.Message ? ` ${e.Message}` : ''}`);
        deleted += objects.length - errors.length;
        onProgress?.(deleted);
      }
    };
    await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, batches.length) }, lane));
    if (failed.length > 0) {
      throw new SondageError(
        `${failed.length} of ${survey.plan.length} object versions could not be deleted (${deleted} were): ${failed.slice(0, 3).join('; ')}${failed.length > 3 ? '; …' : ''}`,
      );
    }
    return survey.counts;
  }
}
