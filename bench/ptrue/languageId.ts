/**
 * Which offline language identifier the P(True) battery keeps: accuracy on the short
 * answers of `shortAnswers.ts` (30 per language, en zh fr ja ko hi), each candidate asked for one of
 * the six languages where it can be restricted, with and without the battery's script rule
 * (lib/batteries/ptrue/read/languageId.ts: a reply in Hangul, kana or Devanagari is Korean,
 * Japanese or Hindi by its script; the identifier decides only between the languages that share a
 * script, en/fr for Latin and zh/ja for Han without kana).
 *
 *   node --import tsx bench/ptrue/languageId.ts                 # the kept package (eld) only
 *   LID_MODULES=/tmp/lidbench/node_modules node --import tsx bench/ptrue/languageId.ts
 *
 * LID_MODULES names a node_modules folder where the other candidates were installed for the
 * measurement (`npm install franc-min franc-all tinyld eld cld3-asm lande` in a scratch folder):
 * only the kept one is a dependency of sondage. Numbers, not pass/fail.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SHORT_ANSWERS } from './shortAnswers.js';
import { scriptLanguage } from '../../lib/batteries/ptrue/read/languageId.js';

type Six = keyof typeof SHORT_ANSWERS;
const SIX = Object.keys(SHORT_ANSWERS) as Six[];
/** ISO 639-3 codes of the six, as franc and lande name them. */
const ISO3: Readonly<Record<Six, string>> = { en: 'eng', zh: 'cmn', fr: 'fra', ja: 'jpn', ko: 'kor', hi: 'hin' };
const FROM3 = new Map(Object.entries(ISO3).map(([k, v]) => [v, k]));

/** A candidate: the best of `among` for a text ('und' when it gives none). */
type Identify = (text: string, among: readonly Six[]) => string;

/** A candidate's module: its file under LID_MODULES, else the package specifier (installed ones only). */
async function load(entry: string, specifier: string): Promise<Record<string, unknown>> {
  const dir = process.env.LID_MODULES;
  try {
    return (await import(dir ? pathToFileURL(join(dir, entry)).href : specifier)) as Record<string, unknown>;
  } catch {
    return {};
  }
}

async function candidates(): Promise<Record<string, Identify>> {
  const out: Record<string, Identify> = {};
  const francMin = await load('franc-min/index.js', 'franc-min');
  if (typeof francMin.franc === 'function') {
    const franc = francMin.franc as (t: string, o: object) => string;
    out['franc-min 6.2.0'] = (t, among) => FROM3.get(franc(t, { only: among.map((l) => ISO3[l]), minLength: 1 })) ?? 'und';
  }
  const francAll = await load('franc-all/index.js', 'franc-all');
  if (typeof francAll.franc === 'function') {
    const franc = francAll.franc as (t: string, o: object) => string;
    out['franc-all 7.2.0'] = (t, among) => FROM3.get(franc(t, { only: among.map((l) => ISO3[l]), minLength: 1 })) ?? 'und';
  }
  const tinyld = await load('tinyld/dist/tinyld.normal.node.mjs', 'tinyld');
  if (typeof tinyld.detect === 'function') {
    const detect = tinyld.detect as (t: string, o: object) => string;
    out['tinyld 1.3.4'] = (t, among) => detect(t, { only: [...among] }) || 'und';
  }
  const eldMod = await load('eld/src/entries/static.large.js', 'eld/large');
  const eld = (eldMod.eld ?? eldMod.default) as
    | { detect(t: string): { language: string }; setLanguageSubset(l: string[] | boolean): unknown }
    | undefined;
  if (eld && typeof eld.detect === 'function') {
    out['eld 2.1.0 (large)'] = (t, among) => {
      eld.setLanguageSubset([...among]);
      return eld.detect(t).language || 'und';
    };
  }
  const landeMod = await load('lande/standalone/t50.js', 'lande');
  const lande = landeMod.default as ((t: string) => [string, number][]) | undefined;
  if (typeof lande === 'function') {
    out['lande 1.0.10'] = (t, among) => {
      const allowed = new Set(among.map((l) => ISO3[l]));
      const best = lande(t).find(([code]) => allowed.has(code));
      return best ? (FROM3.get(best[0]) ?? 'und') : 'und';
    };
  }
  const cld = await load('cld3-asm/dist/cjs/index.js', 'cld3-asm');
  const loadModule = (cld.loadModule ?? (cld.default as Record<string, unknown> | undefined)?.loadModule) as
    | (() => Promise<{ create(min?: number, max?: number): { findMostFrequentLanguages(t: string, n: number): { language: string; probability: number }[]; findLanguage(t: string): { language: string } } }>)
    | undefined;
  if (typeof loadModule === 'function') {
    const id = (await loadModule()).create(0, 1000);
    out['cld3-asm 4.0.0'] = (t, among) => {
      // cld3 cannot be restricted: its own answer, kept when it is one of `among`.
      const lang = id.findLanguage(t).language;
      return (among as readonly string[]).includes(lang) ? lang : 'und';
    };
  }
  return out;
}

/** The battery's rule: the script decides where it can; the identifier only between same-script languages. */
function withScript(identify: Identify): Identify {
  return (t, among) => {
    const s = scriptLanguage(t, among);
    if (s.decided) return s.language;
    return s.among.length === 1 ? (s.among[0] as string) : identify(t, s.among as Six[]);
  };
}

function accuracy(identify: Identify): { overall: number; byLanguage: Record<string, number> } {
  let hits = 0;
  let n = 0;
  const byLanguage: Record<string, number> = {};
  for (const lang of SIX) {
    const texts = SHORT_ANSWERS[lang];
    const ok = texts.filter((t) => identify(t, SIX) === lang).length;
    byLanguage[lang] = ok / texts.length;
    hits += ok;
    n += texts.length;
  }
  return { overall: hits / n, byLanguage };
}

const found = await candidates();
const rows: string[] = [`| identifier | rule | all | ${SIX.join(' | ')} |`, `|---|---|---|${SIX.map(() => '---').join('|')}|`];
for (const [name, identify] of Object.entries(found)) {
  for (const [rule, f] of [['alone (six only)', identify], ['script rule + it', withScript(identify)]] as const) {
    const a = accuracy(f);
    rows.push(`| ${name} | ${rule} | ${a.overall.toFixed(3)} | ${SIX.map((l) => (a.byLanguage[l] as number).toFixed(2)).join(' | ')} |`);
  }
}
console.log(rows.join('\n'));
