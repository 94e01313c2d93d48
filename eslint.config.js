// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'bench/upstream/', 'bench/out/', 'sim-report*.html', '**/*.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    // The aws plug-in reaches the SDK through src/cloud/aws/ec2.ts alone: the build bundles that
    // one module, and an import past it would load the whole EC2 service model again.
    // (Tests and benchmarks outside src/ may use the SDK to set up their clouds.)
    files: ['src/**/*.ts'],
    ignores: ['src/cloud/aws/ec2.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@aws-sdk/*', '@smithy/*'],
              message: 'Import the AWS SDK through src/cloud/aws/ec2.ts (see its header).',
            },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: 'ImportExpression[source.value=/^@(aws-sdk|smithy)\\//]',
          message: 'Import the AWS SDK through src/cloud/aws/ec2.ts (see its header).',
        },
      ],
    },
  },
);
