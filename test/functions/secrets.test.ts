import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEYS_FRESH_MS, providerKeyLoader, redactedError } from '../../functions/shared/secrets.js';
import { startSecretsServer, type SecretsServer } from './secretsServer.js';

let server: SecretsServer;
let client: SecretsManagerClient;
beforeAll(async () => {
  server = await startSecretsServer();
  client = new SecretsManagerClient({ endpoint: server.url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 });
});
afterAll(async () => {
  client.destroy();
  await server.close();
});

describe('provider keys from Secrets Manager', () => {
  it('puts each key into the environment under its name, once, and redacts it from any error that quotes it', async () => {
    // prepare
    const key = 'sk-test-redact-me-0123456789abcdef';
    server.secrets.set('arn:keys-1', JSON.stringify({ SONDAGE_TEST_KEY_A: key }));
    const env: NodeJS.ProcessEnv = {};
    const load = providerKeyLoader({ client, secretArn: 'arn:keys-1', env });
    const before = server.reads;
    // act
    await load();
    await load();
    const providerError = new Error(`401 Incorrect API key provided: ${key}. You can find your API key at …`);
    const safe = redactedError(providerError) as Error;
    // assess
    expect(env['SONDAGE_TEST_KEY_A']).toBe(key);
    expect(server.reads - before).toBe(1);
    expect(safe.message).toBe('401 Incorrect API key provided: [redacted]. You can find your API key at …');
    expect(safe.stack).not.toContain(key);
    const clean = new Error('no key here');
    expect(redactedError(clean)).toBe(clean);
  });

  it('a warm container reads the secret again a minute after it last did: a key fixed in Secrets Manager is used', async () => {
    server.secrets.set('arn:keys-rotated', JSON.stringify({ SONDAGE_TEST_KEY_B: 'sk-test-rejected-key-000000' }));
    const env: NodeJS.ProcessEnv = {};
    let clock = 1_000_000;
    const load = providerKeyLoader({ client, secretArn: 'arn:keys-rotated', env, now: () => clock });
    await load();
    server.secrets.set('arn:keys-rotated', JSON.stringify({ SONDAGE_TEST_KEY_B: 'sk-test-fixed-key-111111' }));
    clock += KEYS_FRESH_MS - 1;
    await load();
    expect(env['SONDAGE_TEST_KEY_B']).toBe('sk-test-rejected-key-000000');
    clock += 2;
    await load();
    expect(env['SONDAGE_TEST_KEY_B']).toBe('sk-test-fixed-key-111111');
  });

  it('reads the secret again at the first call of each execution and after forget, not at every call', async () => {
    // prepare: a loader whose clock stands still (the minute never passes)
    server.secrets.set('arn:keys-exec', JSON.stringify({ SONDAGE_TEST_KEY_C: 'sk-test-first-key-000000', SONDAGE_TEST_KEY_GONE: 'sk-test-gone-key-000000' }));
    const env: NodeJS.ProcessEnv = {};
    const load = providerKeyLoader({ client, secretArn: 'arn:keys-exec', env, now: () => 5_000_000 });
    const before = server.reads;
    await load('exec-1');
    await load('exec-1');
    expect(server.reads - before).toBe(1);
    // act: the key is fixed (and a name taken out), then a new execution's first call
    server.secrets.set('arn:keys-exec', JSON.stringify({ SONDAGE_TEST_KEY_C: 'sk-test-fixed-key-111111' }));
    await load('exec-2');
    // assess: read again, the new key in place, the removed name gone from the environment
    expect(server.reads - before).toBe(2);
    expect(env).toEqual({ SONDAGE_TEST_KEY_C: 'sk-test-fixed-key-111111' });
    await load('exec-2');
    expect(server.reads - before).toBe(2);
    // act: a provider rejected a key; the next call, same execution, reads again
    server.secrets.set('arn:keys-exec', JSON.stringify({ SONDAGE_TEST_KEY_C: 'sk-test-fixed-again-222222' }));
    load.forget();
    await load('exec-2');
    expect(server.reads - before).toBe(3);
    expect(env['SONDAGE_TEST_KEY_C']).toBe('sk-test-fixed-again-222222');
    // the old keys stay redacted: a provider's message may still quote one
    expect((redactedError(new Error('401 for sk-test-first-key-000000')) as Error).message).toBe('401 for [redacted]');
  });

  it('names the secret and what is wrong with its shape, never a value from it', async () => {
    const secretText = 'sk-test-not-json-9876543210';
    server.secrets.set('arn:bad-json', secretText);
    server.secrets.set('arn:bad-shape', JSON.stringify({ 'not a name': 'sk-test-shape-1111111111', EMPTY: '' }));
    const env: NodeJS.ProcessEnv = {};
    const errors = await Promise.all(
      ['arn:bad-json', 'arn:bad-shape', 'arn:missing'].map((secretArn) =>
        providerKeyLoader({ client, secretArn, env })().then(
          () => new Error('expected a failure'),
          (e: unknown) => e as Error,
        ),
      ),
    );
    expect(errors[0]!.message).toMatch(/secret arn:bad-json is not JSON; expected an object of environment-variable name → key/);
    expect(errors[1]!.message).toMatch(/secret arn:bad-shape: "not a name" is not an environment-variable name; EMPTY: expected the key as a non-empty string, got string/);
    expect(errors[2]!.message).toMatch(/cannot read secret arn:missing: Secrets Manager can't find the specified secret/);
    for (const e of errors) for (const secret of [secretText, 'sk-test-shape-1111111111']) expect(e.message).not.toContain(secret);
    expect(env).toEqual({});
  });
});

describe('Secrets Manager unavailable (the test server\'s injected outage)', () => {
  it('fails the load naming the secret, and loads at the next call once the service is back', async () => {
    server.secrets.set('arn:keys-outage', JSON.stringify({ SONDAGE_TEST_KEY_OUTAGE: 'sk-test-outage-0123456789' }));
    const env: NodeJS.ProcessEnv = {};
    const load = providerKeyLoader({ client, secretArn: 'arn:keys-outage', env });
    server.unavailable = 1;
    await expect(load()).rejects.toThrow(/^provider keys: cannot read secret arn:keys-outage: An error occurred on the server side/);
    expect(env['SONDAGE_TEST_KEY_OUTAGE']).toBeUndefined();
    await load();
    expect(env['SONDAGE_TEST_KEY_OUTAGE']).toBe('sk-test-outage-0123456789');
    expect(server.unavailable).toBe(0);
  });
});
