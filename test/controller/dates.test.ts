import { describe, expect, it } from 'vitest';
import { parseIsoDate } from '../../controller/dates.ts';

describe('parseIsoDate', () => {
  it('reads dates and date-times, with or without a zone (none = UTC)', () => {
    expect(parseIsoDate('2027-01-01')?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(parseIsoDate('2028-02-29T12:30')?.toISOString()).toBe('2028-02-29T12:30:00.000Z');
    expect(parseIsoDate('2027-06-30T23:59:59.5+02:00')?.toISOString()).toBe('2027-06-30T21:59:59.500Z');
    expect(parseIsoDate('2027-06-30T10:00:00-0130')?.toISOString()).toBe('2027-06-30T11:30:00.000Z');
  });

  it('refuses what Date.parse rolls over or guesses', () => {
    for (const bad of ['2027-02-30', '2027-02-29', '2027-13-01', '2027-00-10', '2027-04-31', '2027-01-01T24:00', '2027-01-01T10:60', '2027-01-01T10:00:61Z', '2027-01-01T10:00+25:00', 'March 3 2027', '2027-1-1', ' 2027-01-01', '2027-01-01T10:00:00ZZ']) {
      expect(parseIsoDate(bad), bad).toBeUndefined();
    }
  });
});
