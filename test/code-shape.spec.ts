/**
 * What keeps src/ readable, read from the source: no file over 300 lines, no class over 200, no line
 * over 120 characters, no SQL on the callback tables outside the callback store (docs/architecture.md, "Module layout"). The module boundaries themselves are
 * dependency-cruiser's (.dependency-cruiser.cjs, `npm run depcruise` in `npm test`).
 * And one thing of test/: the end-to-end suites boot the app through one harness only.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './support/doc-blocks.js';
import { sources } from './support/source-files.js';

/** Each class declared at the start of a line, and how many lines it spans (to its closing brace at the same indentation). */
export function classLengths(text: string): { name: string; lines: number }[] {
  const lines = text.split('\n');
  const found: { name: string; lines: number }[] = [];
  lines.forEach((line, i) => {
    const m = /^(\s*)(?:export\s+)?(?:abstract\s+)?class\s+(\w+)/.exec(line);
    if (!m) return;
    const end = line.trimEnd().endsWith('}') ? i : lines.findIndex((l, j) => j > i && l === `${m[1]}}`);
    found.push({ name: m[2], lines: (end < 0 ? lines.length : end) - i + 1 });
  });
  return found;
}

/** The one file whose SQL writes a callback's status: the lifecycle's events as SQL. */
const LIFECYCLE = 'src/callbacks/store/lifecycle.ts';

/**
 * The writes of a `status` column in a text: an assignment in a SET list, a fragment of one (a
 * template that starts with `status = CASE` or with `status = '…',`, which no condition does), an
 * INSERT INTO callbacks naming the column, or a write through the ORM's Callback entity.
 */
