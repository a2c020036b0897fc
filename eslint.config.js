// ESLint for mesh-audit: typescript-eslint's strict type-checked preset over src/, scripts/ and test/,
// run by `npm test` (see package.json). Each rule tuned below says why.
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';
import regexp from 'eslint-plugin-regexp';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'reports/**'] },
  eslint.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // noUncheckedIndexedAccess makes every index `T | undefined`; a `!` after a check the compiler
      // cannot follow (a Map filled just above, an index inside bounds) is the readable way to say so.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Numbers and booleans in messages are what a person reads; objects and unknowns stay refused.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // `(x) => void side(x)` and `() => set.add(x)` as one-line callbacks are clear enough.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      // cac and yaml hand over values typed as strings that can be numbers or booleans at run time
      // (`--out 1`, `name: 123`): the String() around them is deliberate, as is String() of an unknown.
      '@typescript-eslint/no-unnecessary-type-conversion': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
      // Errors are rewritten into one plain sentence for the user; the low-level cause is dropped on
      // purpose, since it can carry a path or a value that must not reach a log (SECURITY.md).
      'preserve-caught-error': 'off',
    },
  },
  // Layout is Prettier's (.prettierrc.json, `npm run format`); ESLint's layout rules are turned off so the two never disagree.
  prettier,
  {
    // Prettier does not break comments or strings; src/ keeps every line within Prettier's width anyway, so a
    // reader never scrolls sideways (comments wrap, long messages are joined from parts).
    files: ['src/**/*.ts'],
    rules: { 'max-len': ['error', { code: 120, tabWidth: 2 }] },
  },
  {
    // A function is what a reader takes in at once: at most 80 lines, blank lines and comments counted (issue 43).
    files: ['src/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80 }] },
  },
  {
    // Every name, label, path and file the scanner reads is the host's (SECURITY.md): an expression run on
    // one must not backtrack super-linearly (issue 46: a 400 kB label stalled the event loop until the
    // engine's requests timed out). Only the two cost rules of eslint-plugin-regexp, as errors: its
    // recommended set also restyles every class (`\d` for `[0-9]`, `\w`, the `i` flag) — about 60 hits in
    // src/ that change no behaviour, so not here. An expression these flag is rewritten; one that only
    // ever sees the scanner's own text or the operator's bounded settings carries a disable with its reason.
    files: ['src/**/*.ts'],
    plugins: { regexp },
    rules: { 'regexp/no-super-linear-backtracking': 'error', 'regexp/no-super-linear-move': 'error' },
  },
  {
    // The few plain-JavaScript entry points (bin/, test runners, this file) are outside tsconfig, so
    // the type-aware rules cannot run on them; they run on Node, whose globals ESLint must be told.
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
      },
    },
  },
  {
    // Tests read parsed JSON reports and SARIF logs, whose shape the assertions themselves check.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      // Tests restore process.env and require.cache key by key.
      '@typescript-eslint/no-dynamic-delete': 'off',
      // Test generators spread short ASCII alphabets into characters.
      '@typescript-eslint/no-misused-spread': 'off',
      // uvu's `test.skip` and `test.only` are declared as methods but never use `this`.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
