import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // The client's types are generated from the OpenAPI document (`npm run client:types`): tsc checks them, and linting
  // 650 KB of generated declarations (a tenth of the lint's time) finds nothing anyone would fix by hand.
  { ignores: ['node_modules/**', 'data/**', 'dist/**', 'coverage/**', 'src/client/openapi-types.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // CommonJS files (a bench probe preloaded with node --require): require is how they load modules.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // docs/architecture.md "Layers": the core knows no HTTP, no driver and no adapter.
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['fastify', '@fastify/*', 'better-sqlite3', 'pg', 'ioredis', 'ws', 'pino'], message: 'core must not depend on infrastructure' },
          { group: ['**/adapters/**', '**/surfaces/**', '**/app/**', '**/dashboard/**', '**/mcp/**'], message: 'core -> nothing outside core' },
        ],
      }],
    },
  },
  {
    // The MCP server (tools, resources) runs over the core alone; app/ gives it a transport (stdio, /mcp).
    files: ['src/mcp/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['fastify', '@fastify/*', 'better-sqlite3', 'pg', 'ioredis', 'ws', 'pino', '@modelcontextprotocol/node'], message: 'mcp knows no HTTP server, driver or adapter' },
          { group: ['**/adapters/**', '**/surfaces/**', '**/app/**', '**/dashboard/**'], message: 'mcp -> core only' },
        ],
      }],
    },
  },
  {
    files: ['src/surfaces/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['**/adapters/**', '**/app/**'], message: 'surfaces depend on the core and http-kit only' },
        ],
      }],
    },
  },
  {
    // docs/architecture.md "Dashboard": dashboard -> core only, like a surface (and not through a surface's http-kit).
    files: ['src/dashboard/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['**/adapters/**', '**/app/**', '**/surfaces/**', '**/mcp/**'], message: 'the dashboard depends on the core only' },
        ],
      }],
    },
  },
);
