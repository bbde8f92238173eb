/**
 * Pairs desired items (by name, in order) with existing rows: first the row of the same name,
 * then, for the rest, the row at the same position that nothing claimed. Keeps the IDs of
 * unchanged and renamed-in-place items stable.
 */
export function matchByNameThenPosition<R extends { name: string; position: number }>(
  existing: readonly R[],
  names: readonly string[],
): { matches: (R | undefined)[]; unmatched: R[] } {
  const free = new Set(existing);
  const matches: (R | undefined)[] = names.map((name) => {
    const row = existing.find((r) => free.has(r) && r.name === name);
    if (row) free.delete(row);
    return row;
  });
  names.forEach((name, i) => {
    if (matches[i]) return;
    const row = existing.find((r) => free.has(r) && r.position === i && !names.includes(r.name));
    if (row) {
      free.delete(row);
      matches[i] = row;
    }
  });
  return { matches, unmatched: existing.filter((r) => free.has(r)) };
}
