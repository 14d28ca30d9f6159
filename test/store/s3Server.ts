/**
 * An S3-compatible server on 127.0.0.1 for the S3BlobStore tests: path-style PUT/GET/HEAD/DELETE
 * of objects and ListObjectsV2 with paging, the subset S3BlobStore uses; and for `sondage purge
 * --aws` (lib/store/S3CampaignObjects.ts) ListObjectVersions with paging and DeleteObjects by
 * version id, over the current objects (version id "null", as S3 gives unversioned objects) and
 * the older versions and delete markers a test puts in `versions`. (s3rver, the npm
 * candidate, has had no release since 2021, and no packages could be added in this step.)
 *
 * Faults, for the pipeline's fault tests: `injectFault` makes the next matching requests answer an
 * error (503 SlowDown by default, S3's "reduce your request rate") instead of being served; a
 * refused request changes nothing, as on S3.
 */
import { createBodyServer, listenLocal } from '../helpers/localServer.js';

/** Requests to refuse: the next `times` requests of these methods (all: any) on keys starting with `keyPrefix`. */
export interface S3Fault {
  readonly times: number;
  readonly status?: number;
  readonly code?: string;
  readonly methods?: readonly ('GET' | 'PUT' | 'HEAD' | 'DELETE' | 'LIST')[];
  readonly keyPrefix?: string;
}

export interface S3Server {
  readonly url: string;
  readonly objects: Map<string, Buffer>;
  /** Keys per ListObjectsV2 page (small in tests, so paging is exercised). */
  pageSize: number;
  /**
   * Noncurrent versions and delete markers by `bucket/key`, newest first: what a versioned bucket
   * keeps after overwrites and deletes. Only ListObjectVersions and DeleteObjects see them.
   */
  readonly versions: Map<string, StoredVersion[]>;
  /** Keys (without the bucket) whose versions DeleteObjects refuses with AccessDenied. */
  readonly refuseDeletes: Set<string>;
  /** Refuses the next matching requests (503 SlowDown unless told otherwise). */
  injectFault(fault: S3Fault): void;
  /** Requests refused by injected faults so far. */
  readonly faultsServed: number;
  /** Every request served, in order: its method, key and, for a CopyObject, its source. */
  readonly requests: readonly { readonly method: string; readonly key: string; readonly copySource?: string }[];
  close(): Promise<void>;
}

/** An older version (with its body) or a delete marker (without). */
export interface StoredVersion {
  readonly versionId: string;
  readonly body?: Buffer;
}

