import { describe, expect, it } from 'vitest';
import { SondageError } from '../../lib/errors.js';
import { isTransientAwsError } from '../../lib/store/transientAwsError.js';

/** An error shaped as the AWS SDK v3 throws them: name = the service's error code, $fault, $metadata. */
const sdkError = (name: string, status: number, fault: 'client' | 'server', extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(`${name} from the service`), { name, $fault: fault, $metadata: { httpStatusCode: status }, ...extra });

describe('isTransientAwsError', () => {
  it.each([
    ['S3 503 SlowDown', sdkError('SlowDown', 503, 'client')],
    ['S3 500 InternalError', sdkError('InternalError', 500, 'server')],
    ['DynamoDB ThrottlingException', sdkError('ThrottlingException', 400, 'client', { $retryable: { throttling: true } })],
    ['DynamoDB ProvisionedThroughputExceededException', sdkError('ProvisionedThroughputExceededException', 400, 'client')],
    ['Secrets Manager 500 InternalServiceError', sdkError('InternalServiceError', 500, 'server')],
    ['a reset connection', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
    ['a SondageError wrapping a throttle', new SondageError('commit failed', { cause: sdkError('ThrottlingException', 400, 'client') })],
  ])('%s: transient', (_what, err) => {
    expect(isTransientAwsError(err)).toBe(true);
  });

  it.each([
    ['a failed condition', sdkError('ConditionalCheckFailedException', 400, 'client')],
    ['access denied', sdkError('AccessDenied', 403, 'client')],
    ['a missing table', sdkError('ResourceNotFoundException', 400, 'client')],
    ['a validation error', sdkError('ValidationException', 400, 'client')],
    ['a SondageError of its own', new SondageError('worker event: Items: expected the array')],
    ['a plain Error', new Error('boom')],
    ['not an error', 'SlowDown'],
  ])('%s: not transient', (_what, err) => {
    expect(isTransientAwsError(err)).toBe(false);
  });
});
