/** Column helpers shared by appliers: JSON in TEXT columns, booleans as 0/1. */
export const toJson = (v: unknown): string => JSON.stringify(v ?? null);
export const fromJson = <T>(s: string | null | undefined, fallback: T): T => (s ? (JSON.parse(s) as T) : fallback);
export const bit = (b: boolean | undefined): number => (b ? 1 : 0);