export function statusWrites(text: string): string[] {
  const ways = [
    /(?:\bSET\s+|,\s*)status\s*=[^\n]*/g,
    /`\s*status\s*=\s*(?:CASE\b|'\w+'\s*,)[^\n]*/g,
    /INSERT INTO callbacks\s*\([^)]*\bstatus\b[^)]*\)/g,
    /\.(?:update|insert|save|upsert)\(\s*Callback\b[^\n]*/g,
  ];
  return ways.flatMap((re) => [...text.matchAll(re)].map((m) => m[0].trim()));
}

describe('the shape of src/', () => {
  const files = sources('src');

  it('has no file over 300 lines', () => {
    const long = files
      .map((f) => [f, readFileSync(path.join(ROOT, f), 'utf8').split('\n').length] as const)
      .filter(([, n]) => n > 300);
    expect(long).toEqual([]);
  });

  it('has no class over 200 lines', () => {
    const long = files.flatMap((f) =>
      classLengths(readFileSync(path.join(ROOT, f), 'utf8'))
        .filter((c) => c.lines > 200)
        .map((c) => `${f}: ${c.name} (${c.lines})`),
    );
    expect(long).toEqual([]);
  });

  it('has no SQL on the callback tables outside the callback store (src/callbacks/store/) and the migrations', () => {
    const tables =
      /\b(FROM|INTO|UPDATE|JOIN|TABLE)\s+(callbacks|destinations|callback_attempts|callback_destinations|operational_events|failure_notices)\b|getRepository\((Callback|CallbackAttempt)\)|\.(findOne|find|findOneByOrFail)\((Callback|CallbackAttempt)\b/;
    const outside = files
      .filter((f) => !f.startsWith('src/callbacks/store/') && !f.startsWith('src/platform/database/migrations/'))
      .flatMap((f) =>
        readFileSync(path.join(ROOT, f), 'utf8')
          .split('\n')
          .map((line, i) => [f, i + 1, line] as const),
      )
      .filter(([, , line]) => tables.test(line))
      .map(([f, n, line]) => `${f}:${n}: ${line.trim()}`);
    expect(outside).toEqual([]);
    // The check sees SQL where it is.
    expect(tables.test('SELECT 1 FROM callbacks WHERE id = $1')).toBe(true);
  });

  it("writes a callback's status in the SQL of the store's lifecycle alone (src/callbacks/store/lifecycle.ts)", () => {
    const outside = files
      // The migrations are history: each ran once, as it was written.
      .filter((f) => f !== LIFECYCLE && !f.startsWith('src/platform/database/migrations/'))
      .flatMap((f) => statusWrites(readFileSync(path.join(ROOT, f), 'utf8')).map((w) => `${f}: ${w}`));
    expect(outside).toEqual([]);
    // The check sees each way of writing it.
    for (const text of [
      "UPDATE callbacks SET status = 'failed' WHERE id = $1",
      "const RESET = `status = CASE WHEN status = 'sending' THEN 'sending' ELSE 'pending' END, next_attempt_at = now()`;",
      "const ADMITTED = `status = 'sending', lease_until = now()`;",
      "UPDATE callbacks c\n   SET url = $2,\n       status = CASE WHEN c.status = 'sending' THEN c.status ELSE 'failed' END",
      'UPDATE callbacks SET next_attempt_at = NULL, status = ${s} WHERE id = $1',
      "INSERT INTO callbacks (id, partner_id, status)\n VALUES ($1, $2, 'pending')",
      "await m.update(Callback, { id }, { status: 'failed' });",
    ])
      expect([text, statusWrites(text).length]).toEqual([text, 1]);
    expect(statusWrites("SELECT id FROM callbacks WHERE status = 'pending' AND c.status IN ('sending')")).toEqual([]);
    expect(statusWrites("failed: { where: () => `status = 'failed'`, key: 'seq' }")).toEqual([]);
  });

  it('imports no SQL text from the callback store outside it: the service calls its methods, tests read its catalogue', async () => {
    // What the store exports that is SQL text: a string of SQL, or a function that returns it.
    const sql = /\b(SELECT|INSERT|UPDATE|DELETE|FROM)\b/;
    const store = sources('src/callbacks/store').filter((f) => !f.endsWith('/statements.ts'));
    const sqlText = new Set<string>();
    for (const f of store) {
      const mod = (await import(path.join(ROOT, f))) as Record<string, unknown>;
      for (const [name, value] of Object.entries(mod))
        if (typeof value === 'string' && sql.test(value)) sqlText.add(name);
      const text = readFileSync(path.join(ROOT, f), 'utf8');
      for (const m of text.matchAll(
        /export (?:async )?function (\w+)[^{]*\)\s*:\s*(?:string|\{ ?(?:name: string; )?text: string)/g,
      ))
        sqlText.add(m[1]);
      for (const m of text.matchAll(/export const (\w+) = \([^)]*\)(?:: string)? =>\s*`/g)) sqlText.add(m[1]);
    }
    // The check sees the store's SQL text as it is exported.
    expect([...sqlText]).toEqual(
      expect.arrayContaining(['ADMIT', 'LOAD', 'DESTINATION_COLUMNS', 'recordFor', 'saveDestinations', 'emitEvents']),
    );
    const outside = [...sources('src'), ...sources('test'), ...sources('bench'), ...sources('scripts')].filter(
      (f) => !f.startsWith('src/callbacks/store/'),
    );
    const found = outside.flatMap((f) => {
      const text = readFileSync(path.join(ROOT, f), 'utf8');
      const imports = [
        ...text.matchAll(
          /(?:import\s*(?:type\s*)?\{([^}]*)\}\s*from|const\s*\{([^}]*)\}\s*=\s*await\s+import\()\s*'([^']*callbacks\/store\/[^']*)'/g,
        ),
      ];
      return imports.flatMap((m) => {
        const names = (m[1] ?? m[2])
          .split(',')
          .map(
            (n) =>
              n
                .trim()
                .replace(/^type\s+/, '')
                .split(/\s+as\s+/)[0],
          )
          .filter(Boolean);
        const fromCatalogue = m[3].endsWith('/statements.js');
        // The catalogue is for tests and scripts; the service runs the store's methods.
        if (fromCatalogue) return f.startsWith('src/') ? [`${f}: imports the store's catalogue of statements`] : [];
        return names.filter((n) => sqlText.has(n)).map((n) => `${f}: imports ${n} from ${m[3]}`);
      });
    });
    expect(found).toEqual([]);
  });

  it('measures a class from its declaration to its closing brace', () => {
    expect(classLengths('export class A {\n  x = 1;\n}\n\nclass B {}\n  class C {\n  }\n')).toEqual([
      { name: 'A', lines: 3 },
      { name: 'B', lines: 1 },
      { name: 'C', lines: 2 },
    ]);
  });
});

