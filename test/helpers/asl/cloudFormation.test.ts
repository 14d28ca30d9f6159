/** A synthesized template's state machine resolved with stand-in names; what has no stand-in is refused. */
import { describe, expect, it } from 'vitest';
import { AslDefinitionError } from './errors.js';
import { resolveTemplateValue, stateMachineOf } from './cloudFormation.js';
import type { TemplateJson } from './cloudFormation.js';

const TEMPLATE: TemplateJson = {
  Resources: {
    Bucket12AB: { Type: 'AWS::S3::Bucket' },
    Ledger99: { Type: 'AWS::DynamoDB::GlobalTable' },
    Keys77: { Type: 'AWS::SecretsManager::Secret' },
    PlanFnA1: { Type: 'AWS::Lambda::Function', Properties: { Timeout: 900, MemorySize: 1769, Environment: { Variables: { BUCKET: { Ref: 'Bucket12AB' }, KEYS: { Ref: 'Keys77' }, TABLE: { Ref: 'Ledger99' } } } } },
    Machine1: {
      Type: 'AWS::StepFunctions::StateMachine',
      Properties: {
        DefinitionString: {
          'Fn::Join': ['', ['{"StartAt":"P","States":{"P":{"Type":"Task","Resource":"', { 'Fn::GetAtt': ['PlanFnA1', 'Arn'] }, '","Parameters":{"Bucket":"', { Ref: 'Bucket12AB' }, '","Region":"', { Ref: 'AWS::Region' }, '"},"End":true}}}']],
        },
      },
    },
  },
};

describe('stateMachineOf', () => {
  it('resolves Ref, Fn::GetAtt, Fn::Join and pseudo parameters, and gives each function its environment', () => {
    const sm = stateMachineOf(TEMPLATE, { refs: { Bucket12AB: 'data' } });
    expect(sm.arn).toBe('arn:aws:states:us-east-1:123456789012:stateMachine:Machine1');
    expect(sm.definition).toEqual({
      StartAt: 'P',
      States: { P: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:123456789012:function:PlanFnA1', Parameters: { Bucket: 'data', Region: 'us-east-1' }, End: true } },
    });
    expect(sm.functions.get('PlanFnA1')).toEqual({
      logicalId: 'PlanFnA1',
      arn: 'arn:aws:lambda:us-east-1:123456789012:function:PlanFnA1',
      environment: { BUCKET: 'data', KEYS: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:Keys77-AbCdEf', TABLE: 'Ledger99' },
      timeoutSeconds: 900,
      memoryMb: 1769,
    });
  });

  it('resolves Fn::Select / Fn::Split and Fn::Sub; refuses what it has no stand-in for', () => {
    expect(resolveTemplateValue({ 'Fn::Select': [1, { 'Fn::Split': [':', 'a:b:c'] }] }, TEMPLATE)).toBe('b');
    expect(resolveTemplateValue({ 'Fn::Sub': 'arn:${AWS::Partition}:s3:::${Bucket12AB}/*' }, TEMPLATE)).toBe('arn:aws:s3:::bucket12ab/*');
    expect(() => resolveTemplateValue({ 'Fn::GetAtt': ['Bucket12AB', 'WebsiteURL'] }, TEMPLATE)).toThrow(AslDefinitionError);
    expect(() => resolveTemplateValue({ 'Fn::ImportValue': 'x' }, TEMPLATE)).toThrow(/Fn::ImportValue has no stand-in/);
    expect(() => resolveTemplateValue({ Ref: 'Nope' }, TEMPLATE)).toThrow(/no resource Nope/);
  });
});
