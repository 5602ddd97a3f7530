import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { commandLines, DocBlock, docPages, fencedBlocks, ROOT } from './support/doc-blocks.js';
import { buildService, requireExecutable, sparePort } from './support/processes.js';
import { dropRunData, runIdentity, TEST_REDIS_URL } from './support/run-identity.js';
import { until } from './support/until.js';

/**
 * The README's curl flow and the runnable blocks of docs/, run as written, so the pages cannot
 * drift from the code (what can be checked without running is in docs.spec.ts). The flow starts
 * the service itself (`node dist/src/main.js &`) on a database, queue prefix and ports of this test's own;
 * the docs' plain `sh` blocks run after it, in the same shell, with its variables; their `sh dev`
 * blocks are listed by jest.
 */
const [, flowBlock] = fencedBlocks('README.md').filter((b) => b.lang === 'sh' && b.kind === '');
/** The list the README shows the flow ending with. */
const [expectedList] = fencedBlocks('README.md').filter((b) => b.lang === 'text' && b.line > flowBlock.line);
/** The README's way to stop what the flow started. */
const stopCommand = /In that shell, `([^`]+)` stops/.exec(readFileSync(path.join(ROOT, 'README.md'), 'utf8'))![1];
const docs = docPages()
  .filter((f) => f !== 'README.md')
  .flatMap(fencedBlocks);
const where = (b: DocBlock) => `${b.file}:${b.line}`;
/** Plain `sh` blocks of docs/: the partner's view first, then the operators', then any other page's. */
const rank = (b: DocBlock) => ['docs/partners.md', 'docs/operations.md', b.file].indexOf(b.file);
const afterFlow = docs
  .filter((b) => b.lang === 'sh' && b.kind === '')
  .sort((a, b) => rank(a) - rank(b) || a.file.localeCompare(b.file) || a.line - b.line);
const MARK = '@@';

/** Runs a bash script in a process group of its own, so whatever it leaves running can be stopped. */
function bash(script: string, env: Record<string, string>) {
  const child = spawn('bash', ['-c', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const out: string[] = [];
  const err: string[] = [];
  child.stdout.on('data', (d: Buffer) => out.push(d.toString()));
  child.stderr.on('data', (d: Buffer) => err.push(d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => out.join(''), stderr: () => err.join(''), exited };
}

const groupAlive = (pid: number) => {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Stops process groups that are still there: SIGTERM, then SIGKILL after 20 s. */
async function stopGroups(pids: number[]): Promise<void> {
  const alive = () => pids.filter(groupAlive);
  for (const pid of alive()) process.kill(-pid, 'SIGTERM');
  await until(() => alive().length === 0, { timeoutMs: 20_000, what: "the flow's processes to stop" }).catch(() =>
    alive().forEach((pid) => process.kill(-pid, 'SIGKILL')),
  );
}

describe('the README and docs, run as written', () => {
  beforeAll(() => {
    for (const program of ['bash', 'curl', 'jq']) {
      requireExecutable(program, "the README's curl flow uses bash, curl and jq", 'apt-get install -y curl jq', 'jq');
    }
    buildService();
  }, 180_000);

  it("the curl flow starts the service on a fresh database; every callback arrives verified at its first attempt, the docs' commands run after it, and the stop command stops it", async () => {
    const run = { ...runIdentity(), redisUrl: TEST_REDIS_URL };
    const [port, receiverPort, docsReceiverPort] = [await sparePort(), await sparePort(), await sparePort()];
    const script = [
      // Job control, as in the interactive shell the README's block is pasted into: each
      // background job is a process group of its own (what the test stops at the end, if anything is left).
      'set -m -eo pipefail',
      flowBlock.code,
      `echo ${MARK} jobs $(jobs -p | tr '\\n' ' ')`,
      `echo ${MARK} flow done`,
      ...afterFlow.flatMap((b) => [`echo ${MARK} ${where(b)}`, b.code]),
      `echo ${MARK} docs done`,
      // The test checks the partners' receiver meanwhile, against this service.
      'until [ -e "$FLOW_CONTINUE" ]; do sleep 0.1; done',
      ...commandLines(stopCommand),
      `echo ${MARK} stopped`,
    ].join('\n');
    const scratch = mkdtempSync(path.join(os.tmpdir(), 'readme-flow-'));
    const env = {
      FLOW_CONTINUE: path.join(scratch, 'continue'),
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? os.homedir(),
      PORT: String(port),
      RECEIVER_PORT: String(receiverPort),
      DATABASE_URL: run.databaseUrl,
      REDIS_URL: run.redisUrl,
      QUEUE_PREFIX: run.queuePrefix,
    };
    const flow = bash(script, env);
    const pg = new Client({ connectionString: run.databaseUrl });
    // bash's own group, and its jobs' groups once it names them.
    const groups = () => [
      flow.child.pid!,
      ...(new RegExp(`^${MARK} jobs (.*)$`, 'm')
        .exec(flow.stdout())?.[1]
        .trim()
        .split(/\s+/)
        .filter(Boolean)
        .map(Number) ?? []),
    ];
    try {
      const failed = () => {
        const code = flow.child.exitCode;
        if (code !== null || /^REJECTED/m.test(flow.stdout()))
          throw new Error(`the flow ended (${code}):\n${flow.stdout()}\n${flow.stderr()}`);
      };
      await until(() => (failed(), flow.stdout().includes(`${MARK} docs done`)), {
        timeoutMs: 150_000,
        intervalMs: 200,
        what: 'the flow and the docs blocks to run',
      });
      const [flowOut, docsOut] = flow.stdout().split(`${MARK} flow done\n`);

      // What the receiver verified is every callback the flow's changes recorded, once each.
      await pg.connect();
      // The flow's callbacks (docs/partners.md's blocks add a test callback, which is not one of them).
      const recorded = (
        await pg.query<{ id: string; message: number; url: string }>(
          'SELECT id, message, url FROM callbacks WHERE NOT test',
        )
      ).rows;
      const verified = [...flowOut.matchAll(/^verified (\S+) (\S+) (\{.*\})$/gm)].map(([, id, url, body]) => ({
        id,
        url,
        message: (JSON.parse(body) as { message: number }).message,
      }));
      expect(recorded.map((r) => r.message).sort()).toEqual([0, 1, 1, 2, 2, 2, 3, 4]);
      expect(verified.map((v) => v.id).sort()).toEqual(recorded.map((r) => r.id).sort());
      for (const v of verified)
        expect(recorded.find((r) => r.id === v.id)!.url).toBe(`http://127.0.0.1:${receiverPort}${v.url}`);
      // Each at its first attempt: the receiver listened before the first change. (A docs block
      // redelivers one callback meanwhile: a second attempt of it is not a retry.)
      const firsts = (
        await pg.query<{ callback_id: string; status_code: number | null; error: string | null }>(
          'SELECT a.callback_id, a.status_code, a.error FROM callback_attempts a JOIN callbacks c ON c.id = a.callback_id WHERE a.number = 1 AND NOT c.test',
        )
      ).rows;
      expect(firsts.map((a) => `${a.callback_id} ${a.status_code ?? a.error}`).sort()).toEqual(
        recorded.map((r) => `${r.id} 204`).sort(),
      );

      // It ends with the partner's read and the list of delivered callbacks, after every verification.
      expect(flowOut).toMatch(/"creditLimit":"10000\.00".*"borrowedAmount":"2000\.50","creditBalance":"7999\.50"/);
      const lines = flowOut.trimEnd().split('\n');
      const listed = lines.filter((l) => l.startsWith('{"message":'));
      expect(listed).toHaveLength(8);
      for (const l of listed) expect(JSON.parse(l)).toMatchObject({ status: 'delivered', attemptCount: 1 });
      // The README shows that list as it comes.
      expect(listed).toEqual(expectedList.code.split('\n'));
      expect(lines.findIndex((l) => l.startsWith('{"message":'))).toBeGreaterThan(
        Math.max(...verified.map((v) => lines.findIndex((l) => l.includes(`verified ${v.id}`)))),
      );

      // docs/partners.md's test callback reached the README's receiver, verified, at the URL the
      // partner moved the company to; its nightly reconciliation printed every callback once, in order.
      const [test] = (await pg.query<{ id: string; status: string }>('SELECT id, status FROM callbacks WHERE test'))
        .rows;
      expect(test).toEqual({ id: expect.any(String), status: 'delivered' });
      expect(docsOut).toMatch(new RegExp(`^verified ${test.id} /moved \\{"message":0,`, 'm'));
      const reconciled = [...docsOut.matchAll(/^(\{"position":.*\})$/gm)].map(
        ([line]) => JSON.parse(line) as { position: string; id: string },
      );
      expect(reconciled.map((r) => r.id).sort()).toEqual(recorded.map((r) => r.id).sort());
      expect(reconciled.every((r, i) => i === 0 || BigInt(r.position) > BigInt(reconciled[i - 1].position))).toBe(true);

      // Every docs block ran (set -e) and no request of theirs was answered with an error.
      for (const b of afterFlow) expect(docsOut).toContain(`${MARK} ${where(b)}\n`);
      expect(docsOut).not.toMatch(/"statusCode":\s*[45]\d\d/);

      await partnersReceiver(`http://127.0.0.1:${port}`, docsReceiverPort);
      writeFileSync(env.FLOW_CONTINUE, '');
      expect(await flow.exited).toBe(0);
      expect(flow.stdout()).toContain(`${MARK} stopped`);
      // Once the stop command returns, the service and the receiver are gone: nothing of theirs
      // is left running, and neither port answers.
      expect(groups().filter(groupAlive)).toEqual([]);
      for (const p of [port, receiverPort]) await expect(fetch(`http://127.0.0.1:${p}/`)).rejects.toThrow();
    } catch (e) {
      throw new Error(
        `${(e as Error).message}\n--- the flow's output:\n${flow.stdout()}\n--- its errors:\n${flow.stderr()}`,
        { cause: e },
      );
    } finally {
      await stopGroups(groups());
      rmSync(scratch, { recursive: true, force: true });
      await pg.end().catch(() => undefined);
      await dropRunData(run);
    }
  }, 240_000);

  it("the flow's waits are bounded: each gives up after its seconds, saying what to check", () => {
    const lines = flowBlock.code.split('\n');
    const from = lines.findIndex((l) => l.startsWith('waitfor() {'));
    const to = lines.findIndex((l, i) => i >= from && l.trimEnd().endsWith('; }'));
    expect(from).toBeGreaterThanOrEqual(0);
    const definition = lines.slice(from, to + 1).join('\n');
    // Every wait of the flow goes through it: no loop of its own.
    const others = lines.filter((l, i) => (i < from || i > to) && /\b(until|while)\b/.test(l.replace(/#.*$/, '')));
    expect(others).toEqual([]);
    expect(lines.filter((l) => /^waitfor \d+ ".+" \S/.test(l)).length).toBe(
      lines.filter((l) => l.startsWith('waitfor ')).length,
    );
    const started = Date.now();
    const run = spawnSync('bash', ['-c', `${definition}\nwaitfor 2 "what to check" false\necho "exit $?"`], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.stdout.trim()).toBe('exit 1');
    expect(run.stderr.trim()).toBe('gave up waiting: what to check');
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(
      spawnSync(
        'bash',
        [
          '-c',
          `${definition}\nn=0; second() { n=$((n + 1)); [ $n -ge 2 ]; }; waitfor 5 "x" second; echo "exit $? after $n"`,
        ],
        { encoding: 'utf8' },
      ).stdout.trim(),
    ).toBe('exit 0 after 2');
  });

  it('TEST_WITHOUT and the sh dev commands of docs/ select what they say', () => {
    const jest = (args: string[], extra: Record<string, string> = {}) =>
      execFileSync(process.execPath, [path.join(ROOT, 'node_modules/jest/bin/jest.js'), ...args, '--listTests'], {
        cwd: ROOT,
        env: { ...process.env, TEST_WITHOUT: '', ...extra },
        encoding: 'utf8',
      })
        .split('\n')
        .filter(Boolean)
        .map((f) => path.relative(ROOT, f));
    const everything = jest([]);
    const readmeText = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const [, needs] = /`TEST_WITHOUT=(\S+) npm test`/.exec(readmeText)!;
    const without = jest([], { TEST_WITHOUT: needs });
    const leftOut = everything.filter((f) => !without.includes(f)).sort();
    // Exactly the files that use what TEST_WITHOUT names: Chromium, redis-server, jq (this file), the registry, openssl, python3.
    const uses =
      /openBrowser\(|startRedis\(|startRedisCluster\(|startClusterNodesWithoutSlots\(|requireRegistry\(|requireExecutable\('jq'|'jq'\]|new TestCertificates\(|TlsReceiver\.start\(/;
    const needing = everything
      .filter((f) => f.startsWith('test/') && uses.test(readFileSync(path.join(ROOT, f), 'utf8')))
      .sort();
    expect(leftOut).toEqual(needing);
    expect(leftOut).toEqual(
      expect.arrayContaining([
        'test/dashboard.e2e-spec.ts',
        'test/packaging.e2e-spec.ts',
        'test/readme.e2e-spec.ts',
        'test/redis-cluster.e2e-spec.ts',
      ]),
    );

    for (const b of docs.filter((x) => x.lang === 'sh' && x.kind === 'dev')) {
      for (const line of commandLines(b.code)) {
        const m = /^((?:[A-Z_]+=\S+\s+)*)(npm test|npx jest(?:\s+(.*))?|bash \.ci\/run)$/.exec(line);
        expect(`${where(b)}: ${line}`).toBe(`${where(b)}: ${m ? line : 'npm test, npx jest … or bash .ci/run'}`);
        if (m![2] === 'bash .ci/run') continue; // CI itself
        const env = Object.fromEntries(
          m![1]
            .trim()
            .split(/\s+/)
            .filter(Boolean)
            .map((kv) => kv.split('=') as [string, string]),
        );
        const listed = jest(m![3] ? m![3].split(/\s+/) : [], env);
        expect(`${where(b)}: ${line} lists ${listed.length} files`).not.toMatch(/ lists 0 files$/);
      }
    }
  }, 60_000);
});

/**
 * docs/partners.md's Node receiver, as written: it verifies a real callback, prints a redelivery
 * (same webhook-id) once, and refuses a forged one with 401.
 */
async function partnersReceiver(service: string, port: number): Promise<void> {
  const [snippet] = fencedBlocks('docs/partners.md').filter((b) => b.lang === 'js');
  const admin = `Bearer ${/ADMIN_TOKEN=(\S+)/.exec(flowBlock.code)![1]}`;
  const call = async (method: string, url: string, auth: string, body?: object) => {
    const res = await fetch(`${service}${url}`, {
      method,
      headers: { authorization: auth, 'content-type': 'application/json' },
      body: body && JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };
  const partner = await call('POST', '/admin/v1/partners', admin, { name: 'Docs Receiver Ltd' });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'partners-receiver-'));
  writeFileSync(path.join(dir, 'receiver.js'), snippet.code);
  const receiver = spawn(process.execPath, [path.join(dir, 'receiver.js')], {
    env: {
      PATH: process.env.PATH ?? '',
      NODE_PATH: path.join(ROOT, 'node_modules'),
      SECRET: String(partner.signingSecret),
      PORT: String(port),
      HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  receiver.stdout.on('data', (d: Buffer) => (out += d.toString()));
  receiver.stderr.on('data', (d: Buffer) => (out += d.toString()));
  try {
    // Listening once it answers (an unsigned request: 401).
    await until(
      () =>
        fetch(`http://127.0.0.1:${port}/`).then(
          (r) => r.status === 401,
          () => false,
        ),
      { timeoutMs: 10_000, what: "the partners' receiver to listen" },
    );
    const key = `Bearer ${String(partner.apiKey)}`;
    const company = await call('POST', '/v1/companies', key, {
      name: 'Docs Receiver Co',
      status_callback: `http://127.0.0.1:${port}/hooks/funding`,
    });
    await call('PATCH', `/admin/v1/companies/${String(company.id)}/credit`, admin, { repaymentTermDays: 45 });
    const callback = async () =>
      (
        (await call('GET', `/v1/callbacks?companyId=${String(company.id)}`, key)).items as {
          id: string;
          status: string;
        }[]
      )[0];
    await until(async () => (await callback())?.status === 'delivered', {
      timeoutMs: 20_000,
      what: "the partners' receiver to take the callback",
    });
    const { id } = await callback();
    const attempts = async () =>
      (await call('GET', `/v1/callbacks/${id}`, key)) as { status: string; attempts: { statusCode: number | null }[] };
    expect((await attempts()).attempts.map((a) => a.statusCode)).toEqual([204]);
    await call('POST', `/v1/callbacks/${id}/redeliver`, key);
    await until(
      async () => {
        const c = await attempts();
        return c.status === 'delivered' && c.attempts.length === 2;
      },
      { timeoutMs: 20_000, what: 'the redelivery to be answered' },
    );
    expect((await attempts()).attempts.map((a) => a.statusCode)).toEqual([204, 204]);
    const forged = await fetch(`http://127.0.0.1:${port}/hooks/funding`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': 'msg_forged',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': 'v1,Zm9yZ2Vk',
      },
      body: '{"message":0}',
    });
    expect(forged.status).toBe(401);
    // Printed once, though delivered twice; the forged one not at all.
    expect(out.trim().split('\n')).toEqual([`callback ${id} message 0 company ${String(company.id)}`]);
  } catch (e) {
    const state = await Promise.all(
      ['/admin/v1/callbacks?limit=3', '/admin/v1/destinations'].map((u) =>
        call('GET', u, admin).then(JSON.stringify, String),
      ),
    );
    const cause = ((e as Error).cause as Error | undefined)?.message ?? '';
    throw new Error(
      `${(e as Error).message} ${cause}\n--- docs/partners.md's receiver printed:\n${out}\n--- the service's state:\n${state.join('\n')}`,
      { cause: e },
    );
  } finally {
    receiver.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}