/** A call that sends SQL: a statement given as text, a query builder's, or one TypeORM builds for an entity. */
const RUNS_SQL = new RegExp(
  [
    String.raw`\.query\(`,
    String.raw`\.(createQueryBuilder|getRepository)\(`,
    String.raw`\.(getMany|getOne|getRawMany|getRawOne|getCount|execute)\(`,
    String.raw`\b(m|em|manager|db|tx)\.(find\w*|save|insert|update|delete|upsert|count\w*|exists\w*|increment|decrement|remove)\(`,
  ].join('|'),
);

/**
 * The exported free functions of a text that send SQL (RUNS_SQL), each read from its declaration
 * to its end.
 */
export function sqlFunctions(text: string): string[] {
  const lines = text.split('\n');
  const found: string[] = [];
  lines.forEach((line, i) => {
    const m =
      /^export (?:async )?function\s+(\w+)|^export const (\w+) = (?:async )?(?:\([^)]*\)|\w+)(?:: [^=]+)? =>/.exec(
        line,
      );
    if (!m) return;
    // To its closing brace at the start of a line, or (an arrow's expression) to the `;` that ends it.
    const end = /;\s*$/.test(line)
      ? i
      : lines.findIndex((l, j) => j > i && (/^[})]/.test(l) || (/;\s*$/.test(l) && !/^\s/.test(lines[j + 1] ?? ''))));
    const body = lines.slice(i, (end < 0 ? lines.length : end) + 1).join('\n');
    if (RUNS_SQL.test(body)) found.push(m[1] ?? m[2]);
  });
  return found;
}

/** What a repository or a store is: a class of a *.repository.ts file or of the callback store (src/callbacks/store/). */
const repositoryClasses = (): Set<string> =>
  new Set(
    sources('src')
      .filter((f) => f.endsWith('.repository.ts') || f.startsWith('src/callbacks/store/'))
      .flatMap((f) => [...readFileSync(path.join(ROOT, f), 'utf8').matchAll(/^export class (\w+)/gm)].map((m) => m[1])),
  );

