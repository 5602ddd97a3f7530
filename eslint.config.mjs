// ESLint (flat config): typescript-eslint with type information over every .ts file tsconfig.json
// includes (src, test, bench, scripts); the JavaScript beside them (scripts/*.mjs, the root config
// files) without type-aware rules, since no tsconfig includes it. Formatting is Prettier's alone:
// eslint-config-prettier, last, switches off every rule that would disagree with it.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', '.dist-*/', 'coverage/', 'artifacts/'] },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A service made of promises: an unawaited one is a lost error or a race, a promise handed to
      // a callback that ignores it is an unhandled rejection, so these are errors, named here even
      // where the recommended set already has them.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      // `_`-named bindings are the house way of saying "deliberately unused" (a rest sibling that
      // drops a key, a parameter a signature requires).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // Test files read untyped values by design: supertest's `response.body`, TypeORM's `query()`
    // rows and JSON.parse are `any`, and jest's asymmetric matchers (`expect.any(String)`) are typed
    // `any`. The `expect` on them is the shape check, so the no-unsafe-* rules would only ask each
    // assertion to restate its expected shape as a cast. Shared test helpers (test/support) keep them.
    files: ['**/*.spec.ts', '**/*.e2e-spec.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['**/*.mjs', '**/*.cjs', '**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: globals.node },
  },
  { files: ['**/*.cjs', 'jest.config.js'], languageOptions: { sourceType: 'commonjs' } },
  // The portal's one script runs in the partner's browser, not in Node.
  { files: ['src/portal/views/*.js'], languageOptions: { globals: globals.browser } },
  prettier,
);
