/**
 * The definition checked before anything runs, so that a construct the interpreter does not
 * implement is refused by name even on a branch the test never takes: every state's fields against
 * what its type allows (JSONPath query language), every path and intrinsic parsed, every Choice
 * rule, Retrier and Catcher, every Task resource, and every Next pointing at a state of the same
 * States object (as CreateStateMachine requires).
 */
import { checkRule } from './choiceRules.js';
import { AslDefinitionError, UnsupportedAslError } from './errors.js';
import { assertReferencePath, parsePath } from './jsonPath.js';
import { checkTemplate } from './payloadTemplate.js';
import { checkRetryCatch } from './retryCatch.js';
import { integrationOf } from './taskResources.js';
import type { AslState, AslStates } from './types.js';

const IO = ['InputPath', 'OutputPath'];
const FIELDS: Readonly<Record<string, readonly string[]>> = {
  Pass: [...IO, 'Next', 'End', 'Parameters', 'ResultPath', 'Result'],
  Task: [...IO, 'Next', 'End', 'Parameters', 'ResultSelector', 'ResultPath', 'Resource', 'Retry', 'Catch'],
  Choice: [...IO, 'Choices', 'Default'],
  Wait: [...IO, 'Next', 'End', 'Seconds', 'SecondsPath', 'Timestamp', 'TimestampPath'],
  Succeed: IO,
  Fail: ['Error', 'ErrorPath', 'Cause', 'CausePath'],
  Parallel: [...IO, 'Next', 'End', 'Parameters', 'ResultSelector', 'ResultPath', 'Branches', 'Retry', 'Catch'],
  Map: [
    ...IO,
    'Next',
    'End',
    'Parameters',
    'ItemSelector',
    'ItemsPath',
    'ResultSelector',
    'ResultPath',
    'ItemProcessor',
    'Iterator',
    'MaxConcurrency',
    'MaxConcurrencyPath',
    'Retry',
    'Catch',
    'ItemReader',
    'ItemBatcher',
    'ResultWriter',
    'ToleratedFailurePercentage',
    'ToleratedFailurePercentagePath',
    'ToleratedFailureCount',
    'ToleratedFailureCountPath',
    'Label',
  ],
};
const TOP_FIELDS = new Set(['StartAt', 'States', 'Comment', 'Version', 'TimeoutSeconds', 'QueryLanguage']);
const BRANCH_FIELDS = new Set(['StartAt', 'States', 'Comment', 'ProcessorConfig', 'QueryLanguage']);

/** Throws (naming the state) unless the whole definition is within what the interpreter runs. */
export function checkDefinition(definition: AslStates): void {
  for (const k of Object.keys(definition)) if (!TOP_FIELDS.has(k)) throw new UnsupportedAslError(`top-level field ${k}`);
  if (definition.TimeoutSeconds !== undefined && !(Number.isInteger(definition.TimeoutSeconds) && (definition.TimeoutSeconds as number) > 0)) {
    throw new AslDefinitionError(`TimeoutSeconds must be a positive integer, got ${JSON.stringify(definition.TimeoutSeconds)}`);
  }
  checkStates(definition, 'the state machine');
}

function checkQueryLanguage(value: unknown, where: string): void {
  if (value !== undefined && value !== 'JSONPath') throw new UnsupportedAslError(`${where}: QueryLanguage ${JSON.stringify(value)} (only JSONPath is implemented)`);
}

function checkStates(machine: AslStates, where: string): void {
  checkQueryLanguage(machine.QueryLanguage, where);
  if (typeof machine.StartAt !== 'string' || typeof machine.States !== 'object' || machine.States === null) throw new AslDefinitionError(`${where}: StartAt and States are required`);
  const names = new Set(Object.keys(machine.States));
  if (!names.has(machine.StartAt)) throw new AslDefinitionError(`${where}: StartAt ${JSON.stringify(machine.StartAt)} is not a state`);
  for (const [name, state] of Object.entries(machine.States)) {
    try {
      checkState(state, names);
    } catch (err) {
      if (err instanceof UnsupportedAslError) throw err.at(name);
      if (err instanceof AslDefinitionError && !err.message.startsWith('state ')) throw new AslDefinitionError(`state ${JSON.stringify(name)}: ${err.message}`);
      throw err;
    }
  }
}

function checkPathField(state: AslState, field: string, nullable: boolean): void {
  const v = state[field];
  if (v === undefined || (nullable && v === null)) return;
  if (typeof v !== 'string') throw new AslDefinitionError(`${field} must be a path${nullable ? ' or null' : ''}, got ${JSON.stringify(v)}`);
  assertReferencePath(v.startsWith('$$') ? v.slice(1) : v, field);
}

function checkTransition(state: AslState, names: Set<string>): void {
  const terminal = state.Type === 'Succeed' || state.Type === 'Fail' || state.Type === 'Choice';
  if (terminal) return;
  const hasNext = typeof state.Next === 'string';
  if (hasNext === (state.End === true)) throw new AslDefinitionError('exactly one of Next and End: true is required');
  if (hasNext && !names.has(state.Next as string)) throw new AslDefinitionError(`Next ${JSON.stringify(state.Next)} is not a state of the same States`);
}

