import { DEFAULT_SCHEMA, dump, Type } from 'js-yaml';
import { Schema } from 'yaml';

/**
 * The plain scalars the loader's parser (`yaml`, YAML 1.2 core schema) reads as something other
 * than a string (`+.5`, `0o17`, `~`, …), taken from that parser itself. Known to the emitter as
 * an implicit type, so it quotes every string that matches one of them: what is written reads
 * back as the same string, whatever js-yaml's own schema thinks of it.
 */
const loaderScalars = new Type('tag:bi-controller,2026:loader-scalar', {
  kind: 'scalar',
  resolve: (data: unknown) => typeof data === 'string' && CORE_TESTS.some((re) => re.test(data)),
});
const CORE_TESTS: RegExp[] = new Schema({ schema: 'core' }).tags.flatMap((t) => ('test' in t && t.test instanceof RegExp ? [t.test] : []));
const SCHEMA = DEFAULT_SCHEMA.extend({ implicit: [loaderScalars] });

/**
 * A manifest as the YAML text the API writes. js-yaml's emitter (about five times faster than
 * `yaml`'s document model, which was a tenth of an import's CPU); what it writes parses back,
 * with the loader's parser, to the same value (a property test holds it to that). No anchors for
 * repeated objects; long strings stay on one line; keys whose value is undefined are left out.
 */
export function renderManifestYaml(document: unknown): string {
  return dump(document, { schema: SCHEMA, noRefs: true, lineWidth: -1, skipInvalid: true });
}
