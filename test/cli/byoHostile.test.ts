import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, useTempDir } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';

// The same five hostile files in each study give the same kind of answer (docs/byo.md "One rule
// for bad input"): a bad row refuses the input, named by file, place, field and what was expected,
// in a summary and in import_issues.csv; a missing cell is a notice; a .env given by mistake is
// refused without one character of it echoed.

const tmp = useTempDir('cli-byo-hostile');

const jsonl = (rows: readonly object[]): string => `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`;

/** One study: its good rows (a complete little design), and how to break them. */
interface Study {
  readonly battery: string;
  readonly extra: readonly string[];
  readonly good: () => Promise<Record<string, unknown>[]>;
  readonly resultFile: string;
  /** A row whose language the design does not know (`jp`), and its field. */
  readonly unknownLanguage: (row: Record<string, unknown>) => Record<string, unknown>;
  readonly languageField: string;
  /** The rows with one cell of the design they claim taken away. */
  readonly missingCell: (rows: Record<string, unknown>[]) => Record<string, unknown>[];
  /** A row with a value of the wrong type, and its field. */
  readonly wrongType: (row: Record<string, unknown>) => Record<string, unknown>;
  readonly wrongField: string;
}

const FAR6_SAMPLE = path.join(REPO_ROOT, 'test/fixtures/byo/sample.jsonl');
const XVALUE = path.join(REPO_ROOT, 'examples/xvalue');

