/**
 * A readout that cannot be read is said, not shown as a column of "–": P(True) from verify replies
 * without logprobs, from a server that answers with its own top-k instead of the candidates, or
 * from bring-your-own rows whose `p_true` is empty. The terminal, summary.md and report.html carry a
 * warning with the share and the reason; a readout read for no row ends `run` or `analyze` with
 * exit 7 (docs/troubleshooting.md), a partly readable one with exit 0.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readoutHealth, readoutWarning } from '../../lib/battery/readoutHealth.js';
import { runMain } from '../helpers/cli.js';
import { REPO_ROOT, useTempDir } from '../helpers/campaigns.js';
import { chatCompletion, startWireServer, type RecordedRequest } from '../providers/helpers/wireServer.js';

const tmp = useTempDir('unreadable', 'all');

async function results(folder: string): Promise<{ summary: string; report: string }> {
  return { summary: await readFile(path.join(folder, 'summary.md'), 'utf8'), report: await readFile(path.join(folder, 'report.html'), 'utf8') };
}

describe('unreadable readouts', () => {
  it('bring-your-own P(True) rows with every p_true empty: warned everywhere, exit 7; half empty: warned, exit 0', async () => {
    const rows = (empty: (i: number) => boolean) => {
      const out = ['item,model,q,r,v,correct,p_true,benchmark'];
      let i = 0;
      for (const item of ['i1', 'i2', 'i3', 'i4']) for (const q of ['en', 'fr']) for (const v of ['en', 'fr']) out.push(`${item},m1,${q},${q},${v},${item === 'i1' || item === 'i3' ? 1 : 0},${empty(i++) ? '' : item === 'i1' ? 0.9 : 0.4},triv`);
      return `${out.join('\n')}\n`;
    };
    const file = path.join(tmp.dir, 'rows.csv');
    await writeFile(file, rows(() => true));
    const out = path.join(tmp.dir, 'byo-all');
    const all = await runMain(['analyze', '--battery', 'ptrue', '--replies', file, '--out', out]);
    expect(all.code).toBe(7);
    const warning = 'WARNING: P(True) unreadable for 16 of 16 verifier rows (100 %) — 16: p_true is empty. Every figure resting on P(True) is "–".';
    expect(all.stdout).toContain(warning);
    expect(all.stderr).toContain('P(True) could be read for none of its 16 verifier rows');
    const files = await results(out);
    expect(files.summary).toContain(warning);
    expect(files.report).toContain('WARNING: P(True) unreadable for 16 of 16 verifier rows (100 %)');

    await writeFile(file, rows((i) => i % 4 === 0));
    const half = await runMain(['analyze', '--battery', 'ptrue', '--replies', file, '--out', path.join(tmp.dir, 'byo-some')]);
    expect(half.code).toBe(0);
    expect(half.stdout).toContain('WARNING: P(True) unreadable for 4 of 16 verifier rows (25 %) — 4: p_true is empty. Figures resting on P(True) use the 12 readable verifier rows only.');
  });

  it.each([
    ['verify replies without logprobs', 'none', /the verify reply carries no logprobs/],
    ['a server that falls back to its top-20 logprobs', 'top20', /only top-k bounds for both True and False \(the model fell back to its top-k logprobs\)/],
  ] as const)('%s: run warns with the reason in stdout, summary.md and report.html, and exits 7', async (_name, mode, reason) => {
    const server = await startWireServer([
      {
        from: (req: RecordedRequest) => {
          const body = req.body as { logprob_token_ids?: number[] };
          if (body.logprob_token_ids === undefined) return chatCompletion(req, 'B. Paris is the answer.', { prompt_tokens: 60, completion_tokens: 5 });
          const reply = chatCompletion(req, 'True', { prompt_tokens: 60, completion_tokens: 1 }).json as { choices: { logprobs: unknown }[] };
          if (mode === 'top20') {
            // Twenty tokens that are none of the candidates asked for.
            const top = Array.from({ length: 20 }, (_, i) => ({ token: `token_id:${90_000 + i}`, logprob: -0.5 - i, bytes: null }));
            reply.choices[0]!.logprobs = { content: [{ token: top[0]!.token, logprob: top[0]!.logprob, bytes: null, top_logprobs: top }] };
          }
          return { json: reply };
        },
      },
    ]);
    try {
      const folder = path.join(tmp.dir, `ptrue-${mode}`);
      await cp(path.join(REPO_ROOT, 'examples', 'ptrue'), folder, { recursive: true });
      const file = path.join(folder, 'demo.yaml');
      const text = (await readFile(file, 'utf8'))
        .replace(/^data_dir: .*$/m, 'data_dir: ./data')
        .replace(/languages: \[en, zh, fr, ja, ko, hi\]/g, 'languages: [en, fr]')
        .replace(/^models:\n[\s\S]*?(?=^judge:)/m, `models:\n  - id: qwen\n    provider: openai-compatible\n    model: Qwen/Qwen3-8B\n    base_url: ${server.url}/v1\n    api_key_env: SONDAGE_UNREADABLE_KEY\n    price: { input_per_mtok: 0.1, output_per_mtok: 0.1 }\n\n`);
      await writeFile(file, text);
      process.env['SONDAGE_UNREADABLE_KEY'] = 'sk-test-local-0000';
      const run = await runMain(['run', file, '--quiet']);
      expect(run.stderr).not.toMatch(/Error:|at .*\.ts:\d+/);
      expect(run.code).toBe(7);
      expect(run.stdout).toMatch(/WARNING: P\(True\) unreadable for (\d+) of \1 verifier rows \(100 %\) — \d+: /);
      expect(run.stdout).toMatch(reason);
      const files = await results(path.join(folder, 'data', 'campaigns', 'ptrue-demo', 'results'));
      expect(files.summary).toMatch(reason);
      expect(files.report).toMatch(reason);
      // analyze on the same data says the same.
      const again = await runMain(['analyze', file]);
      expect(again.code).toBe(7);
      expect(again.stdout).toMatch(reason);
    } finally {
      delete process.env['SONDAGE_UNREADABLE_KEY'];
      await server.close();
    }
  }, 180_000);

  it('readoutWarning says nothing when every row was read, and the share otherwise', () => {
    const h = readoutHealth('P(True)', 'verifier rows', [1, null, null, 4], (x) => (x === null ? 'missing' : null));
    expect(readoutWarning(h)).toBe('WARNING: P(True) unreadable for 2 of 4 verifier rows (50 %) — 2: missing. Figures resting on P(True) use the 2 readable verifier rows only.');
    expect(readoutWarning(readoutHealth('P(True)', 'verifier rows', [1], () => null))).toBeUndefined();
  });
});
