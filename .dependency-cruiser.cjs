/**
 * The module boundaries of src/ (docs/architecture.md, "Module layout"), checked by
 * dependency-cruiser in `npm test`: no cycles, shared folders import no feature module, and
 * dependencies point one way (domain → callbacks → database; delivery → egress).
 */
const SHARED = '^src/(common|config|database|http|logging|openapi|telemetry)/';
const FEATURES = '^src/(access|audit|callback-urls|callbacks|companies|dashboard|delivery|destinations|domain|egress|health|idempotency|limit-requests|loans|metrics|operators|partners|retention|test-callbacks|withdrawals)/';
const DOMAIN = '^src/(companies|limit-requests|withdrawals|loans)/';

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'A cycle means two modules are one: merge them or split out what both need.', from: {}, to: { circular: true } },
    {
      name: 'shared-imports-no-feature',
      severity: 'error',
      comment: 'Shared folders (the edge, OpenAPI, logging, telemetry, config, database, primitives) serve every feature and know none.',
      from: { path: SHARED },
      to: { path: FEATURES },
    },
    {
      name: 'shared-imports-no-root',
      severity: 'error',
      comment: 'The files at the root of src/ put the application together; nothing below imports them.',
      from: { path: '^src/[^/]+/' },
      to: { path: '^src/[^/]+\\.ts$' },
    },
    {
      name: 'egress-knows-no-delivery',
      severity: 'error',
      comment: 'How the service reaches a partner knows nothing of queues, callbacks or their states.',
      from: { path: '^src/egress/' },
      to: { path: '^src/(delivery|callbacks|dashboard)/' },
    },
    {
      name: 'domain-knows-no-delivery',
      severity: 'error',
      comment: 'A change records callbacks (callbacks/); how they travel is not its business.',
      from: { path: DOMAIN },
      to: { path: '^src/(delivery|dashboard|egress)/' },
    },
    {
      name: 'callbacks-know-no-domain',
      severity: 'error',
      comment: 'A callback row carries the body and URL captured at the change: callbacks/ never reads a domain repository.',
      from: { path: '^src/callbacks/' },
      to: { path: DOMAIN },
    },
    {
      name: 'delivery-knows-no-api',
      severity: 'error',
      comment: 'The delivery core is reached through the callback store and AdmissionSignal, never through controllers or the dashboard.',
      from: { path: '^src/delivery/' },
      to: { path: '^src/(dashboard|destinations|access)/|\\.controller\\.ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.spec\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