const STUDIES: readonly Study[] = [
  {
    battery: 'far6',
    extra: [],
    // The sample's English rows, and the same items in German: every item in both languages.
    good: async () => {
      const en = (await readFile(FAR6_SAMPLE, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r['language'] === 'en');
      return [...en, ...en.map((r) => ({ ...r, language: 'de' }))];
    },
    resultFile: 'story_scores.csv',
    unknownLanguage: (r) => ({ ...r, language: 'jp', story: 's9' }),
    languageField: 'language',
    missingCell: (rows) => rows.filter((r) => !(r['language'] === 'de' && r['form'] === 'negint')),
    wrongType: (r) => ({ ...r, option_order: 'first', story: 's8' }),
    wrongField: 'option_order',
  },
  {
    battery: 'xvalue',
    extra: ['--input', `qa_pairs=${path.join(XVALUE, 'qa-pairs.jsonl')}`],
    good: async () =>
      ['xv-en-01', 'xv-en-02', 'xv-en-08'].flatMap((qa_id, i) => [
        { model: 'm1', qa_id, strategy: 'defonly', verdict: i === 2 ? 'Fail' : 'Pass' },
        { model: 'm1', qa_id, strategy: 'rubric', verdict: i === 0 ? 'Pass' : 'Fail' },
      ]),
    resultFile: 'overall.csv',
    unknownLanguage: (r) => ({ ...r, language: 'jp' }),
    languageField: 'language',
    missingCell: (rows) => rows.filter((r) => !(r['qa_id'] === 'xv-en-02' && r['strategy'] === 'rubric')),
    wrongType: (r) => ({ ...r, model: 42 }),
    wrongField: 'model',
  },
  {
    battery: 'ptrue',
    extra: [],
    good: async () => {
      const rows: Record<string, unknown>[] = [];
      for (const item of ['i1', 'i2', 'i3', 'i4']) {
        for (const q of ['en', 'fr']) for (const v of ['en', 'fr']) rows.push({ item, model: 'm1', q, r: q, v, correct: item === 'i1' || item === 'i3' ? 1 : 0, p_true: item === 'i1' ? 0.9 : 0.4, benchmark: 'triv' });
      }
      return rows;
    },
    resultFile: 'cells.csv',
    unknownLanguage: (r) => ({ ...r, v: 'jp', item: 'i9' }),
    languageField: 'v',
    // Item i2 at q = r = fr: both of its verifier copies, a whole cell of the design.
    missingCell: (rows) => rows.filter((r) => !(r['item'] === 'i2' && r['q'] === 'fr')),
    wrongType: (r) => ({ ...r, correct: 'maybe' }),
    wrongField: 'correct',
  },
];

async function analyze(study: Study, file: string, ...flags: string[]) {
  const out = path.join(tmp.dir, 'out');
  const result = await runMain(['analyze', '--battery', study.battery, '--replies', file, '--out', out, ...study.extra, ...flags]);
  const issuesCsv = await readFile(path.join(out, 'import_issues.csv'), 'utf8').catch(() => '');
  const manifest = JSON.parse(await readFile(path.join(out, 'byo_manifest.json'), 'utf8')) as Record<string, unknown>;
  return { ...result, out, files: await readdir(out), issuesCsv, manifest };
}

describe.each(STUDIES)('bring your own $battery: the five hostile files', (study) => {
  it('a good file is analysed, exit 0, its settings in byo_manifest.json', async () => {
    const file = path.join(tmp.dir, 'good.jsonl');
    await writeFile(file, jsonl(await study.good()));
    const r = await analyze(study, file);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.files).toContain(study.resultFile);
    expect(r.files).not.toContain('import_issues.csv');
    expect(r.manifest).toMatchObject({ battery: study.battery, outcome: 'analysed', csv_precision: 'numbers in the result CSVs are rounded to 6 decimals' });
  });

  it('an unknown language is refused with file, line, field, the allowed codes and the close match', async () => {
    const rows = await study.good();
    rows.push(study.unknownLanguage(rows[0]!));
    const file = path.join(tmp.dir, 'lang.jsonl');
    await writeFile(file, jsonl(rows));
    await writeFile(path.join(tmp.dir, 'good.jsonl'), jsonl(rows.slice(0, -1)));
    expect((await analyze(study, path.join(tmp.dir, 'good.jsonl'))).files).toContain(study.resultFile);
    const r = await analyze(study, file);
    expect(r.code).toBe(1);
    // The earlier import's results are gone: none is left beside the refusal looking like its own.
    expect(r.files.sort()).toEqual(['byo_manifest.json', 'import_issues.csv', ...(study.battery === 'far6' ? ['tables'] : [])]);
    expect(r.stderr).toContain(`unknown language in "${study.languageField}": 1`);
    expect(r.stderr).toMatch(new RegExp(`${file.replaceAll('.', '\\.')}: (line|row) ${rows.length}.*unknown language "jp"; expected one of [a-z, ]*ja[a-z, ]* \\(did you mean "ja"\\?\\)`));
    expect(r.stderr).toContain('refused: 1 problem in the rows; nothing analysed');
    expect(r.files).not.toContain(study.resultFile);
    expect(r.issuesCsv).toMatch(new RegExp(`^file,location,field,kind,message\\r\\n${file.replaceAll('.', '\\.')},(line|row) ${rows.length},${study.languageField},unknown language,`));
    expect(r.manifest).toMatchObject({ outcome: 'refused', issues: { 'unknown language': 1 } });
  });

  it('a missing cell is a notice: listed, the rest analysed, exit 0', async () => {
    const file = path.join(tmp.dir, 'cell.jsonl');
    await writeFile(file, jsonl(study.missingCell(await study.good())));
    const r = await analyze(study, file);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/notice: \d+ cells? of the design the rows claim ha(s|ve) no row; analysed as they stand/);
    expect(r.files).toContain(study.resultFile);
    expect(r.issuesCsv).toContain(',missing cell,');
    expect(r.manifest).toMatchObject({ outcome: 'analysed', issues: { 'missing cell': expect.any(Number) } });
  });

  it('a broken line is refused, named by its line; --drop-bad-rows analyses the rest', async () => {
    const rows = (await study.good()).map((row) => JSON.stringify(row));
    rows.splice(1, 0, '{"model": "m1", ');
    const file = path.join(tmp.dir, 'broken.jsonl');
    await writeFile(file, `${rows.join('\n')}\n`);
    const r = await analyze(study, file);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file}: line 2: not valid JSON`);
    expect(r.issuesCsv).toContain(`${file},line 2,,unreadable,`);
    expect(r.files).not.toContain(study.resultFile);
    const dropped = await analyze(study, file, '--drop-bad-rows');
    expect(dropped.code).toBe(0);
    expect(dropped.stderr).toContain('1 problem: those rows are left out (--drop-bad-rows)');
    expect(dropped.files).toContain(study.resultFile);
    expect(dropped.manifest).toMatchObject({ outcome: 'analysed', bad_rows: 'dropped (--drop-bad-rows)' });
  });

  it('a value of the wrong type is refused, naming the field and what was expected', async () => {
    const rows = await study.good();
    rows.push(study.wrongType(rows[0]!));
    const file = path.join(tmp.dir, 'type.jsonl');
    await writeFile(file, jsonl(rows));
    const r = await analyze(study, file);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`${file.replaceAll('.', '\\.')}: (line|row) ${rows.length}.*${study.wrongField}.*expected`));
    expect(r.issuesCsv).toMatch(new RegExp(`,(line|row) ${rows.length},${study.wrongField},`));
    expect(r.files).not.toContain(study.resultFile);
  });

  it('a .env given by mistake is refused, and no character of a key is echoed', async () => {
    const file = path.join(tmp.dir, 'env.csv');
    await writeFile(file, 'OPENAI_API_KEY=sk-test-SECRET123\nANTHROPIC_API_KEY=sk-ant-SECRET456\n');
    const r = await analyze(study, file);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('refused:');
    for (const text of [r.stdout, r.stderr, r.issuesCsv, JSON.stringify(r.manifest)]) {
      expect(text).not.toMatch(/SECRET|sk-test|sk-ant/);
    }
    expect(r.files).not.toContain(study.resultFile);
  });
});

describe('bring your own: what differs by study is said where it matters', () => {
  const ptrue = STUDIES[2]!;

  it('P(True): a reply missing one verifier copy is refused; --drop-bad-rows leaves its other copy out too', async () => {
    const rows = (await ptrue.good()).filter((r) => !(r['item'] === 'i3' && r['q'] === 'en' && r['v'] === 'fr'));
    const file = path.join(tmp.dir, 'copy.jsonl');
    await writeFile(file, jsonl(rows));
    const r = await analyze(ptrue, file);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('incomplete reply in "v": 1');
    expect(r.stderr).toContain('the reply of model m1, benchmark triv, item i3, q en, r en has no verifier copy in fr');
    const dropped = await analyze(ptrue, file, '--drop-bad-rows');
    expect(dropped.code).toBe(0);
    expect(dropped.stdout).toContain('rows: 14 of 15 from 1 file');
  });

  it('P(True): a language of the design is refused in v too (de is no verifier language of the study)', async () => {
    const rows = await ptrue.good();
    rows.push({ ...rows[0]!, item: 'i7', v: 'de' });
    const file = path.join(tmp.dir, 'de.jsonl');
    await writeFile(file, jsonl(rows));
    const r = await analyze(ptrue, file);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file}: line 17: v: unknown language "de"; expected one of en, zh, fr, ja, ko, hi`);
  });

  it('a file with thousands of bad rows prints a summary of a screen; import_issues.csv holds them all', async () => {
    const rows = await ptrue.good();
    for (let i = 0; i < 3000; i++) rows.push({ ...rows[0]!, item: `x${i}`, p_true: 2, q: i % 2 === 0 ? 'xx' : 'en' });
    const file = path.join(tmp.dir, 'many.jsonl');
    await writeFile(file, jsonl(rows));
    const r = await analyze(ptrue, file);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n').length).toBeLessThan(30);
    expect(r.stderr).toContain('wrong value in "p_true": 3,000');
    expect(r.stderr).toContain('… and 2,997 more');
    expect(r.issuesCsv.trimEnd().split('\r\n').length).toBe(1 + 3000 + 1500);
  });

  it('result CSVs keep 6 decimals, said in byo_manifest.json; --full-precision writes every digit', async () => {
    const file = path.join(tmp.dir, 'good.jsonl');
    await writeFile(file, jsonl(await ptrue.good()));
    const decimals = (csv: string) => Math.max(...[...csv.matchAll(/\.(\d+)/g)].map((m) => m[1]!.length));
    const rounded = await analyze(ptrue, file, '--draws', '0');
    expect(decimals(await readFile(path.join(rounded.out, 'cells.csv'), 'utf8'))).toBeLessThanOrEqual(6);
    const full = await analyze(ptrue, file, '--draws', '0', '--full-precision');
    expect(decimals(await readFile(path.join(full.out, 'cells.csv'), 'utf8'))).toBeGreaterThan(6);
    expect(full.manifest).toMatchObject({ csv_precision: 'numbers in the result CSVs at full precision (--full-precision)' });
  });

  it('--draws and --seed set the bootstrap, and byo_manifest.json says which were used', async () => {
    const file = path.join(tmp.dir, 'good.jsonl');
    await writeFile(file, jsonl(await ptrue.good()));
    const r = await analyze(ptrue, file, '--draws', '20', '--seed', '7');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('settings: draws 20, seed 7 (byo_manifest.json)');
    expect(r.manifest).toMatchObject({ settings: { draws: 20, seed: 7 } });
    const xvalue = await runMain(['analyze', '--battery', 'xvalue', '--replies', file, '--out', path.join(tmp.dir, 'x'), ...STUDIES[1]!.extra, '--draws', '20']);
    expect(xvalue.code).toBe(1);
    expect(xvalue.stderr).toContain('--draws: its analysis has no bootstrap, so no draws or seed to set');
    const far6 = await runMain(['analyze', '--battery', 'far6', '--replies', file, '--out', path.join(tmp.dir, 'f'), '--draws', '0']);
    expect(far6.code).toBe(1);
    expect(far6.stderr).toContain('--draws expected a whole number of draws, 1 or more, got 0');
    const bad = await runMain(['analyze', '--battery', 'ptrue', '--replies', file, '--out', path.join(tmp.dir, 'p'), '--seed', 'abc']);
    expect(bad.stderr).toContain('--seed "abc": expected an integer seed');
    const onCampaign = await runMain(['analyze', 'campaign.yaml', '--draws', '20', '--drop-bad-rows']);
    expect(onCampaign.code).toBe(1);
    expect(onCampaign.stderr).toContain('sondage analyze: --drop-bad-rows, --draws go with --replies and --out');
  });
});
