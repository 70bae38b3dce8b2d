// ESLint: typescript-eslint's recommended rules over every source; formatting is Prettier's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'data/', 'test-artifacts/', '.cache/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true, caughtErrors: 'none' },
      ],
      // Control characters are matched on purpose: input is cleaned of them.
      'no-control-regex': 'off',
    },
  },
  {
    // The extension loads some modules at first use (require), so that activation does without them.
    files: ['extension/**', 'test/support/activation-probe.ts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Kysely's generic builders are typed with any where one function serves every table.
    files: ['server/host/db/**', 'server/plugins/*/db/**', 'server/host/objects/tags-repository.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Tests and benchmarks read loosely typed JSON answers.
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.cjs', '**/*.mjs'],
    languageOptions: {
      globals: {
        require: 'readonly',
        module: 'writable',
        process: 'readonly',
        console: 'readonly',
        __dirname: 'readonly',
        setImmediate: 'readonly',
        setTimeout: 'readonly',
        Buffer: 'readonly',
      },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
