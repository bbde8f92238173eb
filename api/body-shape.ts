import type { FastifyInstance } from 'fastify';
import { ValidationError } from '../controller/errors.ts';
import type { Problem } from '../controller/types.ts';

/**
 * Objects and arrays one JSON body may hold. Every documented array is capped far below this
 * (charts 200, VDMs 100, steps 100, …); a body past it is refused before JSON.parse builds
 * anything — a 1 MiB body of `{}` items would otherwise be 350,000 objects to build, walk and
 * validate (0.7–2 s of the event loop each).
 */
export const MAX_BODY_CONTAINERS = 20_000;
/** Values (array elements and object members) one JSON body may hold: `[0,0,0,…]` is cheap to parse but not to validate item by item. */
export const MAX_BODY_VALUES = 100_000;

/**
 * Members one JSON object may hold. A single object of 95,000 keys (a 1 MiB body) cost the event
 * loop 3.5–4.5 s (schema walk, unknown-field suggestions, copies: the cost grows faster than the
 * key count within one object); no documented object comes near this.
 */
export const MAX_OBJECT_MEMBERS = 1_000;

export interface BodyShapeLimits {
  maxContainers: number;
  maxValues: number;
  maxDepth: number;
  /** Members of one object at most (default MAX_OBJECT_MEMBERS). */
  maxMembers?: number;
}

/**
 * Counts the objects and arrays of a JSON text in one pass over its characters (strings
 * skipped, nothing allocated), and how deep they nest. Stops at the first limit passed.
 * Not a validator: malformed text is left for JSON.parse to refuse.
 */
export function bodyShapeProblem(text: string, limits: BodyShapeLimits): Problem | undefined {
  let containers = 0;
  let separators = 0;
  let depth = 0;
  const maxMembers = limits.maxMembers ?? MAX_OBJECT_MEMBERS;
  // Per open container (depth is capped, so these stay small): is it an object, how many members so far.
  const isObject = new Uint8Array(limits.maxDepth + 2);
  const members = new Uint32Array(limits.maxDepth + 2);
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: skip to its closing quote (escapes skipped with the character they escape).
      for (i++; i < n; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c) i++;
        else if (s === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++containers > limits.maxContainers) {
        return { path: 'body', message: `holds more than ${limits.maxContainers} objects and arrays (every array of a body is capped far below; see the limits in the README)` };
      }
      if (++depth > limits.maxDepth) return { path: 'body', message: `is nested deeper than ${limits.maxDepth} levels` };
      isObject[depth] = c === 0x7b ? 1 : 0;
      members[depth] = 1;
    } else if (c === 0x7d || c === 0x5d) depth--;
    else if (c === 0x2c) {
      if (++separators >= limits.maxValues) return { path: 'body', message: `holds more than ${limits.maxValues} values` };
      if (depth > 0 && isObject[depth] === 1 && ++members[depth] > maxMembers) return { path: 'body', message: `holds an object with more than ${maxMembers} members` };
    }
  }
  return undefined;
}

/**
 * Fastify's own JSON parser (its error codes and messages kept), behind the shape check: a body
 * past the limits is a 400 before JSON.parse runs.
 */
export function registerBodyShapeCheck(app: FastifyInstance, limits: BodyShapeLimits): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const problem = bodyShapeProblem(body as string, limits);
    if (problem) return done(new ValidationError([problem]), undefined);
    parseJson(req, body as string, done);
  });
}
