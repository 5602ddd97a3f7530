import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { Metrics } from '../src/operations/metrics.js';
import { OPEN_DESTINATION_SERIES } from '../src/operations/open-destinations-gauge.js';
import { ROOT } from './support/doc-blocks.js';

/**
 * ops/alerts.yml against the rest of the repository: every alert has a runbook entry in
 * docs/operations.md that its runbook_url names, reads only metrics the service exports, and has
 * a firing case in ops/alerts.test.yml. (.ci/run has promtool check the rules and run those cases.)
 */
interface Rule {
  alert: string;
  expr: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** A prom-client metric's declared label names. */
type Labelled = { labelNames: string[] };

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const rules = (parse(read('ops/alerts.yml')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);

/** GitHub's anchor of a heading: lower case, spaces to hyphens, other punctuation dropped. */
const anchor = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');

/**
 * The base every runbook_url starts with: a placeholder the deployment replaces with where it
 * publishes docs/operations.md when it loads the rules, as that page says (its "Alerts" gives the
 * sed command). Absolute, so the committed file is valid as it is and a pager can open the result.
 */
const RUNBOOK_BASE = 'https://runbooks.example.invalid/funding-service/operations';

describe('ops/alerts.yml', () => {
  it('holds alerts, each with a severity, a summary and an absolute runbook_url whose anchor is its entry in docs/operations.md', () => {
    expect(rules.length).toBeGreaterThanOrEqual(5);
    const page = read('docs/operations.md');
    const headings = new Set([...page.matchAll(/^### (.+)$/gm)].map((m) => anchor(m[1])));
    const problems: string[] = [];
    for (const r of rules) {
      if (!['warning', 'critical'].includes(r.labels?.severity))
        problems.push(`${r.alert}: severity "${r.labels?.severity}"`);
      if (!r.annotations?.summary) problems.push(`${r.alert}: no summary`);
      const url = r.annotations?.runbook_url ?? '';
      const absolute = URL.canParse(url) && new URL(url).protocol === 'https:';
      if (!absolute || url !== `${RUNBOOK_BASE}#${anchor(r.alert)}`)
        problems.push(`${r.alert}: runbook_url "${url}" is not ${RUNBOOK_BASE}#${anchor(r.alert)}`);
      if (!headings.has(anchor(r.alert)))
        problems.push(`${r.alert}: no "### ${r.alert}" runbook entry in docs/operations.md`);
    }
    expect(problems).toEqual([]);
    // The page tells the deployment how to replace the placeholder base.
    expect(page).toMatch(
      new RegExp(`sed 's\\|${RUNBOOK_BASE.replace(/[.]/g, '\\.')}\\|https://[^|]+\\|' ops/alerts\\.yml`),
    );
  });

  it('ops/alerts.test.yml expects the same runbook_url as the rules it tests', () => {
    const text = read('ops/alerts.test.yml');
    const urls = [...text.matchAll(/runbook_url: (\S+)/g)].map((m) => m[1]);
    expect(urls.length).toBeGreaterThan(0);
    const byRule = new Set(rules.map((r) => r.annotations.runbook_url));
    expect(urls.filter((u) => !byRule.has(u))).toEqual([]);
  });

  it('reads only metrics the service exports', () => {
    const exported = new Set(
      new Metrics({} as never, {} as never, {} as never).registry.getMetricsAsArray().map((m) => m.name),
    );
    // Registered outside Metrics, by the API processes' destinations service.
    exported.add('funding_destinations_open');
    exported.add('funding_callbacks_waiting');
    const read_ = new Set(rules.flatMap((r) => [...r.expr.matchAll(/\b(funding_[a-z_]+)/g)].map((m) => m[1])));
    expect(read_.size).toBeGreaterThan(0);
    expect([...read_].filter((name) => !exported.has(name))).toEqual([]);
  });

  it('pages on a destination naming its partner and origin, from a gauge of bounded series', () => {
    const rule = rules.find((r) => r.alert === 'FundingDestinationCircuitOpenLong')!;
    expect(rule.expr).toBe('max by (partner, partner_id, origin) (funding_destination_circuit_open_seconds) > 1800');
    expect(rule.annotations.summary).toContain('{{ $labels.partner }}');
    expect(rule.annotations.summary).toContain('{{ $labels.origin }}');
    const registry = new Metrics({} as never, {} as never, {} as never).registry;
    const gauge = registry.getSingleMetric('funding_destination_circuit_open_seconds') as unknown as Labelled;
    expect(gauge.labelNames).toEqual(['partner', 'partner_id', 'origin']);
    expect(OPEN_DESTINATION_SERIES).toBeLessThanOrEqual(20);
  });

  it('has a firing case for every alert in ops/alerts.test.yml', () => {
    const tests = parse(read('ops/alerts.test.yml')) as {
      rule_files: string[];
      tests: { alert_rule_test: { alertname: string; exp_alerts?: unknown[] }[] }[];
    };
    expect(tests.rule_files).toEqual(['alerts.yml']);
    const firing = new Set(
      tests.tests.flatMap((t) =>
        t.alert_rule_test.filter((a) => (a.exp_alerts ?? []).length > 0).map((a) => a.alertname),
      ),
    );
    expect(rules.map((r) => r.alert).filter((a) => !firing.has(a))).toEqual([]);
  });
});
