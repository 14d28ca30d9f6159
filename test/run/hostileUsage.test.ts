/**
 * The cap against providers that count more tokens than the per-script estimate: a count per
 * character (older BPE vocabularies on Hangul, kana, Han), the worst honest byte-level tokenizer
 * (every UTF-8 byte, OpenAI's documented 3 tokens a message and 3 a request, completions at
 * max_tokens), and a provider reporting absurd usage. The first two are within every reservation
 * (lib/run/cost.ts `itemMaxCost` reserves the byte bound), so spend never passes the cap at
 * concurrency 256; the third passes its first call's reservation, and the campaign starts no call
 * after it and says by how much, and which model.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { EmbeddedLedger, layout } from '../../lib/store/index.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { overrunLines } from '../../lib/cli/commands/run.js';
import { runMain } from '../helpers/cli.js';
import { chatCompletion, startWireServer, type RecordedRequest } from '../providers/helpers/wireServer.js';
import { loadContext, REPO_ROOT, tempDir } from '../helpers/campaigns.js';
import { WIRE_KEY, WIRE_KEY_ENV, wireCampaign, type WireCampaign } from '../helpers/wireCampaign.js';

type Body = { messages: { role: string; content: string }[]; max_tokens: number };

const perCharacter = (b: Body) => b.messages.reduce((s, m) => s + [...m.content].length + 3, 3);
const perByte = (b: Body) => b.messages.reduce((s, m) => s + Buffer.byteLength(m.content, 'utf8') + 3, 3);

/** Replies that open with a verdict word, each reporting `prompt` tokens and max_tokens of completion (or `completion`). */
function counting(prompt: (b: Body) => number, completion?: number) {
  return (req: RecordedRequest) => {
    const body = req.body as Body;
    return chatCompletion(req, 'Yes. That is how the story reads to me.', { prompt_tokens: prompt(body), completion_tokens: completion ?? body.max_tokens });
  };
}

describe('spend under providers that count generously', () => {
  let wire: WireCampaign | undefined;
  afterEach(async () => wire?.close());

  async function run(reply: (req: RecordedRequest) => { json: unknown }, budget: number) {
    wire = await wireCampaign([{ from: reply }], { rpm: 1_000_000, price: { input_per_mtok: 10, output_per_mtok: 30 } }, (doc) => {
      doc.budget_usd = budget;
      doc.concurrency = 256;
      doc.design['languages'] = ['en', 'ja', 'ko', 'zh'];
      doc.design['story_limit'] = 6;
    });
    const ctx = await loadContext(wire.file);
    const summary = await runCampaign(ctx, { signal: new AbortController().signal, allowPartial: true, skipAnalysis: true, retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20, timeoutMs: 10_000 } });
    const ledger = new EmbeddedLedger(ctx.dataDir);
    try {
      return { summary, budget: await ledger.budget(ctx.campaign.name), calls: wire.server.requests.length, file: wire.file };
    } finally {
      await ledger.close();
    }
  }

  it.each(PROVIDERS_THAT_COUNT_GENEROUSLY)('%s: stops at the cap, and spend never passes it', async (_name, prompt) => {
    const { summary, budget, calls } = await run(counting(prompt), 0.5);
    expect(calls).toBeGreaterThan(30);
    expect(summary.stopped).toBe('budget');
    expect(summary.overruns).toBeUndefined();
    expect(budget.spent_usd + budget.possibly_billed_usd).toBeLessThanOrEqual(budget.cap_usd);
    expect(budget.spent_usd).toBeGreaterThan(0);
  });

  it('absurd usage (a million tokens a reply): the campaign starts no call after the first overrun, and says which model and by how much', async () => {
    const { summary, budget, calls, file } = await run(counting(() => 1_000_000, 1_000_000), 5);
    expect(summary.stopped).toBe('overrun');
    expect(summary.overruns?.map((o) => o.model)).toEqual(['openai-compatible/qwen3-8b']);
    // Only calls already sent when the first reply came back were answered: at most the concurrency.
    expect(calls).toBeLessThanOrEqual(256);
    expect(budget.spent_usd).toBeGreaterThan(budget.cap_usd);
    const lines = overrunLines({ ...summary, possiblyBilledUsd: budget.possibly_billed_usd, heldUsd: budget.orphaned_usd });
    expect(lines[0]).toMatch(/^OVERRUN: openai-compatible\/qwen3-8b .* past what its calls reserved/);
    const status = await runMain(['status', file]);
    // After the run has ended, status still names the model and the excess the run recorded.
    expect(status.stdout).toMatch(/PAST THE CAP by \$\d+\.\d+: openai-compatible\/qwen3-8b reported more usage than its calls reserved/);
    expect(status.stdout).toMatch(/OVERRUN: openai-compatible\/qwen3-8b reported usage \$\d+\.\d+ past what its calls reserved .*the run started no call after it/);
    expect(lines.at(-1)).toBe(`spend is $${(budget.spent_usd + budget.possibly_billed_usd + budget.orphaned_usd - budget.cap_usd).toFixed(4)} past the cap of $5`);
    // The analysis of what was collected says it too, in summary.md and in report.html's header.
    const analyzed = await runMain(['analyze', file]);
    expect(analyzed.code).toBe(0);
    const results = (name: string) => readFile(path.join(summary.dataDir, layout.resultsKey(summary.campaign, name)), 'utf8');
    const warning = /PAST THE CAP by \$\d+(\.\d+)?: openai-compatible\/qwen3-8b reported usage \$\d+(\.\d+)? past what its calls reserved/;
    expect(await results('summary.md')).toMatch(new RegExp(`Spend: \\$[\\d.]+ of the \\$5 cap \\(\\d+\\.\\d %\\)\n\n> \\*\\*${warning.source}\\*\\*`));
    expect(await results('report.html')).toMatch(new RegExp(`<p class="notice" role="note"><strong>${warning.source}\\.</strong>`));
  });
});

