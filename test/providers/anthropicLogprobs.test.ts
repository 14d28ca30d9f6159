import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { REPO_ROOT, useTempDir } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';

// The Anthropic Messages API returns no token log-probabilities: a phase read from them (P(True)'s
// verify) on an Anthropic model is refused by the plan, before any call is paid for.

const tmp = useTempDir('anthropic-logprobs');

describe('the plan refuses a phase read from logprobs on an Anthropic model', () => {
  it.each(['plan', 'run'])('sondage %s of a P(True) campaign verified by an Anthropic model stops, naming the file, the model and the field, and writes nothing', async (command) => {
    // Prepare: the P(True) demo with its first model (an answerer and verifier) on Anthropic.
    const source = path.join(REPO_ROOT, 'examples/ptrue/demo.yaml');
    const raw = parse(await readFile(source, 'utf8')) as Record<string, unknown> & { design: Record<string, unknown>; models: Record<string, unknown>[] };
    raw.design['items'] = path.join(REPO_ROOT, 'examples/ptrue', raw.design['items'] as string);
    raw['data_dir'] = 'data';
    raw.models = [{ id: 'sonnet', provider: 'anthropic', model: 'claude-sonnet-4-5' }, ...raw.models.slice(1)];
    const file = path.join(tmp.dir, `ptrue-${command}.yaml`);
    await writeFile(file, stringify(raw));

    // Act
    const { code, stderr } = await runMain([command, file]);

    // Assess: refused with the reason, where it is, and nothing written (no ledger, no replies).
    expect(code).not.toBe(0);
    expect(stderr).toContain(
      `${file}: models[0].provider: phase "verify" is read from token logprobs, but the Anthropic Messages API returns no token log-probabilities`,
    );
    expect(await readdir(tmp.dir)).not.toContain('data');
  });
});
