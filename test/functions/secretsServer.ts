/**
 * A Secrets Manager-compatible server on 127.0.0.1 for the handler tests: the JSON 1.1 protocol
 * (`X-Amz-Target: secretsmanager.GetSecretValue`), nothing more. Unknown secrets answer
 * ResourceNotFoundException, as the service does.
 */
import { closeServer, createBodyServer, jsonBody, listenLocal, sendJson } from '../helpers/localServer.js';

export interface SecretsServer {
  readonly url: string;
  /** Secret ARN → SecretString. */
  readonly secrets: Map<string, string>;
  /** GetSecretValue calls served (the key is read once per container). */
  reads: number;
  /** Requests still to be answered 500 InternalServiceError, counting down (0: the service is up). */
  unavailable: number;
  close(): Promise<void>;
}

export async function startSecretsServer(): Promise<SecretsServer> {
  const secrets = new Map<string, string>();
  const state = { reads: 0, unavailable: 0 };
  const server = createBodyServer((req, res, body) => {
    const target = String(req.headers['x-amz-target'] ?? '');
    const reply = (status: number, payload: unknown) => sendJson(res, status, payload, { 'content-type': 'application/x-amz-json-1.1' });
    if (target !== 'secretsmanager.GetSecretValue') return reply(400, { __type: 'UnknownOperationException', message: `${target} is not served by the test server` });
    if (state.unavailable > 0) {
      state.unavailable--;
      return reply(500, { __type: 'InternalServiceError', message: 'An error occurred on the server side.' });
    }
    state.reads++;
    const { SecretId } = jsonBody(body) as { SecretId?: string };
    const value = SecretId === undefined ? undefined : secrets.get(SecretId);
    if (value === undefined) return reply(400, { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." });
    reply(200, { ARN: SecretId, Name: SecretId, SecretString: value, VersionId: 'v1', VersionStages: ['AWSCURRENT'] });
  });
  const { url } = await listenLocal(server);
  // The handle is the state the handler reads: a test sets unavailable on it and the next requests obey.
  return Object.assign(state, { url, secrets, close: () => closeServer(server) });
}