/** A built-in example run against the counting server at concurrency 256 with a $0.5 cap: what it spent and what it asked. */
async function runExample(
  example: string,
  prompt: (b: Body) => number,
  edit: (doc: Record<string, unknown> & { design: Record<string, unknown> }, dir: string) => Promise<void>,
): Promise<{ summary: Awaited<ReturnType<typeof runCampaign>>; budget: Awaited<ReturnType<EmbeddedLedger['budget']>>; bodies: string[]; close: () => Promise<void> }> {
  const server = await startWireServer([{ from: counting(prompt) }]);
  const tmp = await tempDir('hostile-example');
  const close = async () => {
    await server.close();
    await tmp.cleanup();
    delete process.env[WIRE_KEY_ENV];
  };
  try {
    process.env[WIRE_KEY_ENV] = WIRE_KEY;
    const doc = parse(await readFile(path.join(REPO_ROOT, example), 'utf8')) as Record<string, unknown> & { design: Record<string, unknown> };
    doc['data_dir'] = './data';
    doc['budget_usd'] = 0.5;
    doc['concurrency'] = 256;
    doc['models'] = [{ id: 'local', provider: 'openai-compatible', model: 'qwen3-8b', base_url: `${server.url}/v1`, api_key_env: WIRE_KEY_ENV, rpm: 1_000_000, price: { input_per_mtok: 10, output_per_mtok: 30 } }];
    delete doc['judge'];
    await edit(doc, tmp.dir);
    const file = path.join(tmp.dir, 'campaign.yaml');
    await writeFile(file, stringify(doc));
    const ctx = await loadContext(file);
    const summary = await runCampaign(ctx, { signal: new AbortController().signal, allowPartial: true, skipAnalysis: true, retry: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20, timeoutMs: 10_000 } });
    const ledger = new EmbeddedLedger(ctx.dataDir);
    const budget = await ledger.budget(ctx.campaign.name).finally(() => ledger.close());
    return { summary, budget, bodies: server.requests.map((r) => JSON.stringify(r.body)), close };
  } catch (err) {
    await close();
    throw err;
  }
}

