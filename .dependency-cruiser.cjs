/**
 * The module boundaries of src/ (docs/architecture.md, "Modules"), checked by dependency-cruiser
 * in `npm test`. Each folder under src/ is one module; another module may import only its
 * index.ts; no cycles; and every arrow points down the layers below (platform at the bottom,
 * the files at the root of src/ on top).
 */
const LAYERS = [
  ['platform'],
  ['egress'],
  ['operators'],
  ['partners'],
  ['callbacks'],
  ['operations'],
  ['delivery'],
  ['funding'],
  ['portal'],
];
const MODULES = LAYERS.flat();
const any = (names) => `^src/(${names.join('|')})/`;

/** For each layer, the modules it may not import: those of its own layer (but itself) and above. */
const layering = LAYERS.flatMap((layer, i) =>
  layer.map((name) => ({
    name: `${name}-imports-only-below`,
    severity: 'error',
    comment: `${name}/ sits in layer ${i} (.dependency-cruiser.cjs, LAYERS): it may import only modules of the layers below.`,
    from: { path: `^src/${name}/` },
    to: { path: any([...layer.filter((n) => n !== name), ...LAYERS.slice(i + 1).flat()]) },
  })),
);

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'A cycle means two modules are one: merge them or split out what both need.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'modules-only',
      severity: 'error',
      comment: 'Every folder under src/ is one of the modules in LAYERS.',
      from: { path: '^src/[^/]+/' },
      to: { path: '^src/[^/]+/', pathNot: any(MODULES) },
    },
    {
      name: 'private-to-its-module',
      severity: 'error',
      comment: "Another module's files are private: import its index.ts, which exports what it offers.",
      from: { path: '^src/([^/]+)/' },
      to: { path: '^src/[^/]+/', pathNot: ['^src/$1/', '^src/[^/]+/index\\.ts$'] },
    },
    {
      name: 'root-imports-modules',
      severity: 'error',
      comment:
        'The files at the root of src/ put the modules together through their index.ts (main.ts loads tracing first, alone: it must run before http, pg and ioredis load).',
      from: { path: '^src/[^/]+\\.ts$' },
      to: { path: '^src/[^/]+/', pathNot: ['^src/[^/]+/index\\.ts$', '^src/platform/telemetry/tracing\\.ts$'] },
    },
    {
      name: 'no-root-below',
      severity: 'error',
      comment: 'The files at the root of src/ put the application together; no module imports them.',
      from: { path: '^src/[^/]+/' },
      to: { path: '^src/[^/]+\\.ts$' },
    },
    {
      name: 'repositories-of-their-module',
      severity: 'error',
      comment:
        "A module's repositories and the row types beside them (its store/ folder, *.repository.ts, *-store.ts) are its own: another module calls its face's services, never its statements.",
      from: { path: '^src/([^/]+)/' },
      to: { path: ['^src/[^/]+/store/', '^src/.+\\.repository\\.ts$', '^src/.+-store\\.ts$'], pathNot: '^src/$1/' },
    },
    ...layering,
    {
      name: 'delivery-core-knows-no-api',
      severity: 'error',
      comment:
        'The delivery core (delivery/*.ts) is reached through the callback store and AdmissionSignal; the routes and the dashboard over it (destinations/, test-callbacks/, dashboard/) sit on top of it, never under.',
      from: { path: '^src/delivery/[^/]+\\.ts$', pathNot: '^src/delivery/(index|delivery\\.module)\\.ts$' },
      to: { path: '^src/delivery/(destinations|test-callbacks|dashboard)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.spec\\.ts$' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
    reporterOptions: {
      // `npm run modules:graph`: one box per module folder, the root files each their own.
      archi: {
        collapsePattern: '^src/[^/]+/|^src/[^/]+\\.ts$',
        theme: { graph: { rankdir: 'TB', splines: 'ortho', ranksep: '0.4' } },
      },
    },
  },
};
