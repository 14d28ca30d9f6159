export { renderReportHtml } from './renderReport.js';
export {
  divergingColour,
  domainOf,
  escapeHtml,
  htmlTable,
  matrixChart,
  niceTicks,
  rowChart,
  scatterChart,
  slug,
  stackedChart,
  tableDetails,
} from '../../../../api/battery.js';
export type {
  ChartRow,
  ChartSeries,
  HtmlReportOptions,
  MarkShape,
  MatrixCell,
  MatrixSpec,
  RowBar,
  RowChartSpec,
  RowMark,
  RowRange,
  ScatterSpec,
  StackedSpec,
  TableSpec,
} from '../../../../api/battery.js';
export { HEADLINE_PAIRS, headlineIndex, matchesReadout } from './headline.js';
