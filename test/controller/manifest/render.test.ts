import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../../controller/manifest/loader.ts';
import { renderManifestYaml } from '../../../controller/manifest/render.ts';
import { testSchemas } from '../../helpers/schemas.ts';

/** Strings a YAML emitter can get wrong: other types' plain forms, indicators, breaks, controls. */
const TRICKY = [
  'yes', 'no', 'on', 'off', 'y', 'true', 'True', 'FALSE', 'null', 'Null', '~', '', '0', '-0', '0.0', '1e3', '.5', '+.5', '+1',
  '0o17', '0x1F', '0b101', '1_000', '12:30', '2024-01-01', '2024-01-01T10:00:00Z', '.inf', '-.Inf', '.NaN', '<<', '=', '- a',
  'a: b', '#x', 'x #y', '|', '>', '@a', '`a', '%a', '!a', '&a', '*a', '?', '-', '---', '...', '"q"', "'q'", 'a\nb', 'a\n',
  '  lead', 'trail ', '\t', 'é', '😀', '\u2028', '\u0085', '\x00', '\x7f', '{a}', '[a]', ',', '01', '08', 'NaN', 'Infinity',
];

const text = fc.oneof(fc.constantFrom(...TRICKY), fc.string(), fc.string({ unit: 'binary' }), fc.tuple(fc.constantFrom(...TRICKY), fc.string()).map((p) => p.join('')));
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(text, fc.constantFrom('__proto__', '<<')), tie('value'), { maxKeys: 4 }),
  ),
})).value;

const schemas = testSchemas();

describe('renderManifestYaml', () => {
  it('writes text the loader reads back as the same value, whatever the strings look like', () => {
    fc.assert(
      fc.property(json, (value) => {
        // As a JSON request body would carry it (no -0, no undefined).
        const spec = JSON.parse(JSON.stringify({ value })) as Record<string, unknown>;
        const manifest = { apiVersion: 'bi.controller/v1', kind: 'CoreModel', metadata: { name: 'm' }, spec: { name: 'M', definition: spec } };
        const r = parseManifest('core/m.yaml', renderManifestYaml(manifest), schemas);
        expect(r.ok && r.manifest.spec.definition).toEqual(spec);
      }),
      { numRuns: 1000 },
    );
  });

  it('leaves out keys whose value is undefined and writes repeated objects in full (no anchors)', () => {
    const shared = { field: 'revenue' };
    const out = renderManifestYaml({ a: undefined, b: [shared, shared] });
    expect(out).toBe('b:\n  - field: revenue\n  - field: revenue\n');
  });
});
