import { BedrockRuntimeClient, ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import type { BedrockRuntimeClientConfig } from '@aws-sdk/client-bedrock-runtime';
import type { GenerateRequest, GenerateResult, ModelProvider, RetryDecision } from '../types.js';
import { classifyProviderError, endpointOf } from '../sdkErrors.js';
import { toBedrockCallError } from './bedrockErrors.js';
import type { BedrockErrorContext } from './bedrockErrors.js';
import { fromWireResponse, settingsSent, toWireRequest } from './converseWire.js';

/** What every Bedrock client of sondage is built from. */
export interface BedrockConnection {
  /** Model id or inference profile id (`anthropic.claude-3-5-haiku-20241022-v1:0`, `us.anthropic.…`). */
  readonly model: string;
  readonly region: string;
  /**
   * Where every call goes instead of AWS (Converse, the batch control plane and S3 alike): a
   * wire-format stand-in in tests. Absent: the regional AWS endpoints.
   */
  readonly endpoint?: string;
  /** Absent: the SDK's default chain (the Lambda role on AWS, the profile or environment locally). */
  readonly credentials?: BedrockRuntimeClientConfig['credentials'];
  /** The SDK's own per-request timeout, a backstop behind callWithRetry's signal. Default 10 minutes. */
  readonly timeoutMs?: number;
}

/**
 * The SDK options every Bedrock client uses: retries off (they live in lib/run), the timeout, and
 * `forcePathStyle` for S3 so that a stand-in at one address serves the bucket too.
 */
export function awsClientConfig(c: BedrockConnection): { region: string; maxAttempts: number; endpoint?: string; credentials?: BedrockRuntimeClientConfig['credentials']; requestHandler: { requestTimeout: number } } {
  return {
    region: c.region,
    maxAttempts: 1,
    ...(c.endpoint !== undefined ? { endpoint: c.endpoint } : {}),
    ...(c.credentials !== undefined ? { credentials: c.credentials } : {}),
    requestHandler: { requestTimeout: c.timeoutMs ?? 600_000 },
  };
}

/** Static credentials handed in (tests) are redacted from every message; the default chain's never reach one. */
export function credentialSecrets(credentials: BedrockConnection['credentials']): string[] {
  if (credentials === undefined || typeof credentials === 'function') return [];
  return [credentials.secretAccessKey, credentials.sessionToken ?? ''].filter((s) => s !== '');
}

/**
 * The error context of a Bedrock client: where its calls go (the connection's endpoint, or the
 * Region's endpoint of the AWS `service`) and the static credentials to redact.
 */
export function bedrockErrorContext(provider: string, c: BedrockConnection, service: 'bedrock' | 'bedrock-runtime'): BedrockErrorContext {
  return { provider, endpoint: endpointOf(c.endpoint ?? `https://${service}.${c.region}.amazonaws.com`), secrets: credentialSecrets(c.credentials) };
}

/**
 * Amazon Bedrock's Converse API through `@aws-sdk/client-bedrock-runtime`, one adapter for every
 * model Bedrock serves. Converse returns no logprobs (declared in lib/battery/providerCapabilities.ts,
 * so a phase that reads them is refused at plan time). The SDK's retries are off: retries live in
 * lib/run/callWithRetry.ts.
 */
export class BedrockConverseProvider implements ModelProvider {
  readonly id: string;
  readonly simulated = false;
  readonly endpoint: string;
  readonly #client: BedrockRuntimeClient;
  readonly #model: string;
  readonly #errors: BedrockErrorContext;

  constructor(options: BedrockConnection) {
    this.#model = options.model;
    this.id = `bedrock/${options.model}`;
    this.#errors = bedrockErrorContext(this.id, options, 'bedrock-runtime');
    this.endpoint = this.#errors.endpoint;
    this.#client = new BedrockRuntimeClient(awsClientConfig(options));
  }

  async generate(req: GenerateRequest, signal?: AbortSignal): Promise<GenerateResult> {
    const body = toWireRequest(req, this.id);
    let out: unknown;
    try {
      out = await this.#client.send(new ConverseCommand({ modelId: this.#model, ...body }), signal ? { abortSignal: signal } : {});
    } catch (err) {
      throw toBedrockCallError(err, this.#errors);
    }
    return { ...fromWireResponse(out, this.id), settings_sent: settingsSent(body) };
  }

  classifyError(err: unknown): RetryDecision {
    return classifyProviderError(err);
  }
}
