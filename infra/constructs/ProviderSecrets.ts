import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

/**
 * Provider API keys on AWS: one Secrets Manager secret whose value is a JSON
 * object of environment-variable name → key (`{"OPENAI_API_KEY": "sk-…"}`), the names a campaign's
 * `api_key_env` gives. The stack creates it with a placeholder value; the operator puts the real
 * keys with `aws secretsmanager put-secret-value`. Workers read it once per cold start and hand it
 * to the provider registry as its environment, so keys never sit in Lambda configuration.
 */
export class ProviderSecrets extends Construct {
  public readonly secret: secretsmanager.Secret;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.secret = new secretsmanager.Secret(this, 'ProviderKeys', {
      description: 'sondage provider API keys: JSON object of environment-variable name to key',
      secretObjectValue: {},
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The values are API keys issued by third parties (OpenAI, Anthropic, …): Secrets Manager cannot rotate them, only the vendor console can; the operator replaces them with put-secret-value.',
    });
  }

  /** Read access to the one secret (GetSecretValue, DescribeSecret on its ARN). */
  public grantRead(grantee: iam.IGrantable): void {
    this.secret.grantRead(grantee);
  }
}
