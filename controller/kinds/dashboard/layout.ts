/** A chart's place on the dashboard's 12-column grid (0-based offsets). */
export interface Grid {
  x: number;
  y: number;
  width: number;
  height: number;
}

export const GRID_COLUMNS = 12;
export const KPI_SIZE = { width: 3, height: 6 } as const;
export const CHART_SIZE = { width: 12, height: 13 } as const;

export interface LayoutItem {
  kpi: boolean;
  grid?: Partial<Grid>;
}

const overlaps = (a: Grid, b: Grid): boolean => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

/** The lowest `y >= minY` where a `width`×`height` box at column `x` overlaps nothing placed. */
function lowestFree(placed: readonly Grid[], x: number, width: number, height: number, minY: number): number {
  const candidates = [minY, ...placed.map((r) => r.y + r.height).filter((b) => b > minY)].sort((a, b) => a - b);
  for (const y of candidates) {
    const box = { x, y, width, height };
    if (!placed.some((r) => overlaps(r, box))) return y;
  }
  return minY; // unreachable: below every placed box is always free
}

/**
 * The grid of each chart of one section. Given values stay; sizes default to 3×6 for KPI
 * cards and 12×13 for other charts, `x` to 0. Charts without a `y` are placed so nothing
 * overlaps: KPI cards first, side by side in rows of 12 columns, then the other charts
 * stacked below them, in the order they are written.
 */
export function autoLayout(items: readonly LayoutItem[]): Grid[] {
  const out: Grid[] = new Array<Grid>(items.length);
  const placed: Grid[] = [];
  const size = (it: LayoutItem) => {
    const d = it.kpi ? KPI_SIZE : CHART_SIZE;
    return { width: it.grid?.width ?? d.width, height: it.grid?.height ?? d.height };
  };
  items.forEach((it, i) => {
    if (it.grid?.y === undefined) return;
    out[i] = { x: it.grid.x ?? 0, y: it.grid.y, ...size(it) };
    placed.push(out[i]);
  });
  let rowY = 0;
  let rowBottom = 0;
  let cursor = 0;
  items.forEach((it, i) => {
    if (!it.kpi || out[i]) return;
    const { width, height } = size(it);
    let x = it.grid?.x;
    if (x === undefined) {
      if (cursor > 0 && cursor + width > GRID_COLUMNS) {
        rowY = rowBottom;
        cursor = 0;
      }
      x = cursor;
    }
    const y = lowestFree(placed, x, width, height, rowY);
    out[i] = { x, y, width, height };
    placed.push(out[i]);
    rowY = y;
    rowBottom = Math.max(rowBottom, y + height);
    cursor = x + width;
  });
  let stackY = rowBottom;
  items.forEach((it, i) => {
    if (out[i]) return;
    const { width, height } = size(it);
    const x = it.grid?.x ?? 0;
    const y = lowestFree(placed, x, width, height, stackY);
    out[i] = { x, y, width, height };
    placed.push(out[i]);
    stackY = y + height;
  });
  return out;
}
