import { Liquid, type Template } from 'liquidjs';
import { formatProblem } from '../../errors.ts';
import { sha256 } from '../../hash.ts';
import { manifestKey } from '../../manifest/loader.ts';
import type { SchemaRegistry } from '../../manifest/validator.ts';
import { isPlainObject } from '../../objects.ts';
import { API_VERSION } from '../../generated/schema-constants.ts';
import type { Manifest, Problem } from '../../types.ts';
import type { ClientSetSpec, Input } from './types.ts';

/** Templates never read files: `include`, `render` and `layout` fail on every path. */
const NO_FILES = {
  exists: async () => false,
  existsSync: () => false,
  readFile: async () => {
    throw new Error('templates may not read files');
  },
  readFileSync: () => {
    throw new Error('templates may not read files');
  },
  resolve: (_root: string, file: string) => file,
  contains: async () => false,
  sep: '/',
  dirname: (file: string) => file,
};

/** A string that is exactly one output tag keeps the type of its value (`{{ input.seats }}` → 12). */
const WHOLE_OUTPUT = /^\{\{-?\s*([^]*?)\s*-?\}\}$/;

/** One rendered tenant: its documents (validated), or why it could not be rendered. */
export type RenderedTenant =
  | { ok: true; id: string; input: Input; docs: Manifest[]; keys: string[]; digest: string }
  | { ok: false; id: string; input: Input; problems: Problem[] };

type Compiled = { kind: 'text'; template: Template[] } | { kind: 'value'; expression: string } | { kind: 'plain'; value: string };

/**
 * Renders a ClientSet's `resources` once per input. Liquid (strict variables and filters, no
 * HTML escaping, no file access) applies to each string VALUE of the resource tree, one by one;
 * keys are never rendered, so a value can never add a key or a kind. Templates are parsed once per
 * set, then rendered per input.
 */
export class TemplateRenderer {
  readonly #engine = new Liquid({ strictVariables: true, strictFilters: true, ownPropertyOnly: true, fs: NO_FILES, root: [], partials: [], layouts: [] });
  readonly #schemas: SchemaRegistry;
  readonly #cache = new Map<string, Compiled>();

  constructor(schemas: SchemaRegistry) {
    this.#schemas = schemas;
  }

  /** Every input of `spec` rendered (inputs as read: inline first, then files in order). */
  renderAll(spec: ClientSetSpec, inputs: Input[]): RenderedTenant[] {
    return inputs.map((input) => this.render(spec, input));
  }

  render(spec: ClientSetSpec, input: Input): RenderedTenant {
    const id = String(input.id);
    const docs: Manifest[] = [];
    const problems: Problem[] = [];
    const scope = { input };
    spec.resources.forEach((resource, i) => {
      const at = `spec.resources[${i}]`;
      let doc: unknown;
      try {
        doc = this.#renderTree(resource, scope, at);
      } catch (err) {
        problems.push(err instanceof RenderError ? err.problem : { path: at, message: `${at}: ${(err as Error).message}` });
        return;
      }
      const withVersion = { apiVersion: API_VERSION, ...(doc as Record<string, unknown>) };
      const checked = this.#schemas.validateManifest(withVersion);
      if (!checked.ok) {
        for (const p of checked.problems) problems.push({ path: p.path ? `${at}.${p.path}` : at, message: `${at} (${(doc as Manifest).kind}): ${formatProblem(p)}` });
        return;
      }
      docs.push(checked.value);
    });
    const keys = docs.map((d) => manifestKey(d.kind, d.metadata.name));
    const dup = keys.find((k, i) => keys.indexOf(k) !== i);
    if (dup) problems.push({ path: 'spec.resources', message: `${dup} is generated twice for input ${id}` });
    if (problems.length) return { ok: false, id, input, problems };
    return { ok: true, id, input, docs, keys, digest: tenantDigest(docs) };
  }

  #renderTree(node: unknown, scope: object, path: string): unknown {
    if (typeof node === 'string') return this.#renderString(node, scope, path);
    if (Array.isArray(node)) return node.map((v, i) => this.#renderTree(v, scope, `${path}[${i}]`));
    if (isPlainObject(node)) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(node)) out[k] = this.#renderTree(v, scope, `${path}.${k}`);
      return out;
    }
    return node;
  }

  #renderString(text: string, scope: object, path: string): unknown {
    const compiled = this.#compile(text, path);
    try {
      if (compiled.kind === 'plain') return compiled.value;
      if (compiled.kind === 'text') return this.#engine.renderSync(compiled.template, scope) as string;
      const value: unknown = this.#engine.evalValueSync(compiled.expression, scope);
      if (value === undefined) return null;
      if (value !== null && typeof value === 'object') throw new Error('must render to a string, number, boolean or null');
      return value;
    } catch (err) {
      throw new RenderError({ path, message: `${path}: ${firstLine(err)}` });
    }
  }

  #compile(text: string, path: string): Compiled {
    const cached = this.#cache.get(text);
    if (cached) return cached;
    let compiled: Compiled;
    try {
      if (!text.includes('{{') && !text.includes('{%')) compiled = { kind: 'plain', value: text };
      else {
        const whole = WHOLE_OUTPUT.exec(text);
        if (whole && !whole[1].includes('{{') && !whole[1].includes('}}')) {
          // Parsed once as a template so a syntax error or an unknown filter fails here, not per input.
          this.#engine.parse(text);
          compiled = { kind: 'value', expression: whole[1] };
        } else compiled = { kind: 'text', template: this.#engine.parse(text) };
      }
    } catch (err) {
      throw new RenderError({ path, message: `${path}: ${firstLine(err)}` });
    }
    if (this.#cache.size < 10_000) this.#cache.set(text, compiled);
    return compiled;
  }
}

class RenderError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.message);
  }
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0];
}

/** The digest of one tenant's rendered documents (canonical: keys sorted). */
export function tenantDigest(docs: Manifest[]): string {
  return sha256(canonical(docs));
}

export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isPlainObject(v)) {
    return `{${Object.keys(v)
      .sort()
      .filter((k) => v[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
