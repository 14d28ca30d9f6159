/**
 * The attribute names a DynamoDB write names, per table, as IAM's `dynamodb:Attributes` sees them
 * at most: the key and item attributes, and every attribute an update or condition expression
 * names (through `#name` placeholders too). A superset of what IAM counts, so a policy that allows
 * these allows the write.
 */

interface WriteInput {
  readonly TableName?: string;
  readonly Key?: Record<string, unknown>;
  readonly Item?: Record<string, unknown>;
  readonly UpdateExpression?: string;
  readonly ConditionExpression?: string;
  readonly ExpressionAttributeNames?: Record<string, string>;
}

/** Words of the expression grammar, not attribute names. */
const KEYWORDS = new Set(['SET', 'ADD', 'REMOVE', 'DELETE', 'AND', 'OR', 'NOT', 'BETWEEN', 'IN']);

/** Attribute names of one expression: `#placeholders` resolved, functions and `:values` left out. */
export function expressionAttributes(expression: string | undefined, names: Record<string, string> = {}): string[] {
  if (expression === undefined) return [];
  const out: string[] = [];
  for (const m of expression.matchAll(/(:?#?)([A-Za-z_][A-Za-z0-9_]*)(\s*\()?/g)) {
    const [, sigil, word, call] = m as unknown as [string, string, string, string | undefined];
    if (sigil === ':' || call !== undefined || KEYWORDS.has(word)) continue;
    if (sigil === '#') out.push(names[`#${word}`] ?? `#${word}`);
    else out.push(word);
  }
  return out;
}

function attributesOf(input: WriteInput): string[] {
  return [
    ...Object.keys(input.Key ?? {}),
    ...Object.keys(input.Item ?? {}),
    ...expressionAttributes(input.UpdateExpression, input.ExpressionAttributeNames),
    ...expressionAttributes(input.ConditionExpression, input.ExpressionAttributeNames),
  ];
}

/** The attribute names each table's writes name, over recorded writes (`{ command, input }` as the SDK sent them). */
export function writtenAttributes(writes: readonly { readonly command: string; readonly input: unknown }[]): Map<string, { actions: Set<string>; attributes: Set<string> }> {
  const out = new Map<string, { actions: Set<string>; attributes: Set<string> }>();
  const add = (action: string, input: WriteInput): void => {
    const table = input.TableName ?? '?';
    const entry = out.get(table) ?? { actions: new Set<string>(), attributes: new Set<string>() };
    entry.actions.add(action);
    for (const a of attributesOf(input)) entry.attributes.add(a);
    out.set(table, entry);
  };
  for (const { command, input } of writes) {
    const i = input as Record<string, unknown>;
    if (command === 'TransactWriteItemsCommand') {
      for (const item of (i['TransactItems'] ?? []) as Record<string, WriteInput>[]) {
        for (const [kind, action] of [['Put', 'dynamodb:PutItem'], ['Update', 'dynamodb:UpdateItem'], ['Delete', 'dynamodb:DeleteItem'], ['ConditionCheck', 'dynamodb:ConditionCheckItem']] as const) {
          if (item[kind]) add(action, item[kind]!);
        }
      }
    } else if (command === 'BatchWriteItemCommand') {
      for (const [table, requests] of Object.entries((i['RequestItems'] ?? {}) as Record<string, { PutRequest?: { Item: Record<string, unknown> }; DeleteRequest?: { Key: Record<string, unknown> } }[]>)) {
        for (const r of requests) add('dynamodb:BatchWriteItem', { TableName: table, ...(r.PutRequest ? { Item: r.PutRequest.Item } : {}), ...(r.DeleteRequest ? { Key: r.DeleteRequest.Key } : {}) });
      }
    } else {
      add(`dynamodb:${command.replace(/Command$/, '')}`, i as WriteInput);
    }
  }
  return out;
}
