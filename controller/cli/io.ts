/** Where a command writes: the real terminal, or buffers in tests. */
export interface CliIO {
  out(line: string): void;
  err(line: string): void;
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadableStream;
}

export const processIO: CliIO = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  stdin: process.stdin,
};

/** Formats rows as an aligned text table. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (c ?? '').padEnd(widths[i])).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}
