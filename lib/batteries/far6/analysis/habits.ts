/**
 * Answer habits across cells (Same Judgment, Different Yes §6 "Answer habits and their change under negation"): how
 * much of a habit's cell-mean matrix (models × languages) belongs to the model × language
 * interaction, and in how many cells the keying bias b changes sign between the plain question and
 * the negative interrogative.
 */
import { parseReadout } from './estimators.js';
import type { CellHabit, HabitModelMean, HabitResults, HabitVariance, Readout, SignChange, SignChangeCount } from './types.js';

type HabitName = HabitVariance['habit'];

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * A complete models × languages matrix from partial cells: whichever keeps more cells of (a) the
 * models present in every language, or (b) the languages present for every model. A two-way
 * decomposition without replication needs every cell; filling holes would invent data.
 */
function completeMatrix(values: ReadonlyMap<string, ReadonlyMap<string, number>>): { models: string[]; languages: string[]; dropped: string[] } {
  const models = [...values.keys()].sort(cmp);
  const languages = [...new Set(models.flatMap((m) => [...(values.get(m) as ReadonlyMap<string, number>).keys()]))].sort(cmp);
  const has = (m: string, l: string): boolean => values.get(m)?.has(l) === true;
  const fullModels = models.filter((m) => languages.every((l) => has(m, l)));
  const fullLanguages = languages.filter((l) => models.every((m) => has(m, l)));
  const keepModels = fullModels.length * languages.length >= models.length * fullLanguages.length;
  const km = keepModels ? fullModels : models;
  const kl = keepModels ? languages : fullLanguages;
  const dropped: string[] = [];
  for (const m of models) for (const l of languages) if (has(m, l) && !(km.includes(m) && kl.includes(l))) dropped.push(`${m}/${l}`);
  return { models: km, languages: kl, dropped };
}

/**
 * Two-way decomposition without replication of a models × languages matrix x (rows × columns):
 * total SS around the grand mean = model SS + language SS + interaction SS, returned as shares.
 * Null shares below 2 × 2 or when every cell is equal.
 * @example twoWayShares([[0, 1], [1, 0]]).interaction === 1
 */
export function twoWayShares(x: readonly (readonly number[])[]): { grand: number | null; model: number | null; language: number | null; interaction: number | null } {
  const r = x.length;
  const c = r === 0 ? 0 : (x[0] as readonly number[]).length;
  for (const row of x) if (row.length !== c) throw new RangeError('twoWayShares: rows of unequal length');
  if (r === 0 || c === 0) return { grand: null, model: null, language: null, interaction: null };
  const rowMean = x.map((row) => row.reduce((a, b) => a + b, 0) / c);
  const colMean = Array.from({ length: c }, (_, j) => x.reduce((a, row) => a + (row[j] as number), 0) / r);
  const grand = rowMean.reduce((a, b) => a + b, 0) / r;
  if (r < 2 || c < 2) return { grand, model: null, language: null, interaction: null };
  let total = 0;
  let inter = 0;
  for (let i = 0; i < r; i++) {
    for (let j = 0; j < c; j++) {
      const v = (x[i] as readonly number[])[j] as number;
      total += (v - grand) ** 2;
      inter += (v - (rowMean[i] as number) - (colMean[j] as number) + grand) ** 2;
    }
  }
  const ssModel = c * rowMean.reduce((a, m) => a + (m - grand) ** 2, 0);
  const ssLanguage = r * colMean.reduce((a, m) => a + (m - grand) ** 2, 0);
  // Relative threshold: a matrix equal up to rounding has no variance to split.
  if (total <= r * c * (Number.EPSILON * Math.max(1, Math.abs(grand))) ** 2) return { grand, model: null, language: null, interaction: null };
  return { grand, model: ssModel / total, language: ssLanguage / total, interaction: inter / total };
}

/**
 * Same Judgment, Different Yes §6: for every readout, the keying bias b (and on label readouts the second-listed
 * preference) as a models × languages matrix split into model, language and interaction shares.
 */
