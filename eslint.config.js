// ESLint finds bugs; Prettier (run beside it by `npm run lint`) owns the layout, so no style rules here.
// The rules are type-aware: typescript-eslint asks the TypeScript 6 API that `typescript` resolves to
// (docs/adr/0121-lint.md says why that is not the TypeScript 7 that `tsc` runs).
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig({
  files: ['packages/*/src/**/*.ts', 'examples/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
  languageOptions: {
    parser: tseslint.parser,
    parserOptions: {
      // The project service finds each file's tsconfig.json as an editor does: one program for the repo.
      projectService: true,
      tsconfigRootDir: import.meta.dirname,
    },
  },
  linterOptions: { reportUnusedDisableDirectives: 'error' },
  plugins: { '@typescript-eslint': tseslint.plugin },
  rules: {
    // A promise nobody awaits or catches turns its rejection into an unhandledRejection, which ends the process.
    // node:test's describe/it/test return promises the runner itself awaits. The allowance goes by name, so
    // it also covers a subtest's t.test(), which the parent must await: no-restricted-syntax below keeps that.
    '@typescript-eslint/no-floating-promises': [
      'error',
      {
        allowForKnownSafeCalls: [
          {
            from: 'package',
            package: 'node:test',
            name: ['describe', 'it', 'test', 'suite', 'before', 'after'],
          },
        ],
      },
    ],
    // An async function passed where a void callback is expected (an event listener, a timer, forEach)
    // rejects into nothing.
    '@typescript-eslint/no-misused-promises': 'error',
    'no-restricted-syntax': [
      'error',
      {
        selector:
          "ExpressionStatement > CallExpression[callee.type='MemberExpression'][callee.property.name='test']",
        message: 'Await the subtest: a parent test that ends first cancels it.',
      },
    ],
    // Awaiting a value that is not a thenable is a sign the callee changed under the caller.
    '@typescript-eslint/await-thenable': 'error',
    '@typescript-eslint/no-unused-vars': [
      'error',
      {
        args: 'after-used',
        argsIgnorePattern: '^_',
        varsIgnorePattern: '^_',
        caughtErrors: 'all',
        caughtErrorsIgnorePattern: '^_',
        destructuredArrayIgnorePattern: '^_',
        ignoreRestSiblings: true,
      },
    ],
  },
});
