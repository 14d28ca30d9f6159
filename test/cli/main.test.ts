import { describe, expect, it } from 'vitest';
import { parse } from '../../lib/cli/args.js';
import { runMain } from '../helpers/cli.js';

describe('the parser', () => {
  it('gives each command its own flags, typed and by flag name', () => {
    const run = parse('run', ['c.yaml', '--poll-interval', '30', '--quiet', '--allow-partial', '--data-dir', 'd']);
    expect(run).toMatchObject({ file: 'c.yaml', pollInterval: '30', quiet: true, allowPartial: true, dataDir: 'd', aws: false });
    expect(run.values['poll-interval']).toBe('30');

    const plan = parse('plan', ['c.yaml', '--aws']);
    expect(plan.aws).toBe(true);
    expect(plan.values.aws).toBe(true);

    const start = parse('start', ['c.yaml', '--aws', '--outputs', 'out.json', '--state-machine', 'arn:x']);
    expect(start).toMatchObject({ file: 'c.yaml', aws: true, outputs: 'out.json' });
    expect(start.values['state-machine']).toBe('arn:x');

    const status = parse('status', ['demo', '--failures', '3']);
    expect(status).toMatchObject({ file: 'demo', aws: false });
    expect(status.values.failures).toBe('3');

    const results = parse('results', ['demo', '--workgroup', 'w', '--database', 'd', '--athena-endpoint', 'http://127.0.0.1:1', '--out', 'o']);
    expect(results).toMatchObject({ file: 'demo', out: 'o' });
    expect(results.values).toMatchObject({ workgroup: 'w', database: 'd', 'athena-endpoint': 'http://127.0.0.1:1' });
  });

  it('refuses a flag the command does not take, and says which', () => {
    expect(() => parse('run', ['c.yaml', '--aws'])).toThrow("Unknown option '--aws'");
    expect(() => parse('start', ['c.yaml', '--aws', '--data-dir', 'd'])).toThrow("Unknown option '--data-dir'");
    expect(() => parse('stop', ['c', '--poll-interval', '3'])).toThrow("Unknown option '--poll-interval'");
    expect(() => parse('status', ['c', '--quiet'])).toThrow(/^sondage status: Unknown option '--quiet'/);
  });

  it('asks for the campaign, and one at a time', () => {
    expect(() => parse('status', ['--aws'])).toThrow('sondage: missing the campaign file or name');
    expect(() => parse('start', ['--aws'])).toThrow('sondage: missing the campaign file');
    expect(() => parse('stop', ['a', 'b'])).toThrow('one campaign at a time (got a, b)');
  });

  it('analyze --replies keeps its pairing rules', () => {
    expect(parse('analyze', ['--replies', 'r.jsonl', '--out', 'o'])).toMatchObject({ file: '', replies: 'r.jsonl', out: 'o' });
    expect(() => parse('analyze', ['--replies', 'r.jsonl'])).toThrow('--replies and --out go together');
  });
});

describe('sondage (dispatch)', () => {
  it('help lists the AWS commands and the endpoint variables', async () => {
    const { code, stdout } = await runMain(['--help']);
    expect(code).toBe(0);
    for (const text of ['sondage start <campaign.yaml> --aws', 'sondage status <campaign>', 'sondage results <campaign>', 'sondage stop <campaign>', 'AWS_ENDPOINT_URL_SFN', '--outputs FILE']) {
      expect(stdout).toContain(text);
    }
  });

  it('a usage error exits 1 with the message and the usage', async () => {
    const { code, stderr } = await runMain(['stop', 'x', '--bogus']);
    expect(code).toBe(1);
    expect(stderr).toContain("sondage stop: Unknown option '--bogus'");
    expect(stderr).toContain('Usage:');
  });
});
