/**
 * Copies a model's files from the data bucket (`gpu.weights_prefix`) to the job's disk, streamed
 * object by object (a checkpoint is tens of GB: nothing is held in memory), a few at a time. In a
 * private subnet the bytes come through the VPC's S3 gateway endpoint, not the NAT gateway.
 */
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { SondageError } from '../../lib/errors.js';

/** Objects downloaded at once. */
const PARALLEL = 8;

/**
 * Downloads every object under `prefix` into `dir`, keeping the paths below the prefix.
 * @returns the number of files and bytes written
 * @throws SondageError when the prefix holds nothing, or a key would leave `dir`
 */
export async function downloadPrefix(client: S3Client, bucket: string, prefix: string, dir: string): Promise<{ files: number; bytes: number }> {
  const keys: { key: string; size: number }[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }));
    for (const o of page.Contents ?? []) if (o.Key && !o.Key.endsWith('/')) keys.push({ key: o.Key, size: o.Size ?? 0 });
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  if (keys.length === 0) throw new SondageError(`no weights under s3://${bucket}/${prefix}; upload the model's files there (aws s3 sync <folder> s3://${bucket}/${prefix})`);
  let next = 0;
  let bytes = 0;
  const one = async (): Promise<void> => {
    while (next < keys.length) {
      const { key } = keys[next++]!;
      const target = join(dir, key.slice(prefix.length));
      if (relative(dir, target).startsWith(`..${sep}`)) throw new SondageError(`weights key ${key} would be written outside ${dir}`);
      await mkdir(dirname(target), { recursive: true });
      const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      if (!out.Body) throw new SondageError(`s3://${bucket}/${key} has no body`);
      await pipeline(out.Body as Readable, createWriteStream(target));
      bytes += out.ContentLength ?? 0;
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, keys.length) }, one));
  return { files: keys.length, bytes };
}
