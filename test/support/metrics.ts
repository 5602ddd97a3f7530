import type { TestApp } from './harness.js';

/**
 * One series' value in the service's /metrics (`name` or `name{label="value"}`, as exposed);
 * undefined when it exports no such series, as for a labelled counter never incremented yet: the
 * caller says whether that counts as 0.
 */
export async function metric(t: TestApp, series: string): Promise<number | undefined> {
  const text = (await t.http().get('/metrics').expect(200)).text;
  const m = new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}
