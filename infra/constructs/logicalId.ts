import { Stack } from 'aws-cdk-lib';
import type { CfnElement } from 'aws-cdk-lib';

/** The logical id cdk-nag prints for a resource: its finding ids name resources by it. */
export function logicalId(element: CfnElement): string {
  const stack = Stack.of(element);
  return stack.resolve(stack.getLogicalId(element)) as string;
}
