import type { Bindings, ChildLoggerOptions, Logger } from 'pino';

type LogArgs = Parameters<Logger['info']>;

/**
 * A request's logger that becomes pino's child (the request ID bound) only when a line is logged
 * at an enabled level, or a child or the bindings are asked for: most requests log nothing
 * (request lines are debug), and a pino child per request cost a public constant route a few per
 * cent of its CPU (docs/benchmarks.md). Used when the route sets no log level or serializers.
 */
export class LazyChildLogger {
  readonly #parent: Logger;
  readonly #bindings: Bindings;
  #child: Logger | undefined;

  constructor(parent: Logger, bindings: Bindings) {
    this.#parent = parent;
    this.#bindings = bindings;
  }

  #real(): Logger {
    return (this.#child ??= this.#parent.child(this.#bindings));
  }

  get level(): string {
    return (this.#child ?? this.#parent).level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return (this.#child ?? this.#parent).isLevelEnabled(level);
  }

  bindings(): Bindings {
    return this.#real().bindings();
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.#real().child(bindings, options);
  }

  fatal(...args: LogArgs): void {
    if (this.isLevelEnabled('fatal')) this.#real().fatal(...args);
  }

  error(...args: LogArgs): void {
    if (this.isLevelEnabled('error')) this.#real().error(...args);
  }

  warn(...args: LogArgs): void {
    if (this.isLevelEnabled('warn')) this.#real().warn(...args);
  }

  info(...args: LogArgs): void {
    if (this.isLevelEnabled('info')) this.#real().info(...args);
  }

  debug(...args: LogArgs): void {
    if (this.isLevelEnabled('debug')) this.#real().debug(...args);
  }

  trace(...args: LogArgs): void {
    if (this.isLevelEnabled('trace')) this.#real().trace(...args);
  }

  silent(): void {}
}

/** Fastify's `childLoggerFactory`: the lazy child, or pino's own when the route sets options. */
export function lazyChildLoggerFactory(logger: Logger, bindings: Bindings, opts: ChildLoggerOptions): Logger {
  // Without a logger Fastify passes its null logger (no levels): its child is itself.
  if (Object.keys(opts).length > 0 || typeof logger.isLevelEnabled !== 'function') return logger.child(bindings, opts);
  return new LazyChildLogger(logger, bindings) as unknown as Logger;
}