describe('repositories (docs/architecture.md, "Repositories own their statements")', () => {
  // Everything that is not a test: the service, the benchmark, the scripts.
  const code = [...sources('src'), ...sources('bench'), ...sources('scripts')].filter(
    (f) => !f.startsWith('src/platform/database/migrations/'),
  );

  it('are made by Nest alone: no repository or store object is made with `new` outside tests', () => {
    const classes = repositoryClasses();
    expect([...classes]).toEqual(expect.arrayContaining(['OperatorRepository', 'LockedRows', 'AdmissionStore']));
    const made = code.flatMap((f) =>
      [...readFileSync(path.join(ROOT, f), 'utf8').matchAll(/\bnew (\w+)\s*\(/g)]
        .filter((m) => classes.has(m[1]))
        .map((m) => `${f}: new ${m[1]}`),
    );
    expect(made).toEqual([]);
  });

  // The benchmark's scenarios seed their rows as the tests do.
  it('hold every statement: no exported free function in src/ sends SQL (migrations are history)', () => {
    const found = code
      .filter((f) => f.startsWith('src/'))
      .flatMap((f) => sqlFunctions(readFileSync(path.join(ROOT, f), 'utf8')).map((n) => `${f}: ${n}`));
    expect(found).toEqual([]);
  });

  it('sees a free function that sends SQL, whichever way', () => {
    const texts = [
      "export async function lock(m: EntityManager) {\n  await m.query('SELECT 1');\n}\n",
      'export function one(m: EntityManager, id: string) {\n  return m.findOne(Company, { where: { id } });\n}\n',
      "export const list = (db: DataSource) =>\n  db.getRepository(Company).createQueryBuilder('c').getMany();\n",
      "export const ping = async (c: Client) => c.query('SELECT 1');\n",
      'export async function save(m: EntityManager, row: Company) {\n  await m.save(row);\n}\n',
    ];
    for (const text of texts) expect([text, sqlFunctions(text).length]).toEqual([text, 1]);
    expect(sqlFunctions('export function pick(xs: X[]) {\n  return xs.find((x) => x.ok);\n}\n')).toEqual([]);
  });
});

/** What boots the app in this process: the testing module, Nest's factory, the app module itself. */
export const BOOTS_THE_APP =
  /@nestjs\/testing|\bNestFactory\b|\bcreateTestingModule\b|\bcreateNestApplication\b|\bAppModule\b|\bsetupApp\b|['"][./]*(support\/)?test-app(\.js)?['"]/;

describe('the shape of test/', () => {
  // test/support/test-app.ts boots the app, and is harness.ts's private part: every other file
  // that wants the app running calls harness(), so a suite's set-up has one place to grow.
  const BOOTERS = ['test/support/harness.ts', 'test/support/test-app.ts'];
  const testFiles = [
    ...sources('test'),
    ...readdirSync(path.join(ROOT, 'test'))
      .filter((f) => f.endsWith('.spec.ts') && f !== 'code-shape.spec.ts')
      .map((f) => `test/${f}`),
  ];

  it('boots the app only in the harness: no suite or helper imports test-app.ts, @nestjs/testing, NestFactory or AppModule', () => {
    const outside = testFiles
      .filter((f) => !BOOTERS.includes(f))
      .flatMap((f) =>
        readFileSync(path.join(ROOT, f), 'utf8')
          .split('\n')
          .map((line, i) => [f, i + 1, line] as const),
      )
      .filter(([, , line]) => BOOTS_THE_APP.test(line))
      .map(([f, n, line]) => `${f}:${n}: ${line.trim()}`);
    expect(outside).toEqual([]);
  });

  it('sees each way of booting the app', () => {
    for (const line of [
      "import { startTestApp } from './support/test-app.js';",
      "import { createPartner } from './test-app.js';",
      "import { Test } from '@nestjs/testing';",
      'const app = await NestFactory.create(AppModule);',
      'Test.createTestingModule({ imports: [x] })',
    ])
      expect([line, BOOTS_THE_APP.test(line)]).toEqual([line, true]);
    expect(BOOTS_THE_APP.test("import { harness } from './support/harness.js';")).toBe(false);
  });
});

/** Every file under `dir`, at any depth. */
const everyFile = (dir: string): string[] =>
  readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? everyFile(`${dir}/${e.name}`) : [`${dir}/${e.name}`],
  );

/** The lines of a text wider than 120 characters, as `<file>:<line>: <width>`. */
export function wideLines(file: string, text: string): string[] {
  return text
    .split('\n')
    .map((line, i) => [i + 1, [...line].length] as const)
    .filter(([, width]) => width > 120)
    .map(([n, width]) => `${file}:${n}: ${width}`);
}

describe('the width of src/', () => {
  // The SQL snapshots (*.sql) are written by `npm run sql:snapshot`: each statement as the code has it.
  const files = everyFile('src').filter((f) => !f.endsWith('.sql'));
  const read = (f: string) => readFileSync(path.join(ROOT, f), 'utf8');

  it('no line in src is wider than 120 characters', () => {
    const wide = files.flatMap((f) => wideLines(f, read(f)));
    expect(wide).toEqual([]);
  });

  it('measures a line in characters', () => {
    expect(wideLines('a.ts', `${'x'.repeat(120)}\n${'—'.repeat(120)}\n  ${'x'.repeat(119)}`)).toEqual(['a.ts:3: 121']);
  });
});
