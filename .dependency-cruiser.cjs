// The layers of the tree, as rules a tool keeps (make test runs `depcruise`; docs/architecture.md says why each
// layer sits where it does). A path is relative to the repository's root.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'inner-layers-never-reach-http-or-startup',
      comment: 'Configuration, the domain and the store know nothing of HTTP or of how the service starts: both sit on top of them.',
      severity: 'error',
      from: { path: '^server/(config[^/]*\\.ts|domain/|db/)' },
      to: { path: '^server/(http|startup|handlers)/' },
    },
    {
      name: 'domain-never-reaches-the-store',
      comment: 'The domain states what a repository does (domain/user-repository.ts); db/ implements it.',
      severity: 'error',
      from: { path: '^server/domain/' },
      to: { path: '^server/db/' },
    },
    {
      name: 'http-never-reaches-handlers',
      comment: 'Routing calls the handlers through the generated interface (generated/server/handlers.ts), which server.ts binds.',
      severity: 'error',
      from: { path: '^server/http/' },
      to: { path: '^server/handlers/' },
    },
    {
      name: 'handlers-never-reach-http',
      comment: "Handlers answer in the domain's terms; HTTP (status lines, headers on the wire, Koa) is the router's.",
      severity: 'error',
      from: { path: '^server/handlers/' },
      to: { path: '^server/http/' },
    },
    {
      name: 'generated-never-reaches-server',
      comment: 'Generated code is made from the contract alone: the server imports it, never the other way round.',
      severity: 'error',
      from: { path: '^generated/' },
      to: { path: '^server/' },
    },
    {
      name: 'client-reaches-server-through-its-one-entry',
      comment:
        'The client package runs in browsers: it takes the server code it shares (the in-memory service, the fetch dispatch) through server/kit.ts alone, which imports nothing Node-only.',
      severity: 'error',
      from: { path: '^client/src/' },
      to: { path: '^server/', pathNot: '^server/kit\\.ts$' },
    },
    {
      name: 'no-circular',
      comment: 'A circle of imports has no layer to read first.',
      severity: 'error',
      from: { path: '^(server|client/src|generated)/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '(^|/)node_modules/|^dist/|^client/dist/' },
  },
};
