/** Types of the HTML report (report.html) and of its inline SVG charts. */

/** How a series is drawn: filled dot, hollow ring, tick, hollow diamond or filled square. */
export type MarkShape = 'dot' | 'ring' | 'tick' | 'diamond' | 'square';

export interface ChartSeries {
  readonly label: string;
  readonly shape: MarkShape;
  /** Palette index; the series' position by default. */
  readonly colour?: number;
}

export interface RowMark {
  readonly x: number;
  readonly series: number;
  readonly shape: MarkShape;
  /** Tooltip text. */
  readonly title: string;
}

export interface RowRange {
  readonly lo: number;
  readonly hi: number;
  readonly series: number;
  readonly title?: string;
}

export interface RowBar {
  readonly x: number;
  /** Where the bar starts (0 by default). */
  readonly from?: number;
  readonly series: number;
  readonly title: string;
}

/** One row of a row chart. */
export interface ChartRow {
  readonly label: string;
  /** A heading drawn above the first row of each run of equal groups. */
  readonly group?: string;
  readonly marks?: readonly RowMark[];
  readonly ranges?: readonly RowRange[];
  readonly bars?: readonly RowBar[];
  /** Drawn in red (e.g. a readout pair below the convergence line). */
  readonly emphasis?: boolean;
}

export interface RowChartSpec {
  readonly id: string;
  readonly title: string;
  readonly desc: string;
  readonly rows: readonly ChartRow[];
  readonly domain: readonly [number, number];
  readonly axisLabel: string;
  readonly series: readonly ChartSeries[];
  readonly references?: readonly { readonly x: number; readonly label: string }[];
  readonly format?: (x: number) => string;
  readonly plotWidth?: number;
}

export interface MatrixCell {
  readonly value: number | null;
  readonly title: string;
  readonly diagonal?: boolean;
}

export interface MatrixSpec {
  readonly id: string;
  readonly title: string;
  readonly desc: string;
  readonly rowLabels: readonly string[];
  readonly colLabels: readonly string[];
  /** Group of each row / column; a separator is drawn where it changes. */
  readonly rowGroups?: readonly string[];
  readonly colGroups?: readonly string[];
  readonly cell: (row: number, col: number) => MatrixCell;
  /** The domain: `r` from −1 to +1 around 0; `share` from 0 to 1 around 0.5. */
  readonly scale: 'r' | 'share';
  /**
   * Which end is good, said by colour the same way in every report: blue the better end, red the
   * worse (`high`: accuracy, AUROC, agreement; `low`: ECE, Brier); `neither` (a correlation
   * between cells, a share of one reading) draws green to purple, so red never means "bad" where
   * nothing is.
   */
  readonly better: 'high' | 'low' | 'neither';
  readonly legendLabel: string;
}

export interface ScatterSpec {
  readonly id: string;
  readonly title: string;
  readonly desc: string;
  readonly points: readonly { readonly x: number; readonly y: number; readonly title: string; readonly highlight?: boolean }[];
  readonly domain: readonly [number, number];
  readonly xLabel: string;
  readonly yLabel: string;
  /** The legend's words for a point, a highlighted point and the shaded opposite-sign quadrants. */
  readonly legend?: { readonly point: string; readonly highlight: string; readonly quadrants: string };
}

export interface StackedSpec {
  readonly id: string;
  readonly title: string;
  readonly desc: string;
  /** Names of the parts, in drawing order. */
  readonly parts: readonly string[];
  readonly rows: readonly { readonly label: string; readonly values: readonly (number | null)[] }[];
  readonly axisLabel: string;
}

/** A table behind a chart: header cells, rows of display strings, and which columns are numeric. */
export interface TableSpec {
  readonly caption: string;
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
  /** Columns right-aligned and sorted as numbers (default: every column but the first whose cells all parse). */
  readonly numeric?: readonly number[];
  /** The result file(s) that hold the table's numbers, linked under it (beside report.html). */
  readonly csv?: string | readonly string[];
}

export interface HtmlReportOptions {
  /** Result files to link to (they sit beside report.html); default RESULT_FILES without report.html. */
  readonly files?: readonly string[];
  /** Most readout pairs drawn in the convergence chart when no headline pair exists (all are in the table). */
  readonly maxConvergenceRows?: number;
}
