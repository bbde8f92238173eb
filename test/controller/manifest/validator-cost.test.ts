import { describe, expect, it } from 'vitest';
import { inlineRefs, MAX_PROBLEMS, SchemaRegistry } from '../../../controller/manifest/validator.ts';

const schemas = new SchemaRegistry();
const dataSource = { dbId: 'D2026A00001' };

// Timings live in the bench (machines here are shared and noisy); these tests hold the structure
// that keeps the cost linear: caps refused before ajv, inlined references, bounded problem lists.
function timed<T>(fn: () => T): { value: T } {
  return { value: fn() };
}

describe('validation cost and array caps', () => {
  it('20,000 empty charts (59 KiB): refused at once, naming the field and the cap', () => {
    const body = { name: 'big', dataSource, charts: Array.from({ length: 20_000 }, () => ({})) };
    const { value } = timed(() => schemas.validate('dashboard', body));
    expect(value).toEqual({ ok: false, problems: [{ path: 'charts', message: 'charts must hold at most 200 charts (it holds 20000)' }] });
  });

  it('every documented cap, with its message', () => {
    const many = (n: number, item: unknown = {}) => Array.from({ length: n }, () => structuredClone(item));
    const cases: [string, unknown, string][] = [
      ['dashboard', { name: 'd', dataSource, sections: many(51, { name: 's', charts: [] }) }, 'sections must hold at most 50 sections (it holds 51)'],
      ['dashboard', { name: 'd', dataSource, sections: [{ name: 's', charts: many(201) }] }, 'sections[0].charts must hold at most 200 charts per section (it holds 201)'],
      ['client', { clientId: 'A', clientName: 'a', connectionId: 'D2026A00001', coreModelId: 'SM2026A00001', vdm: many(101, { name: 'v' }) }, 'vdm must hold at most 100 VDMs (it holds 101)'],
      ['client', { clientId: 'A', clientName: 'a', connectionId: 'D2026A00001', coreModelId: 'SM2026A00001', vdm: [{ name: 'v' }], dashboards: many(51, { name: 'd', sections: [] }) }, 'dashboards must hold at most 50 dashboards (it holds 51)'],
      ['client', { clientId: 'A', clientName: 'a', connectionId: 'D2026A00001', coreModelId: 'SM2026A00001', vdm: [{ name: 'v' }], dashboards: [{ name: 'd', sections: many(51, { charts: [] }) }] }, 'dashboards[0].sections must hold at most 50 sections (it holds 51)'],
      ['client', { clientId: 'A', clientName: 'a', connectionId: 'D2026A00001', coreModelId: 'SM2026A00001', vdm: [{ name: 'v' }], dashboards: [{ name: 'd', sections: [{ charts: many(201) }] }] }, 'dashboards[0].sections[0].charts must hold at most 200 charts per section (it holds 201)'],
      ['pipeline', { name: 'p', steps: many(101) }, 'steps must hold at most 100 steps (it holds 101)'],
    ];
    for (const [stem, body, message] of cases) {
      const result = schemas.validate(stem, body);
      expect(result.ok, message).toBe(false);
      if (!result.ok) expect(result.problems.map((p) => p.message)).toEqual([message]);
    }
  });

  it('20,000 nameless VDMs are refused, and so is one nameless VDM', () => {
    const pkg = (vdm: unknown[]) => ({ clientId: 'A', clientName: 'a', connectionId: 'D2026A00001', coreModelId: 'SM2026A00001', vdm });
    const many = schemas.validate('client', pkg(Array.from({ length: 20_000 }, () => ({}))));
    expect(many).toEqual({ ok: false, problems: [{ path: 'vdm', message: 'vdm must hold at most 100 VDMs (it holds 20000)' }] });
    expect(schemas.validate('client', pkg([{ selectedColumns: ['a'] }]))).toEqual({ ok: false, problems: [{ path: 'vdm[0].name', message: 'vdm[0].name is required' }] });
  });

  it('cost is linear in the number of failing items: 10,000 bad charts within the caps', () => {
    // 50 sections of 200 empty charts: three problems each. ajv joins the errors of a
    // referenced schema with concat once per item, which made this quadratic (~0.7 s);
    // with references inlined it is a single pass.
    const body = { name: 'big', dataSource, sections: Array.from({ length: 50 }, (_, s) => ({ name: `s${s}`, charts: Array.from({ length: 200 }, () => ({})) })) };
    schemas.validate('dashboard', structuredClone(body));
    const { value } = timed(() => schemas.validate('dashboard', body));
    expect(value.ok).toBe(false);
    if (!value.ok) {
      expect(value.problems).toHaveLength(MAX_PROBLEMS + 1);
      expect(value.problems[0]).toEqual({ path: 'sections[0].charts[0].type', message: 'sections[0].charts[0].type is required' });
      expect(value.problems[MAX_PROBLEMS].message).toMatch(/^and \d+ more problems \(the first 100 are listed\)$/);
    }
  });

  it('a 1 MiB body within the caps validates (its cost is measured in the bench)', () => {
    const chart = (i: number) => ({ title: `chart ${i}`, type: 'bar', measures: ['revenue', { field: 'units', aggregation: 'avg' }], dimensions: ['region', { field: 'month', isDate: true }], grid: { x: 0, y: i, w: 6, h: 4 } });
    const body = { name: 'big', dataSource, sections: Array.from({ length: 45 }, (_, s) => ({ name: `s${s}`, charts: Array.from({ length: 200 }, (_, i) => chart(i)) })) };
    expect(JSON.stringify(body).length).toBeGreaterThan(1_000_000);
    schemas.validate('dashboard', structuredClone(body));
    const { value } = timed(() => schemas.validate('dashboard', body));
    expect(value.ok ? [] : value.problems.slice(0, 3)).toEqual([]);
  });
});

describe('inlineRefs', () => {
  it('replaces local and cross-schema references by their targets and leaves a recursive one alone', () => {
    const a = { $id: 'https://x/a.json', $defs: { leaf: { type: 'string' }, tree: { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#/$defs/tree' } } } } }, properties: { l: { $ref: '#/$defs/leaf', description: 'kept' }, t: { $ref: '#/$defs/tree' } } };
    const b = { $id: 'https://x/b.json', properties: { fromA: { $ref: 'https://x/a.json#/$defs/leaf' } } };
    const byId = new Map<string, Record<string, unknown>>([[a.$id, a], [b.$id, b]]);
    const inlinedA = inlineRefs(a, byId) as { properties: Record<string, unknown> };
    expect(inlinedA.properties.l).toEqual({ type: 'string', description: 'kept' });
    expect(inlinedA.properties.t).toEqual({ type: 'object', properties: { kids: { type: 'array', items: { $ref: '#/$defs/tree' } } } });
    expect((inlineRefs(b, byId) as { properties: Record<string, unknown> }).properties.fromA).toEqual({ type: 'string' });
  });
});
