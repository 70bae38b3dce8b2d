// Import rules checked by `npm test` (test/conventions/dependencies.test.ts): no cycles (type-only
// imports count) and the layers of the architecture (docs/architecture.md).
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles, type-only imports included.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'contract-imports-no-part',
      severity: 'error',
      comment: 'The contract is imported by the service, the extension and the webview, and imports none of them.',
      from: { path: '^contract/' },
      to: { path: '^(server|extension|webview)/' },
    },
    {
      name: 'extension-and-webview-meet-in-the-contract',
      severity: 'error',
      comment: 'The extension and the webview share only the contract.',
      from: { path: '^extension/' },
      to: { path: '^webview/' },
    },
    {
      name: 'webview-and-extension-meet-in-the-contract',
      severity: 'error',
      comment: 'The webview and the extension share only the contract.',
      from: { path: '^webview/' },
      to: { path: '^extension/' },
    },
    {
      name: 'clients-reach-the-service-over-http',
      severity: 'error',
      comment: 'The extension and the webview know the service only through the contract.',
      from: { path: '^(extension|webview)/' },
      to: { path: '^server/' },
    },
    {
      name: 'service-knows-no-client',
      severity: 'error',
      comment: 'The service never imports the extension or the webview.',
      from: { path: '^server/' },
      to: { path: '^(extension|webview)/' },
    },
    {
      name: 'webview-runs-in-a-browser',
      severity: 'error',
      comment: 'The webview bundle runs in a browser sandbox: no Node built-ins, no vscode.',
      from: { path: '^webview/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'vscode-at-the-edges',
      severity: 'error',
      comment:
        'Only extension/vscode/ and the entry point import vscode; extension/core/ stays testable in plain Node.',
      from: { path: '^(extension/core|contract|webview)/' },
      to: { path: '^vscode$' },
    },

    // The service's layers (docs/architecture.md).
    {
      name: 'host-imports-no-plugin',
      severity: 'error',
      comment: 'The host is complete without its plugins: it never imports one.',
      from: { path: '^server/host/' },
      to: { path: '^server/plugins/' },
    },
    {
      name: 'plugins-use-the-host-through-its-public-modules',
      severity: 'error',
      comment:
        'A plugin reaches the host only through server/host/index.ts (domain) and server/host/http/index.ts (routes).',
      from: { path: '^server/plugins/' },
      to: { path: '^server/host/', pathNot: '^server/host/(index|http/index)\\.ts$' },
    },
    {
      name: 'plugins-use-each-other-through-their-index',
      severity: 'error',
      comment: "A plugin reaches another plugin only through that plugin's index.ts.",
      from: { path: '^server/plugins/([^/]+)/' },
      to: { path: '^server/plugins/', pathNot: ['^server/plugins/$1/', '^server/plugins/[^/]+/index\\.ts$'] },
    },
    {
      name: 'domain-imports-no-http',
      severity: 'error',
      comment:
        'Domain modules know nothing of HTTP: not Express, not the HTTP layer, not route modules. Only route modules and the composition (app, main, host.ts, register.ts, plugin.ts) do.',
      from: {
        path: '^server/',
        pathNot: [
          '^server/(app|main|plugins)\\.ts$',
          '^server/host/(host|register)\\.ts$',
          '^server/plugins/[^/]+/plugin\\.ts$',
          '^server/host/http/',
          '(^|/|-)routes\\.ts$',
        ],
      },
      to: {
        path: ['node_modules/(@types/)?express(-serve-static-core)?/', '^server/host/http/', '(^|/|-)routes\\.ts$'],
      },
    },
    {
      name: 'sql-only-in-repositories',
      severity: 'error',
      comment:
        "Kysely and SQL live in repository modules (*-repository.ts, repository.ts, repositories/), list declarations (list.ts) and the database layers (host/db/, a plugin's db/); " +
        'everything else asks them.',
      from: {
        path: '^server/',
        pathNot: [
          '^server/host/db/',
          '^server/plugins/[^/]+/db/',
          '(^|/|-)repository\\.ts$',
          '/repositories/',
          '(^|/)list\\.ts$',
        ],
      },
      to: { path: 'node_modules/kysely/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^dist/' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
