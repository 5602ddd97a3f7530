// Jest runs in CommonJS mode; swc transforms our TypeScript and every ES module in
// node_modules (NestJS 12 and got are ESM): see docs/development.md, "Versions".
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      keepClassNames: true,
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  },
];
const common = {
  transform: { '^.+\\.(t|j|mj|cj)s$': swc },
  transformIgnorePatterns: [],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testEnvironment: 'node',
};

/**
 * End-to-end test files that need more than PostgreSQL and Redis, by what they need. Each fails
 * at once, naming what to install, when that is missing (test/support); TEST_WITHOUT=<need>[,…]
 * leaves its files out for a machine that lacks it. `npm test` and .ci/run run them all.
 */
const NEEDS = {
  chromium: ['dashboard', 'dashboard-origin', 'portal-browser', 'portal-pages-browser', 'portal-sign-in-browser'],
  'redis-server': ['redis-cluster', 'delivery-faults', 'delivery-restarts', 'startup'],
  jq: ['readme'],
  registry: ['packaging'],
  openssl: ['client-certificate-checks', 'client-certificate-delivery', 'sealed-rows'],
  python3: ['client-certificate-delivery'],
};
const without = (process.env.TEST_WITHOUT ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
for (const need of without) {
  if (!NEEDS[need]) throw new Error(`TEST_WITHOUT: "${need}" is none of ${Object.keys(NEEDS).join(', ')}`);
}
const leftOut = without.flatMap((need) => NEEDS[need].map((file) => `<rootDir>/test/${file}\\.e2e-spec\\.ts$`));

module.exports = {
  // Global, not per project: Jest ignores testTimeout inside `projects`. Generous because the
  // end-to-end tests wait on real deliveries (each wait has its own, shorter deadline).
  testTimeout: 60000,
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/scripts/**/*.spec.ts', '<rootDir>/test/*.spec.ts'],
    },
    {
      ...common,
      displayName: 'e2e',
      testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'],
      testPathIgnorePatterns: ['/node_modules/', ...leftOut],
    },
  ],
};
