import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUN_FIXTURES, useTempDir, writeCampaign, type CampaignDoc } from '../helpers/campaigns.js';
import { exited, runMain, spawnCli } from '../helpers/cli.js';

// A wrong campaign file stops `sondage plan` and `sondage run` with exit code 1 and a message that
// names the file, the path inside it and what was expected, before anything is written.

const BAD_STORIES = path.join(RUN_FIXTURES, 'stories-missing-rendering.yaml');

interface BadCase {
  readonly name: string;
  readonly edit: (doc: CampaignDoc) => void;
  /** `file: path: expectation` fragments; `{campaign}` stands for the campaign file. */
  readonly messages: readonly string[];
  /** Commands that must refuse it (plan does not build providers, so it cannot see their settings). */
  readonly commands: readonly ('plan' | 'run')[];
}

const CASES: readonly BadCase[] = [
  {
    name: 'a story without a rendering in a campaign language',
    edit: (doc) => {
      doc.design['stories'] = BAD_STORIES;
    },
    messages: [`${BAD_STORIES}: stories[1].renderings.de: missing; the campaign asks for en, de, so every story needs a { agent, text } rendering in de`],
    commands: ['plan', 'run'],
  },
  {
    name: 'an unknown language',
    edit: (doc) => {
      doc.design['languages'] = ['en', 'xx'];
    },
    messages: ['{campaign}: design.languages[1]: "xx" is not a known language; use one of en, zh, de, ja, ko, fr'],
    commands: ['plan', 'run'],
  },
  {
    name: 'a model entry with a misspelt provider and no model name',
    edit: (doc) => {
      doc.models[1]!['provider'] = 'simulatd';
      delete doc.models[0]!['model'];
    },
    messages: [
      "{campaign}: models[0].model: is required; the provider's model name",
      '{campaign}: models[1].provider: "simulatd" is not a known provider; use one of openai, anthropic, openai-compatible, bedrock, simulated',
    ],
    commands: ['plan', 'run'],
  },
  {
    name: "a simulated model's invalid simulation settings",
    edit: (doc) => {
      doc.models[0]!['simulation'] = { latency: 5, error_rate: 2 };
    },
    messages: ['{campaign}: models[0].simulation.latency: unknown key; known keys here:', '{campaign}: models[0].simulation.error_rate: must be at most 1, got 2'],
    commands: ['run'],
  },
];

const tmp = useTempDir('cli-bad');

describe('a bad campaign file', () => {
  const runs = CASES.flatMap((c) => c.commands.map((command) => ({ ...c, command })));
  it.each(runs)('$command refuses $name: exit 1, the file, the path and the expectation, nothing written', async ({ command, edit, messages }) => {
    const file = await writeCampaign(tmp.dir, 'small.yaml', edit);

    const { code, stderr } = await runMain([command, file]);

    expect(code).toBe(1);
    for (const m of messages) expect(stderr).toContain(m.replace('{campaign}', file));
    // No data folder (data_dir: data beside the file), nothing else either.
    expect(await readdir(tmp.dir)).toEqual(['campaign.yaml']);
  });

  it('the real binary: `sondage run` on a bad file exits 1 with the message and writes nothing', async () => {
    const file = await writeCampaign(tmp.dir, 'small.yaml', (doc) => {
      doc.design['languages'] = ['en', 'xx'];
    });
    const child = spawnCli(['run', file, '--data-dir', path.join(tmp.dir, 'elsewhere')]);

    expect(await exited(child)).toBe(1);
    expect(child.output().stderr).toContain(`${file}: design.languages[1]: "xx" is not a known language`);
    expect(await readdir(tmp.dir)).toEqual(['campaign.yaml']);
  });
});
