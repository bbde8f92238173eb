// The console's types, for the type check only (api/ui/tsconfig.json; never served: api/routes/ui.ts
// serves .html, .css, .js, .svg and .ico). The API's answers are the types `npm run gen:types`
// generates from schemas/*.schema.json (`ApiClientRead` is schemas/api.schema.json's
// `$defs/ClientRead`); a page names them in JSDoc: `/** @type {Answer<ApiClientRead>} */`.
export type * from '../../../controller/generated/schema-types.ts';
import type {
  ApiConnectionRequest,
  ApiConnectionTest,
  ApiCoreModelList,
  ApiErrorCode,
  ApiProblem,
  ApiSettingsSession,
} from '../../../controller/generated/schema-types.ts';

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

/** The New client wizard's text fields: typed in its forms, read back by name. */
export type WizardTextField =
  | 'clientId' | 'clientName' | 'description' | 'vendor' | 'accountUrl' | 'host' | 'port' | 'warehouse' | 'database'
  | 'schema' | 'username' | 'password' | 'coreModelId' | 'vdmName' | 'measure' | 'dimension';

/** A problem of a wizard step: the control's `name` (null: the step's) and its text. */
export type WizardProblem = { name: string | null; message: string };

/** A problem the server found (dry run), filed under its step. */
export type WizardServerProblem = WizardProblem & { step: number };

/** The wizard's draft (pages/wizard/draft.js): what was typed, kept in this tab. */
export type WizardDraft = { [K in WizardTextField]: string } & {
  step: number;
  reached: number;
  idState: string;
  /** The last Test Connection: the values it tested (`key`) and its answer. */
  tested: { key: string; result: Pick<ApiConnectionTest, 'connected' | 'message' | 'durationMs'> } | null;
  ackNoTest: boolean;
  rls: boolean;
  columns: string[] | null;
  dashboard: boolean;
  measureChoice: string | null;
  dimensionChoice: string | null;
  connectionId: string | undefined;
  secretRef: string | undefined;
  connectionBody: ApiConnectionRequest | undefined;
  serverProblems: Record<number, WizardServerProblem[]>;
};

/** What every step of the wizard gets (pages/wizard.js). */
export type WizardContext = {
  s: WizardDraft;
  models: ApiCoreModelList['coreModels'];
  session: ApiSettingsSession;
  finished: boolean;
  save: () => unknown;
  go: (step: number) => void;
  done: () => void;
};
