import type { FastifySerializerCompiler } from 'fastify/types/schema.js';
import fastJson from 'fast-json-stringify';
import type { SchemaRegistry } from '../../controller/manifest/validator.ts';
import { externalSchemas } from './document.ts';

type Serialize = (data: unknown) => string;

/** Compiled serializers by the text of the schemas they resolve refs in, then by response schema. */
const compiled = new Map<string, Map<string, Serialize>>();

/**
 * Fastify's serializer compiler for response schemas: `fast-json-stringify` (as Fastify's own),
 * resolving refs to the schemas of `schemas/`. A field the schema does not declare is never sent.
 * Routes share most response schemas (every error body, every guard failure), so each distinct
 * schema is compiled once per process, not once per route and app.
 */
export function responseSerializer(schemas: SchemaRegistry): FastifySerializerCompiler<unknown> {
  const externals = externalSchemas(schemas);
  const key = JSON.stringify(externals);
  let cache = compiled.get(key);
  if (!cache) compiled.set(key, (cache = new Map()));
  const byText = cache;
  return ({ schema }) => {
    const text = JSON.stringify(schema);
    let serialize = byText.get(text);
    if (!serialize) {
      // The payload schemas put `required` and `properties` in if/then branches without `type`;
      // fast-json-stringify's own Ajv would log a strictTypes warning for each.
      serialize = fastJson(schema as fastJson.Schema, {
        schema: externals as unknown as Record<string, fastJson.Schema>,
        ajv: { strictTypes: false },
      }) as Serialize;
      byText.set(text, serialize);
    }
    return serialize;
  };
}
