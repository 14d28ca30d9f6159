/**
 * The two-minute Spot interruption notice, read where EC2 publishes it to the instance: the
 * instance metadata item `spot/instance-action` (IMDSv2: a session token from PUT /latest/api/token,
 * then GET with it), 404 until EC2 schedules the stop or termination, then `{"action", "time"}`.
 * AWS recommends reading it every 5 seconds ("Spot Instance interruption notices", EC2 User Guide).
 *
 * Why the job watches it itself: AWS Batch's ECS instances do not drain on the notice (ECS Spot
 * draining is off unless the instance's user data turns it on), so no SIGTERM comes before the
 * instance is terminated two minutes later. SIGTERM does come when Batch stops a job (TerminateJob,
 * the attempt timeout), with 30 s before SIGKILL. An ECS job on EC2 runs in host network mode,
 * so the metadata service answers the container with the instance's own hop limit of 1.
 */

import { sleep } from '../run/sleep.js';

/** The metadata service's address; the AWS SDKs read the same variable to move it. */
export const METADATA_ENDPOINT_ENV = 'AWS_EC2_METADATA_SERVICE_ENDPOINT';
/** Set to `true` to turn the metadata service off, as for the AWS SDKs. */
export const METADATA_DISABLED_ENV = 'AWS_EC2_METADATA_DISABLED';
const DEFAULT_ENDPOINT = 'http://169.254.169.254';
/** How often the notice is read (AWS's recommendation). */
export const SPOT_NOTICE_POLL_MS = 5000;
const TOKEN_TTL_S = 21_600;

export interface SpotNotice {
  /** `terminate` or `stop` (`hibernate` comes without the two minutes). */
  readonly action: string;
  /** When EC2 acts, ISO 8601 UTC. */
  readonly time: string;
}

export interface SpotNoticeOptions {
  /** Default the metadata service (AWS_EC2_METADATA_SERVICE_ENDPOINT or 169.254.169.254). */
  readonly endpoint?: string;
  readonly pollMs?: number;
  /** Stops the watch. */
  readonly until: AbortSignal;
  onNotice(notice: SpotNotice): void;
  /** The metadata service could not be reached or refused a token (not on EC2): the watch ends. */
  onUnavailable?(reason: string): void;
}

/** The endpoint from the environment, or undefined when it is turned off. */
export function metadataEndpoint(env: NodeJS.ProcessEnv): string | undefined {
  if ((env[METADATA_DISABLED_ENV] ?? '').toLowerCase() === 'true') return undefined;
  return (env[METADATA_ENDPOINT_ENV] || DEFAULT_ENDPOINT).replace(/\/+$/, '');
}

/**
 * Reads the notice every `pollMs` until `until` aborts, and calls `onNotice` once when it appears.
 * Runs in the background; a metadata service that cannot be reached at all ends the watch quietly
 * (a workstation, a test without one), one that answers errors is read again at the next poll.
 * @example watchSpotNotice({ until: done.signal, onNotice: (n) => stop.abort(new Error(`spot ${n.action}`)) })
 */
export async function watchSpotNotice(o: SpotNoticeOptions): Promise<void> {
  const base = o.endpoint ?? metadataEndpoint(process.env);
  if (base === undefined) return;
  const pollMs = o.pollMs ?? SPOT_NOTICE_POLL_MS;
  let token: string | undefined;
  const timeout = (): AbortSignal => AbortSignal.any([o.until, AbortSignal.timeout(2000)]);
  while (!o.until.aborted) {
    try {
      if (token === undefined) {
        const res = await fetch(`${base}/latest/api/token`, { method: 'PUT', headers: { 'X-aws-ec2-metadata-token-ttl-seconds': String(TOKEN_TTL_S) }, signal: timeout() });
        if (!res.ok) {
          await res.arrayBuffer().catch(() => undefined);
          o.onUnavailable?.(`the metadata service refused a token (HTTP ${res.status})`);
          return;
        }
        token = await res.text();
      }
      const res = await fetch(`${base}/latest/meta-data/spot/instance-action`, { headers: { 'X-aws-ec2-metadata-token': token }, signal: timeout() });
      const body = await res.text();
      if (res.status === 401) token = undefined;
      else if (res.status === 200) {
        const parsed = JSON.parse(body) as Partial<SpotNotice>;
        o.onNotice({ action: String(parsed.action ?? 'terminate'), time: String(parsed.time ?? '') });
        return;
      }
    } catch (err) {
      if (o.until.aborted) return;
      // No metadata service at all (connection refused, no route): not on EC2.
      if (token === undefined) {
        o.onUnavailable?.(`the metadata service at ${base} cannot be reached (${(err as Error).message})`);
        return;
      }
    }
    await sleep(pollMs, o.until);
  }
}