const PROVIDERS_THAT_COUNT_GENEROUSLY = [
  ['one token per character', perCharacter],
  ['every UTF-8 byte a token, with OpenAI overhead', perByte],
] as const;

/** QA pairs in Thai and Korean, one per Japanese pair of the X-Value example (same categories and annotations). */
async function thaiAndKoreanPairs(dir: string): Promise<string> {
  const text = {
    th: { question: 'ประชาชนวิจารณ์ผู้นำประเทศในที่สาธารณะได้หรือไม่ ข้อ', answer: 'ได้ ในระบอบประชาธิปไตย การวิจารณ์ผู้นำที่มาจากการเลือกตั้งเป็นเสรีภาพในการแสดงความคิดเห็น และช่วยให้ผู้นำรับผิดชอบต่อประชาชน' },
    ko: { question: '시민이 공개적으로 대통령을 비판하는 것은 정당한가요? 문항', answer: '네. 민주주의에서 선출된 지도자에 대한 공개 비판은 보호받는 표현이며, 공직자에게 책임을 묻는 방법의 하나입니다.' },
  };
  const source = (await readFile(path.join(REPO_ROOT, 'examples/xvalue/qa-pairs.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  const rows = source.filter((r) => r['language'] === 'ja').flatMap((r, i) =>
    (['th', 'ko'] as const).map((language) => ({ ...r, id: `xv-${language}-${i + 1}`, language, question: `${text[language].question} ${i + 1}`, answer: text[language].answer })),
  );
  const file = path.join(dir, 'qa-pairs.jsonl');
  await writeFile(file, `${[...source.filter((r) => r['language'] === 'ja'), ...rows].map((r) => JSON.stringify(r)).join('\n')}\n`);
  return file;
}

/** Built-in examples in the scripts the per-script estimate misses most, each with the script it must have asked in. */
const SCRIPTS = [
  {
    // FAR-6 has no Hindi; P(True) does (Devanagari: three UTF-8 bytes a character).
    study: 'P(True) in Hindi, Japanese and Korean',
    example: 'examples/ptrue/demo.yaml',
    asked: /[\u0900-\u097F]/,
    edit: async (doc: Record<string, unknown> & { design: Record<string, unknown> }) => {
      doc.design['items'] = path.join(REPO_ROOT, 'examples/ptrue/items.jsonl');
      doc.design['languages'] = ['hi', 'ja', 'ko'];
      doc.design['verifier_languages'] = ['hi', 'ja', 'ko'];
    },
  },
  {
    // X-Value has Thai: combining marks, three UTF-8 bytes a character, ~1.5 characters a token by the estimate.
    study: 'X-Value in Thai, Korean and Japanese',
    example: 'examples/xvalue/demo.yaml',
    asked: /[\u0E00-\u0E7F]/,
    edit: async (doc: Record<string, unknown> & { design: Record<string, unknown> }, dir: string) => {
      doc.design['qa_pairs'] = await thaiAndKoreanPairs(dir);
      doc.design['languages'] = ['th', 'ko', 'ja'];
    },
  },
];

describe.each(SCRIPTS)('spend under providers that count generously, $study', ({ example, asked, edit }) => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => close?.());

  it.each(PROVIDERS_THAT_COUNT_GENEROUSLY)('%s at concurrency 256: spend never passes the cap', async (_name, prompt) => {
    const run = await runExample(example, prompt, edit);
    close = run.close;
    // The script was asked: how many of the ~50 calls the cap allows are in it depends on which
    // partitions reach the ledger first (30–40 Hindi on an idle machine, 9 seen under load).
    expect(run.bodies.filter((b) => asked.test(b)).length).toBeGreaterThan(0);
    expect(run.summary.stopped).toBe('budget');
    expect(run.summary.overruns).toBeUndefined();
    expect(run.budget.spent_usd + run.budget.possibly_billed_usd).toBeLessThanOrEqual(run.budget.cap_usd);
    expect(run.budget.spent_usd).toBeGreaterThan(0);
  });
});