function checkState(state: AslState, names: Set<string>): void {
  const allowed = FIELDS[state.Type];
  if (!allowed) throw new UnsupportedAslError(`state type ${JSON.stringify(state.Type)}`);
  for (const k of Object.keys(state)) {
    if (k === 'Type' || k === 'Comment') continue;
    if (k === 'QueryLanguage') {
      checkQueryLanguage(state[k], 'state');
      continue;
    }
    if (!allowed.includes(k)) throw new UnsupportedAslError(`field ${k} of a ${state.Type} state`);
  }
  checkTransition(state, names);
  for (const f of ['InputPath', 'OutputPath', 'ResultPath']) checkPathField(state, f, true);
  for (const f of ['Parameters', 'ResultSelector', 'ItemSelector']) if (state[f] !== undefined) checkTemplate(state[f], f);
  checkRetryCatch(state.Retry, state.Catch);
  for (const c of (state.Catch ?? []) as { Next: string; ResultPath?: unknown }[]) {
    if (!names.has(c.Next)) throw new AslDefinitionError(`Catch Next ${JSON.stringify(c.Next)} is not a state of the same States`);
    if (c.ResultPath !== undefined && c.ResultPath !== null) assertReferencePath(String(c.ResultPath), 'Catch ResultPath');
  }
  switch (state.Type) {
    case 'Task':
      if (typeof state.Resource !== 'string') throw new AslDefinitionError('Resource is required');
      integrationOf(state.Resource);
      break;
    case 'Choice': {
      const rules = state.Choices;
      if (!Array.isArray(rules) || rules.length === 0) throw new AslDefinitionError('Choices must be a non-empty array');
      for (const r of rules as Record<string, unknown>[]) {
        checkRule(r, true);
        if (!names.has(r.Next as string)) throw new AslDefinitionError(`Choices Next ${JSON.stringify(r.Next)} is not a state of the same States`);
      }
      if (state.Default !== undefined && !names.has(state.Default as string)) throw new AslDefinitionError(`Default ${JSON.stringify(state.Default)} is not a state of the same States`);
      break;
    }
    case 'Wait': {
      const given = ['Seconds', 'SecondsPath', 'Timestamp', 'TimestampPath'].filter((f) => state[f] !== undefined);
      if (given.length !== 1) throw new AslDefinitionError(`exactly one of Seconds, SecondsPath, Timestamp, TimestampPath is required, got ${given.join(', ') || 'none'}`);
      for (const f of ['SecondsPath', 'TimestampPath']) checkPathField(state, f, false);
      break;
    }
    case 'Fail':
      for (const f of ['ErrorPath', 'CausePath']) if (state[f] !== undefined) checkTemplate({ [`${f}.$`]: state[f] }, f);
      if (state.Error !== undefined && state.ErrorPath !== undefined) throw new AslDefinitionError('Error and ErrorPath are exclusive');
      if (state.Cause !== undefined && state.CausePath !== undefined) throw new AslDefinitionError('Cause and CausePath are exclusive');
      break;
    case 'Parallel':
      if (!Array.isArray(state.Branches) || state.Branches.length === 0) throw new AslDefinitionError('Branches must be a non-empty array');
      (state.Branches as AslStates[]).forEach((b, i) => {
        for (const k of Object.keys(b)) if (!BRANCH_FIELDS.has(k) || k === 'ProcessorConfig') throw new UnsupportedAslError(`field ${k} of Branches[${i}]`);
        checkStates(b, `Branches[${i}]`);
      });
      break;
    case 'Map':
      checkMap(state);
      break;
  }
}

