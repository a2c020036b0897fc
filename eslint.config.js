// ESLint for mesh-audit: typescript-eslint's strict type-checked preset over src/, scripts/ and test/,
// run by `npm test` (see package.json). Each rule tuned below says why.
import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    },
  },
);
