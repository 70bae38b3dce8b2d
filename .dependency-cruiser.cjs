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
      comment: 'Only extension/vscode/ and the entry point import vscode; extension/core/ stays testable in plain Node.',
      from: { path: '^(extension/core|contract|webview)/' },
      to: { path: '^vscode$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(node_modules|dist)/' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