export function habitVariance(cellHabits: readonly CellHabit[]): HabitVariance[] {
  const byReadout = new Map<Readout, Map<HabitName, Map<string, Map<string, number>>>>();
  const put = (readout: Readout, habit: HabitName, model: string, language: string, v: number): void => {
    const h = byReadout.get(readout) ?? new Map<HabitName, Map<string, Map<string, number>>>();
    byReadout.set(readout, h);
    const m = h.get(habit) ?? new Map<string, Map<string, number>>();
    h.set(habit, m);
    const l = m.get(model) ?? new Map<string, number>();
    m.set(model, l);
    l.set(language, v);
  };
  for (const h of cellHabits) {
    put(h.readout, 'keying_bias', h.model, h.language, h.keying_bias);
    if (h.second_listed_pref !== null) put(h.readout, 'second_listed_pref', h.model, h.language, h.second_listed_pref);
  }
  const out: HabitVariance[] = [];
  for (const readout of [...byReadout.keys()].sort(cmp)) {
    const habits = byReadout.get(readout) as Map<HabitName, Map<string, Map<string, number>>>;
    for (const habit of ['keying_bias', 'second_listed_pref'] as const) {
      const values = habits.get(habit);
      if (!values) continue;
      const { models, languages, dropped } = completeMatrix(values);
      const x = models.map((m) => languages.map((l) => values.get(m)?.get(l) as number));
      const shares = twoWayShares(x);
      out.push({
        readout,
        habit,
        n_models: models.length,
        n_languages: languages.length,
        dropped: dropped.join(';'),
        grand_mean: shares.grand,
        model_share: shares.model,
        language_share: shares.language,
        interaction_share: shares.interaction,
      });
    }
  }
  return out;
}

/**
 * Same Judgment, Different Yes §6: cells where b changes sign from the plain question to the negative interrogative,
 * for every reader with both yes/no readouts (the token rule is the paper's count; a judge's
 * sentences are the control). Exactly zero has no sign: such cells are counted apart.
 */
export function signChanges(cellHabits: readonly CellHabit[]): { rows: SignChange[]; counts: SignChangeCount[] } {
  const plain = new Map<string, CellHabit>();
  const negint = new Map<string, CellHabit>();
  for (const h of cellHabits) {
    const { form, constraint, reader } = parseReadout(h.readout);
    if (constraint !== 'yesno') continue;
    const key = `${reader}\u0000${h.model}\u0000${h.language}`;
    if (form === 'plain') plain.set(key, h);
    else if (form === 'negint') negint.set(key, h);
  }
  const rows: SignChange[] = [];
  for (const [key, a] of plain) {
    const b = negint.get(key);
    if (!b) continue;
    const changed = a.keying_bias === 0 || b.keying_bias === 0 ? null : Math.sign(a.keying_bias) !== Math.sign(b.keying_bias);
    rows.push({ model: a.model, language: a.language, readout_a: a.readout, readout_b: b.readout, b_a: a.keying_bias, b_b: b.keying_bias, changed });
  }
  rows.sort((x, y) => cmp(x.readout_a, y.readout_a) || cmp(x.model, y.model) || cmp(x.language, y.language));
  const counts = new Map<string, SignChangeCount>();
  for (const r of rows) {
    const k = `${r.readout_a}\u0000${r.readout_b}`;
    const c = counts.get(k) ?? { readout_a: r.readout_a, readout_b: r.readout_b, n_cells: 0, n_changed: 0, n_zero: 0 };
    counts.set(k, {
      ...c,
      n_cells: c.n_cells + 1,
      n_changed: c.n_changed + (r.changed === true ? 1 : 0),
      n_zero: c.n_zero + (r.changed === null ? 1 : 0),
    });
  }
  return { rows, counts: [...counts.values()] };
}

/**
 * Same Judgment, Different Yes Figure 4: each habit's mean over a model's languages per readout, with the lowest and
 * highest language (the ticks), for plain against negative-interrogative comparisons.
 */
export function habitModelMeans(cellHabits: readonly CellHabit[]): HabitModelMean[] {
  const groups = new Map<string, { readout: Readout; habit: HabitModelMean['habit']; model: string; values: number[] }>();
  const add = (h: CellHabit, habit: HabitModelMean['habit'], v: number | null): void => {
    if (v === null) return;
    const k = `${h.readout}\u0000${habit}\u0000${h.model}`;
    const g = groups.get(k) ?? { readout: h.readout, habit, model: h.model, values: [] };
    g.values.push(v);
    groups.set(k, g);
  };
  for (const h of cellHabits) {
    add(h, 'keying_bias', h.keying_bias);
    add(h, 'second_listed_pref', h.second_listed_pref);
    add(h, 'named_term_pull', h.named_term_pull);
  }
  return [...groups.values()]
    .map((g) => ({
      readout: g.readout,
      habit: g.habit,
      model: g.model,
      n_languages: g.values.length,
      mean: g.values.reduce((a, b) => a + b, 0) / g.values.length,
      min: Math.min(...g.values),
      max: Math.max(...g.values),
    }))
    .sort((x, y) => cmp(x.readout, y.readout) || cmp(x.habit, y.habit) || cmp(x.model, y.model));
}

/** Habit variance, model means and sign changes together. */
export function habitAnalysis(cellHabits: readonly CellHabit[]): HabitResults {
  const { rows, counts } = signChanges(cellHabits);
  return { variance: habitVariance(cellHabits), modelMeans: habitModelMeans(cellHabits), signChanges: rows, signChangeCounts: counts };
}
