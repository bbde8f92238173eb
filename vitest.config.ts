import { defineConfig } from 'vitest/config';

// Three suites: `unit` runs anywhere with Node alone (npm test); `e2e` needs Chromium and
// PostgreSQL; `reliability` starts real server processes and is bounded to a few minutes.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: ['test/e2e/**', 'test/reliability/**'],
          testTimeout: 20_000,
          hookTimeout: 30_000,
          // Files of a worker share one module graph: the compiled schemas (test/helpers/schemas.ts)
          // and the transformed modules are made once per worker, not once per file (~3x faster).
          // Safe because no unit test mocks a module or leaves a global changed (env stubs are undone).
          isolate: false,
          unstubEnvs: true,
        },
      },
      { test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000, fileParallelism: false } },
      { test: { name: 'reliability', include: ['test/reliability/**/*.test.ts'], testTimeout: 300_000, hookTimeout: 120_000, fileParallelism: false } },
    ],
  },
});
