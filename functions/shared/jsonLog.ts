/**
 * The GPU job's log (functions/gpu/entry.ts): one JSON object a line on stdout, which the awslogs
 * driver sends to CloudWatch. Message and fields are redacted of every loaded provider key
 * (functions/shared/secrets.ts), so that an error a field quotes (`String(err)` in
 * lib/gpu/probeJob.ts) cannot carry a key there.
 */
import type { JobLog } from '../../lib/gpu/probeJob.js';
import { redactFields, redactKeys } from './secrets.js';

export function jsonLineLog(service: string, write: (line: string) => void = (line) => void process.stdout.write(line)): JobLog {
  const line = (level: string) => (message: string, fields: Record<string, unknown> = {}) =>
    write(`${JSON.stringify({ level, time: new Date().toISOString(), service, message: redactKeys(message), ...redactFields(fields) })}\n`);
  return { info: line('INFO'), warn: line('WARN'), error: line('ERROR') };
}