function checkMap(state: AslState): void {
  if (state.ItemProcessor !== undefined && state.Iterator !== undefined) throw new AslDefinitionError('ItemProcessor and Iterator are exclusive');
  if (state.ItemSelector !== undefined && state.Parameters !== undefined) throw new AslDefinitionError('ItemSelector and Parameters are exclusive');
  const processor = (state.ItemProcessor ?? state.Iterator) as (AslStates & { ProcessorConfig?: Record<string, unknown> }) | undefined;
  if (!processor) throw new AslDefinitionError('ItemProcessor is required');
  for (const k of Object.keys(processor)) if (!BRANCH_FIELDS.has(k)) throw new UnsupportedAslError(`field ${k} of ItemProcessor`);
  const config = processor.ProcessorConfig ?? {};
  for (const k of Object.keys(config)) if (k !== 'Mode' && k !== 'ExecutionType') throw new UnsupportedAslError(`ProcessorConfig.${k}`);
  const distributed = config.Mode === 'DISTRIBUTED';
  if (config.Mode !== undefined && config.Mode !== 'INLINE' && !distributed) throw new AslDefinitionError(`ProcessorConfig.Mode ${JSON.stringify(config.Mode)}`);
  if (distributed && config.ExecutionType !== 'STANDARD' && config.ExecutionType !== 'EXPRESS') throw new AslDefinitionError('a DISTRIBUTED ItemProcessor needs ExecutionType STANDARD or EXPRESS');
  const distributedOnly = ['ItemReader', 'ItemBatcher', 'ResultWriter', 'ToleratedFailurePercentage', 'ToleratedFailurePercentagePath', 'ToleratedFailureCount', 'ToleratedFailureCountPath', 'Label'];
  for (const f of distributedOnly) if (!distributed && state[f] !== undefined) throw new AslDefinitionError(`${f} needs ProcessorConfig.Mode DISTRIBUTED`);
  for (const f of ['ItemsPath', 'MaxConcurrencyPath', 'ToleratedFailurePercentagePath', 'ToleratedFailureCountPath']) checkPathField(state, f, false);
  for (const pair of [['MaxConcurrency', 'MaxConcurrencyPath'], ['ToleratedFailurePercentage', 'ToleratedFailurePercentagePath'], ['ToleratedFailureCount', 'ToleratedFailureCountPath']]) {
    if (state[pair[0]!] !== undefined && state[pair[1]!] !== undefined) throw new AslDefinitionError(`${pair[0]} and ${pair[1]} are exclusive`);
  }
  if (state.ItemReader !== undefined) {
    if (state.ItemsPath !== undefined) throw new UnsupportedAslError('ItemsPath together with ItemReader');
    const reader = state.ItemReader as Record<string, unknown>;
    for (const k of Object.keys(reader)) if (!['Resource', 'ReaderConfig', 'Parameters'].includes(k)) throw new UnsupportedAslError(`ItemReader.${k}`);
    if (!/^arn:[\w-]+:states:::s3:getObject$/.test(String(reader.Resource))) throw new UnsupportedAslError(`ItemReader Resource ${JSON.stringify(reader.Resource)} (only s3:getObject is implemented)`);
    const rc = (reader.ReaderConfig ?? {}) as Record<string, unknown>;
    for (const k of Object.keys(rc)) if (!['InputType', 'MaxItems', 'MaxItemsPath'].includes(k)) throw new UnsupportedAslError(`ItemReader.ReaderConfig.${k}`);
    if (rc.InputType !== 'JSON' && rc.InputType !== 'JSONL') throw new UnsupportedAslError(`ItemReader InputType ${JSON.stringify(rc.InputType)} (JSON and JSONL are implemented)`);
    if (rc.MaxItemsPath !== undefined) assertReferencePath(String(rc.MaxItemsPath), 'MaxItemsPath');
    checkTemplate(reader.Parameters, 'ItemReader.Parameters');
  }
  if (state.ItemBatcher !== undefined) {
    const b = state.ItemBatcher as Record<string, unknown>;
    for (const k of Object.keys(b)) if (!['MaxItemsPerBatch', 'MaxItemsPerBatchPath', 'MaxInputBytesPerBatch', 'MaxInputBytesPerBatchPath', 'BatchInput'].includes(k)) throw new UnsupportedAslError(`ItemBatcher.${k}`);
    if (['MaxItemsPerBatch', 'MaxItemsPerBatchPath', 'MaxInputBytesPerBatch', 'MaxInputBytesPerBatchPath'].every((k) => b[k] === undefined)) {
      throw new AslDefinitionError('ItemBatcher needs MaxItemsPerBatch(Path) or MaxInputBytesPerBatch(Path)');
    }
    for (const k of ['MaxItemsPerBatchPath', 'MaxInputBytesPerBatchPath']) if (b[k] !== undefined) assertReferencePath(String(b[k]), k);
    checkTemplate(b.BatchInput, 'ItemBatcher.BatchInput');
  }
  if (state.ResultWriter !== undefined) {
    const w = state.ResultWriter as Record<string, unknown>;
    for (const k of Object.keys(w)) if (!['Resource', 'Parameters', 'WriterConfig'].includes(k)) throw new UnsupportedAslError(`ResultWriter.${k}`);
    if (w.Resource !== undefined && !/^arn:[\w-]+:states:::s3:putObject$/.test(String(w.Resource))) throw new UnsupportedAslError(`ResultWriter Resource ${JSON.stringify(w.Resource)} (only s3:putObject is implemented)`);
    if (w.Resource === undefined && w.WriterConfig === undefined) throw new AslDefinitionError('ResultWriter needs Resource or WriterConfig');
    const wc = (w.WriterConfig ?? {}) as Record<string, unknown>;
    for (const k of Object.keys(wc)) if (!['OutputType', 'Transformation'].includes(k)) throw new UnsupportedAslError(`ResultWriter.WriterConfig.${k}`);
    if (wc.OutputType !== undefined && wc.OutputType !== 'JSON' && wc.OutputType !== 'JSONL') throw new UnsupportedAslError(`ResultWriter OutputType ${JSON.stringify(wc.OutputType)}`);
    if (wc.Transformation !== undefined && !['NONE', 'COMPACT', 'FLATTEN'].includes(String(wc.Transformation))) throw new UnsupportedAslError(`ResultWriter Transformation ${JSON.stringify(wc.Transformation)}`);
    checkTemplate(w.Parameters, 'ResultWriter.Parameters');
  }
  checkStates(processor, 'ItemProcessor');
  if (typeof state.ItemsPath === 'string') parsePath(state.ItemsPath);
}
