// The linter (run by `npm run lint`, part of `npm test`): ESLint's and typescript-eslint's recommended
// rules, without the type-aware ones so it stays fast. Every rule turned off or tuned below says why.
import { defineConfig } from 'eslint/config';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default defineConfig(
  { ignores: ['node_modules/**', 'controller/generated/**', 'test/artifacts/**', 'workspace/**', 'manifests/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['controller/**', 'api/**', 'test/**', 'bench/**', 'tools/**', '*.js', '*.ts', '*.cjs'],
    languageOptions: { globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // An argument or binding named with a leading underscore is unused on purpose (a signature
      // kept for its callers, a destructured field left out of a copy).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
      // Off: an error rethrown in other words here carries the part of the cause worth showing in its
      // own message, on purpose. Attaching `cause` would make pino's serializer append the cause's
      // whole text to every logged message, which can hold what the rewording leaves out (a
      // connection's address with its credentials, a driver's internals).
      'preserve-caught-error': 'off',
    },
  },
  {
    // The log formatter escapes control characters and its test feeds them: matching them is the point.
    files: ['controller/log.ts', 'test/controller/log.test.ts'],
    rules: { 'no-control-regex': 'off' },
  },
  {
    // The console runs in the browser, as plain ES modules.
    files: ['api/ui/**/*.js'],
    languageOptions: { globals: { ...globals.browser }, sourceType: 'module' },
  },
  {
    // CommonJS configuration files.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { ...globals.node } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
