/**
 * The blob store on S3 (DESIGN.md "Data contracts": the same keys on disk and in S3), for the Lambda
 * workers and the CLI's `--aws` commands. Loaded lazily by its users, not re-exported from
 * lib/store/index.ts, so the local CLI never loads the AWS SDK.
 */
import { CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { S3ClientConfig } from '@aws-sdk/client-s3';
import { assertKey } from './LocalBlobStore.js';
import type { BlobStore } from './types.js';

export interface S3BlobStoreOptions {
  readonly bucket: string;
  /** Keys are stored under this prefix (no leading or trailing slash needed). Default: none. */
  readonly prefix?: string;
  /** A ready client; otherwise one is made from `clientConfig`. */
  readonly client?: S3Client;
  readonly clientConfig?: S3ClientConfig;
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
}

/**
 * @example
 * const store = new S3BlobStore({ bucket: process.env.SONDAGE_BUCKET! });
 * await store.put('campaigns/demo/generate/replies/model=a/language=en/part-0001.parquet', bytes);
 */
export class S3BlobStore implements BlobStore {
  readonly bucket: string;
  private readonly prefix: string;
  private readonly client: S3Client;

  constructor(options: S3BlobStoreOptions) {
    this.bucket = options.bucket;
    this.prefix = options.prefix ? `${options.prefix.replace(/^\/+|\/+$/g, '')}/` : '';
    this.client = options.client ?? new S3Client(options.clientConfig ?? {});
  }

  private key(key: string): string {
    assertKey(key);
    return this.prefix + key;
  }

  async put(key: string, body: Uint8Array | string): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: this.key(key), Body: body }));
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
      return out.Body ? await out.Body.transformToByteArray() : new Uint8Array();
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  async exists(key: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Keys starting with `prefix`, sorted (as LocalBlobStore returns them). */
  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix + prefix, ...(token ? { ContinuationToken: token } : {}) }),
      );
      for (const o of page.Contents ?? []) if (o.Key !== undefined) keys.push(o.Key.slice(this.prefix.length));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /**
   * CopyObject (inside S3, atomic: a reader sees no object at `to` or all of it), then DeleteObject
   * of `from`; false when `from` is not there (moved already).
   */
  async move(from: string, to: string): Promise<boolean> {
    const source = this.key(from);
    try {
      // CopySource is `<bucket>/<key>`, the key URL-encoded but for its slashes (`=` is encoded).
      const copySource = `${this.bucket}/${encodeURIComponent(source).replace(/%2F/g, '/')}`;
      await this.client.send(new CopyObjectCommand({ Bucket: this.bucket, Key: this.key(to), CopySource: copySource }));
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: source }));
    return true;
  }

  /** Deleting a missing key is not an error (S3 semantics, and LocalBlobStore's). */
  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.key(key) }));
  }
}
