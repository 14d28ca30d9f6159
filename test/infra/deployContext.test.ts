/**
 * The deployment's sondage:* context kept in the project (infra/deployContext.ts): a plain
 * `npx cdk deploy` after `-c sondage:gpu=true -c sondage:alarmEmail=…` deploys the GPU queues and
 * the subscription again instead of removing them under running jobs.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
// eslint-disable-next-line no-restricted-imports -- the infra tests inspect the CDK app; lib/ still may not import it
import { App } from 'aws-cdk-lib';
// eslint-disable-next-line no-restricted-imports -- the infra tests inspect the CDK app; lib/ still may not import it
import { Template } from 'aws-cdk-lib/assertions';
// eslint-disable-next-line no-restricted-imports -- the infra tests inspect the CDK app; lib/ still may not import it
import { BUNDLING_STACKS } from 'aws-cdk-lib/cx-api';
import { describe, expect, it } from 'vitest';
import { buildApp, stackBatterySources } from '../../infra/app.js';
import { keepDeployContext } from '../../infra/deployContext.js';
import { CONTEXT } from '../../lib/config/index.js';
import { OPS_CONTEXT } from '../../lib/config/operations.js';
import { useTempDir } from '../helpers/campaigns.js';

const tmp = useTempDir('deploy-context', 'all');

/** A fresh App as `cdk` builds it: the -c keys given, bundling off. */
const app = (given: Record<string, string> = {}) => new App({ context: { [BUNDLING_STACKS]: [], ...given } });

describe('the deployment context kept in sondage.deploy.json', () => {
  it('a list of batteries from cdk.json is kept as JSON, and a plain deploy reads the same sources back', async () => {
    const file = path.join(tmp.dir, 'batteries', 'sondage.deploy.json');
    await mkdir(path.dirname(file), { recursive: true });
    const first = new App({ context: { [BUNDLING_STACKS]: [], [CONTEXT.batteries]: ['./likert/', { module: '@lab/sondage-x' }] } });
    keepDeployContext(first, file);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ [CONTEXT.batteries]: '["./likert/",{"module":"@lab/sondage-x"}]' });
    const plain = app();
    keepDeployContext(plain, file);
    expect(stackBatterySources(plain, tmp.dir)).toEqual(stackBatterySources(first, tmp.dir));
  });

  it('a plain deploy after `-c sondage:gpu=true -c sondage:alarmEmail=…` keeps the GPU queues and the alarm subscription, and says so', async () => {
    // prepare: the first deploy, with the flags
    const file = path.join(tmp.dir, 'plain', 'sondage.deploy.json');
    await mkdir(path.dirname(file), { recursive: true });
    keepDeployContext(app({ [CONTEXT.gpu]: 'true', [OPS_CONTEXT.alarmEmail]: 'ops@example.com' }), file);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ [OPS_CONTEXT.alarmEmail]: 'ops@example.com', [CONTEXT.gpu]: 'true' });
    // act: `npx cdk deploy` with no -c
    const notices: string[] = [];
    const { stack } = buildApp(app(), { nag: false, contextFile: file, notice: (l) => notices.push(l) });
    // assess: the same queues and subscription as the first deploy
    const t = Template.fromStack(stack);
    expect(Object.keys(t.findResources('AWS::Batch::JobQueue')).length).toBeGreaterThan(0);
    t.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
    expect(notices).toEqual([`sondage: kept from ${file}: sondage:gpu=true, sondage:alarmEmail=ops@example.com (as the last cdk command was given them; -c KEY=VALUE changes one, -c KEY= clears one)`]);
  }, 300_000);

  it('a key given wins and is recorded; `-c KEY=` clears one; keys never given stay unset', async () => {
    const file = path.join(tmp.dir, 'change.json');
    keepDeployContext(app({ [CONTEXT.gpu]: 'true', [OPS_CONTEXT.monthlyBudgetUsd]: '200', [OPS_CONTEXT.alarmEmail]: 'ops@example.com' }), file);
    // act: turn the GPU queues off, clear the e-mail, leave the budget alone
    const next = app({ [CONTEXT.gpu]: 'false', [OPS_CONTEXT.alarmEmail]: '' });
    const kept = keepDeployContext(next, file);
    // assess
    expect(kept.fromFile).toEqual({ [OPS_CONTEXT.monthlyBudgetUsd]: '200' });
    expect(next.node.tryGetContext(OPS_CONTEXT.monthlyBudgetUsd)).toBe('200');
    expect(next.node.tryGetContext(CONTEXT.workerConcurrency)).toBeUndefined();
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ [OPS_CONTEXT.alarmEmail]: '', [OPS_CONTEXT.monthlyBudgetUsd]: '200', [CONTEXT.gpu]: 'false' });
    // a third run with nothing given writes nothing and keeps the cleared e-mail cleared
    const third = app();
    expect(keepDeployContext(third, file).written).toBe(false);
    expect(third.node.tryGetContext(OPS_CONTEXT.alarmEmail)).toBe('');
    expect(third.node.tryGetContext(CONTEXT.gpu)).toBe('false');
  });

  it.each([
    ['not JSON', '{ gpu: true', /change-bad\.json: not JSON; expected the object of sondage:\* context keys/],
    ['an unknown key', JSON.stringify({ 'sondage:gpus': 'true' }), /"sondage:gpus" is not a sondage context key; expected one of sondage:gpu, /],
    ['a value that is not a string', JSON.stringify({ 'sondage:gpu': true }), /sondage:gpu: expected a string, as -c gives it, got boolean/],
  ])('a file holding %s is refused naming the file and the key', async (_what, text, message) => {
    const file = path.join(tmp.dir, 'change-bad.json');
    await writeFile(file, text);
    expect(() => keepDeployContext(app(), file)).toThrow(message);
  });
});
