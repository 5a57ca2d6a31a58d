import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/dist-bench/**',
      'node_modules/**',
      'coverage/**',
      '**/jest.config.js',
      'jest.*.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: './tsconfig.check.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      // Route handlers share one async signature whether or not they wait on anything.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests and their kit read JSON replies and jest's asymmetric matchers, which are `any` by
    // nature.
    files: ['*/test/**/*.ts', 'testkit/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // The panels' browser modules, typed by their JSDoc (tsconfig.panels.json). Names are
    // tsc's to check against the DOM library, so ESLint's name check stays off for them.
    files: ['ui/**/*.js', 'worker/panel/**/*.js', 'waker/panel/**/*.js', '*/panel/**/*.d.ts'],
    languageOptions: {
      sourceType: 'module',
      parserOptions: { project: './tsconfig.panels.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: { 'no-undef': 'off' },
  },
  {
    files: ['**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { module: 'writable', require: 'readonly', process: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
