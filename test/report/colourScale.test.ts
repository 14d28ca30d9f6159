/**
 * Colour scales say which end is good, the same way in every report: blue the better end, red the
 * worse, green to purple where neither end is better; the legend names the better end.
 */
import { describe, expect, it } from 'vitest';
import { matrixChart, scaleColour } from '../../lib/report/html/svg.js';
import type { MatrixSpec } from '../../lib/report/html/types.js';

/** Whether an rgb() colour leans blue (b > r) or red (r > b). */
function lean(colour: string): 'blue' | 'red' | 'green' | 'purple' | 'white' {
  const [r, g, b] = (/rgb\((\d+),(\d+),(\d+)\)/.exec(colour) ?? []).slice(1).map(Number) as [number, number, number];
  if (r === g && g === b) return 'white';
  if (g > r && g > b) return 'green';
  if (r > g && b > g && Math.abs(r - b) < 40) return 'purple';
  return b > r ? 'blue' : 'red';
}

const spec = (better: MatrixSpec['better']): MatrixSpec => ({
  id: 'm',
  title: 't',
  desc: 'd',
  rowLabels: ['a'],
  colLabels: ['b'],
  cell: () => ({ value: 0.05, title: 'x' }),
  scale: 'share',
  better,
  legendLabel: 'ECE',
});

describe('colour scales', () => {
  it('draws a low ECE (lower is better) blue and a high one red; a high accuracy blue and a low one red', () => {
    expect(lean(scaleColour(0.05, 'share', 'low'))).toBe('blue');
    expect(lean(scaleColour(0.9, 'share', 'low'))).toBe('red');
    expect(lean(scaleColour(0.95, 'share', 'high'))).toBe('blue');
    expect(lean(scaleColour(0.1, 'share', 'high'))).toBe('red');
    expect(lean(scaleColour(0.5, 'share', 'low'))).toBe('white');
  });

  it('draws a scale with no better end green to purple, never red or blue', () => {
    expect(lean(scaleColour(0.9, 'r', 'neither'))).toBe('green');
    expect(lean(scaleColour(-0.9, 'r', 'neither'))).toBe('purple');
  });

  it('names the better end in the legend: at the bottom for lower-is-better, at the top for higher-is-better, nowhere for neither', () => {
    const low = matrixChart(spec('low'));
    expect(low).toContain('data-better="low"');
    expect(low).toMatch(/>1 worse</);
    expect(low).toMatch(/>0 better</);
    expect(low).toContain(`fill="${scaleColour(0.05, 'share', 'low')}"`);
    const high = matrixChart(spec('high'));
    expect(high).toMatch(/>1 better</);
    expect(high).toMatch(/>0 worse</);
    const neither = matrixChart(spec('neither'));
    expect(neither).not.toMatch(/>-?\d+ (better|worse)</);
  });
});