const unxml = (s: string): string => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
const xml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export async function startS3Server(): Promise<S3Server> {
  const objects = new Map<string, Buffer>();
  const requests: { method: string; key: string; copySource?: string }[] = [];
  const versions = new Map<string, StoredVersion[]>();
  const refuseDeletes = new Set<string>();
  const state = { pageSize: 1000, faultsServed: 0 };
  const faults: { left: number; fault: S3Fault }[] = [];
  /** The injected fault this request meets, if any (counted down). */
  const faultFor = (method: string, key: string, list: boolean): S3Fault | undefined => {
    const kind = list ? 'LIST' : method;
    const hit = faults.find((f) => f.left > 0 && (f.fault.methods?.includes(kind as never) ?? true) && key.startsWith(f.fault.keyPrefix ?? ''));
    if (!hit) return undefined;
    hit.left--;
    state.faultsServed++;
    return hit.fault;
  };
  const server = createBodyServer((req, res, sent) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const [, bucket, ...rest] = url.pathname.split('/');
    const key = rest.map(decodeURIComponent).join('/');
    const id = `${bucket}/${key}`;
    const listing = req.method === 'GET' && url.searchParams.get('list-type') === '2';
    const fault = faultFor(req.method ?? '', listing ? (url.searchParams.get('prefix') ?? '') : key, listing);
    if (fault) {
      const code = fault.code ?? 'SlowDown';
      res.writeHead(fault.status ?? 503, { 'content-type': 'application/xml' });
      res.end(req.method === 'HEAD' ? undefined : `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${xml(code)}</Code><Message>${code === 'SlowDown' ? 'Please reduce your request rate.' : xml(code)}</Message></Error>`);
      return;
    }
    const notFound = (): void => {
      res.writeHead(404, { 'content-type': 'application/xml' });
      res.end(req.method === 'HEAD' ? undefined : '<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>');
    };
    const copySource = req.headers['x-amz-copy-source'];
    requests.push({ method: req.method ?? '', key, ...(typeof copySource === 'string' ? { copySource: decodeURIComponent(copySource) } : {}) });
    if (req.method === 'PUT' && key !== '' && typeof copySource === 'string') {
      // CopyObject: `<bucket>/<key>` (URL-encoded), copied inside the server.
      const body = objects.get(decodeURIComponent(copySource.replace(/^\//, '')));
      if (!body) return notFound();
      objects.set(id, Buffer.from(body));
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0" encoding="UTF-8"?><CopyObjectResult><ETag>"x"</ETag><LastModified>${new Date().toISOString()}</LastModified></CopyObjectResult>`);
    } else if (req.method === 'PUT' && key !== '') {
      objects.set(id, sent);
      res.writeHead(200, { etag: '"x"' });
      res.end();
    } else if ((req.method === 'GET' || req.method === 'HEAD') && key !== '') {
      const body = objects.get(id);
      if (!body) return notFound();
      res.writeHead(200, { 'content-length': String(body.length), 'content-type': 'application/octet-stream', etag: '"x"' });
      res.end(req.method === 'HEAD' ? undefined : body);
    } else if (req.method === 'DELETE' && key !== '') {
      objects.delete(id);
      res.writeHead(204);
      res.end();
    } else if (req.method === 'GET' && url.searchParams.get('list-type') === '2') {
      const prefix = url.searchParams.get('prefix') ?? '';
      const after = url.searchParams.get('continuation-token') ?? '';
      const all = [...objects.keys()]
        .filter((k) => k.startsWith(`${bucket}/${prefix}`))
        .map((k) => k.slice(bucket!.length + 1))
        .sort()
        .filter((k) => k > after);
      const page = all.slice(0, state.pageSize);
      const truncated = all.length > page.length;
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(
        `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>${xml(bucket!)}</Name><Prefix>${xml(prefix)}</Prefix><KeyCount>${page.length}</KeyCount>` +
          `<IsTruncated>${truncated}</IsTruncated>${truncated ? `<NextContinuationToken>${xml(page.at(-1)!)}</NextContinuationToken>` : ''}` +
          page.map((k) => `<Contents><Key>${xml(k)}</Key><Size>${objects.get(`${bucket}/${k}`)!.length}</Size></Contents>`).join('') +
          '</ListBucketResult>',
      );
    } else if (req.method === 'GET' && key === '' && url.searchParams.has('versions')) {
      // Every version of every key under the prefix, keys in order, each key's newest first.
      const prefix = url.searchParams.get('prefix') ?? '';
      const ids = [...new Set([...objects.keys(), ...versions.keys()])].filter((id) => id.startsWith(`${bucket}/${prefix}`)).sort();
      const entries = ids.flatMap((id) => {
        const k = id.slice(bucket!.length + 1);
        const current = objects.get(id);
        const older = (versions.get(id) ?? []).map((v, i) => ({ key: k, versionId: v.versionId, body: v.body, latest: current === undefined && i === 0 }));
        return [...(current ? [{ key: k, versionId: 'null', body: current as Buffer | undefined, latest: true }] : []), ...older];
      });
      const markerKey = url.searchParams.get('key-marker');
      const markerVersion = url.searchParams.get('version-id-marker');
      const from = markerKey === null ? 0 : entries.findIndex((e) => e.key === markerKey && e.versionId === markerVersion) + 1;
      const page = entries.slice(from, from + state.pageSize);
      const truncated = from + page.length < entries.length;
      const last = page.at(-1);
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(
        `<?xml version="1.0" encoding="UTF-8"?><ListVersionsResult><Name>${xml(bucket!)}</Name><Prefix>${xml(prefix)}</Prefix><IsTruncated>${truncated}</IsTruncated>` +
          (truncated && last ? `<NextKeyMarker>${xml(last.key)}</NextKeyMarker><NextVersionIdMarker>${xml(last.versionId)}</NextVersionIdMarker>` : '') +
          page
            .map((e) =>
              e.body === undefined
                ? `<DeleteMarker><Key>${xml(e.key)}</Key><VersionId>${xml(e.versionId)}</VersionId><IsLatest>${e.latest}</IsLatest></DeleteMarker>`
                : `<Version><Key>${xml(e.key)}</Key><VersionId>${xml(e.versionId)}</VersionId><IsLatest>${e.latest}</IsLatest><Size>${e.body.length}</Size></Version>`,
            )
            .join('') +
          '</ListVersionsResult>',
      );
    } else if (req.method === 'POST' && key === '' && url.searchParams.has('delete')) {
      const body = sent.toString('utf8');
      const quiet = /<Quiet>true<\/Quiet>/.test(body);
      const wanted = [...body.matchAll(/<Object>([\s\S]*?)<\/Object>/g)].map((m) => ({
        key: unxml(/<Key>([\s\S]*?)<\/Key>/.exec(m[1]!)?.[1] ?? ''),
        versionId: /<VersionId>([\s\S]*?)<\/VersionId>/.exec(m[1]!)?.[1],
      }));
      if (wanted.length > 1000) {
        res.writeHead(400, { 'content-type': 'application/xml' });
        res.end('<Error><Code>MalformedXML</Code><Message>more than 1000 objects</Message></Error>');
        return;
      }
      let out = '';
      for (const w of wanted) {
        const vid = w.versionId === undefined ? '' : `<VersionId>${xml(w.versionId)}</VersionId>`;
        if (refuseDeletes.has(w.key)) {
          out += `<Error><Key>${xml(w.key)}</Key>${vid}<Code>AccessDenied</Code><Message>Access Denied</Message></Error>`;
          continue;
        }
        const oid = `${bucket}/${w.key}`;
        if (w.versionId === undefined || w.versionId === 'null') objects.delete(oid);
        else {
          const left = (versions.get(oid) ?? []).filter((v) => v.versionId !== w.versionId);
          if (left.length > 0) versions.set(oid, left);
          else versions.delete(oid);
        }
        if (!quiet) out += `<Deleted><Key>${xml(w.key)}</Key>${vid}</Deleted>`;
      }
      res.writeHead(200, { 'content-type': 'application/xml' });
      res.end(`<?xml version="1.0" encoding="UTF-8"?><DeleteResult>${out}</DeleteResult>`);
    } else {
      res.writeHead(400, { 'content-type': 'application/xml' });
      res.end(`<Error><Code>NotImplemented</Code><Message>${xml(`${req.method} ${req.url}`)} is not served by the test server</Message></Error>`);
    }
  });
  const { url } = await listenLocal(server);
  // The handle is the state the handlers read: a test sets pageSize on it and the next request obeys.
  return Object.assign<typeof state, Omit<S3Server, keyof typeof state>>(state, {
    url,
    objects,
    versions,
    refuseDeletes,
    requests,
    injectFault(fault: S3Fault) {
      faults.push({ left: fault.times, fault });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
