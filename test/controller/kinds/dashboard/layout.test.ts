import { describe, expect, it } from 'vitest';
import { autoLayout } from '../../../../controller/kinds/dashboard/layout.ts';

const kpi = { kpi: true };
const chart = { kpi: false };

describe('autoLayout', () => {
  it('places KPI cards side by side (3x6) and stacks other charts below them (12x13)', () => {
    expect(autoLayout([kpi, kpi, chart, kpi, chart])).toEqual([
      { x: 0, y: 0, width: 3, height: 6 },
      { x: 3, y: 0, width: 3, height: 6 },
      { x: 0, y: 6, width: 12, height: 13 },
      { x: 6, y: 0, width: 3, height: 6 },
      { x: 0, y: 19, width: 12, height: 13 },
    ]);
  });

  it('wraps a fifth KPI card to a second row and starts the charts below it', () => {
    expect(autoLayout([chart, kpi, kpi, kpi, kpi, kpi])).toEqual([
      { x: 0, y: 12, width: 12, height: 13 },
      { x: 0, y: 0, width: 3, height: 6 },
      { x: 3, y: 0, width: 3, height: 6 },
      { x: 6, y: 0, width: 3, height: 6 },
      { x: 9, y: 0, width: 3, height: 6 },
      { x: 0, y: 6, width: 3, height: 6 },
    ]);
  });

  it('stacks charts from the top when there is no KPI', () => {
    expect(autoLayout([chart, chart]).map((g) => g.y)).toEqual([0, 13]);
  });

  it('keeps given positions and sizes and moves auto-placed charts so nothing overlaps', () => {
    const grids = autoLayout([
      { kpi: false, grid: { x: 0, y: 0, width: 6, height: 10 } },
      chart,
      { kpi: true, grid: { width: 4 } },
      { kpi: false, grid: { x: 6, width: 6 } },
    ]);
    expect(grids).toEqual([
      { x: 0, y: 0, width: 6, height: 10 },
      { x: 0, y: 16, width: 12, height: 13 },
      { x: 0, y: 10, width: 4, height: 6 },
      { x: 6, y: 29, width: 6, height: 13 },
    ]);
    for (let i = 0; i < grids.length; i++) {
      for (let j = i + 1; j < grids.length; j++) {
        const [a, b] = [grids[i], grids[j]];
        const overlap = a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
        expect(overlap, `${i} and ${j} overlap`).toBe(false);
      }
    }
  });

  it('defaults x to 0 for a grid without x', () => {
    expect(autoLayout([{ kpi: false, grid: { y: 4, height: 2 } }])).toEqual([{ x: 0, y: 4, width: 12, height: 2 }]);
  });
});
