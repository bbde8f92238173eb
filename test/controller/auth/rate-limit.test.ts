import { describe, expect, it } from 'vitest';
import { TokenBuckets, WindowCounter } from '../../../controller/auth/rate-limit.ts';
import { FakeClock } from '../../helpers/clock.ts';

describe('TokenBuckets', () => {
  it('allows a burst of one second, then refills at the rate', () => {
    const clock = new FakeClock();
    const b = new TokenBuckets({ ratePerSecond: 3, clock: clock.now });
    expect([b.take('k'), b.take('k'), b.take('k')].every((a) => a.ok)).toBe(true);
    expect(b.take('k')).toEqual({ ok: false, retryAfterSeconds: 1 });
    expect(b.take('other')).toEqual({ ok: true });
    clock.advance(334);
    expect(b.take('k')).toEqual({ ok: true });
    expect(b.take('k').ok).toBe(false);
  });

  it('rate 0 means no limit', () => {
    const b = new TokenBuckets({ ratePerSecond: 0, clock: new FakeClock().now });
    for (let i = 0; i < 10_000; i++) expect(b.take('k').ok).toBe(true);
  });
});

describe('WindowCounter', () => {
  it('refuses after the limit until the window ends, with the seconds left', () => {
    const clock = new FakeClock();
    const w = new WindowCounter({ limit: 2, windowMs: 60_000, clock: clock.now });
    expect(w.check('ip')).toEqual({ ok: true });
    w.record('ip');
    w.record('ip');
    expect(w.check('ip')).toEqual({ ok: false, retryAfterSeconds: 60 });
    clock.advance(30_500);
    expect(w.check('ip')).toEqual({ ok: false, retryAfterSeconds: 30 });
    clock.advance(29_500);
    expect(w.check('ip')).toEqual({ ok: true });
  });

  it('reset clears a key', () => {
    const w = new WindowCounter({ limit: 1, windowMs: 1000, clock: new FakeClock().now });
    w.record('u');
    expect(w.check('u').ok).toBe(false);
    w.reset('u');
    expect(w.check('u').ok).toBe(true);
  });
});
