// The console's types, for the type check only (api/ui/tsconfig.json; never served: api/routes/ui.ts
// serves .html, .css, .js, .svg and .ico). The API's answers are the types `npm run gen:types`
// generates from schemas/*.schema.json (`ApiClientRead` is schemas/api.schema.json's
// `$defs/ClientRead`); a page names them in JSDoc: `/** @type {Answer<ApiClientRead>} */`.
export type * from '../../../controller/generated/schema-types.ts';
import type { ApiErrorCode, ApiProblem } from '../../../controller/generated/schema-types.ts';

/** What `call()` resolves: the status and the parsed JSON body (null for an empty one). */
export type Answer<T> = { status: number; body: T };

/** A child `h()` and `render()` accept: nodes, text, numbers, nested lists; null, undefined and false are skipped. */
export type Child = Node | string | number | boolean | null | undefined | readonly Child[];

/** The attributes `h()` takes: `on<event>` listeners, `class`, `dataset`, `value`, `checked`, any other attribute. */
export type Attrs = { [K in keyof GlobalEventHandlersEventMap as `on${K}`]?: ((e: GlobalEventHandlersEventMap[K]) => unknown) | null } & Record<string, unknown>;

/** A problem of a refused request as the console shows it: its field path and the whole sentence. */
export type ProblemText = { path: string; text: string };

/**
 * The JSON body an ApiError carries: a refusal's `{success: false, error}` (schemas: ErrorBody), a
 * pipeline route's `{success: false, message}` (MessageError), or whatever else a failed answer held.
 */
export type ErrorAnswer = {
  error?: string;
  message?: string;
  code?: ApiErrorCode;
  problems?: ApiProblem[];
  [field: string]: unknown;
};

/** The stored session of this origin (api.js). */
export type Session = { userId: string; csrfToken: string };
