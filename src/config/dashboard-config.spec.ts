import { loadConfig } from './app-config.js';

describe('queue dashboard window settings', () => {
  it('keeps 1000 completed jobs for 1 h and 10000 failed ones for 7 days by default', () => {
    expect(loadConfig({}).dashboardKeep).toEqual({
      completed: { count: 1000, ageMs: 3_600_000 },
      failed: { count: 10_000, ageMs: 7 * 24 * 3_600_000 },
    });
  });

  it('reads counts and durations', () => {
    const c = loadConfig({ DASHBOARD_KEEP_COMPLETED: '50', DASHBOARD_KEEP_COMPLETED_FOR: '10m', DASHBOARD_KEEP_FAILED: '0', DASHBOARD_KEEP_FAILED_FOR: '48h' });
    expect(c.dashboardKeep).toEqual({ completed: { count: 50, ageMs: 600_000 }, failed: { count: 0, ageMs: 48 * 3_600_000 } });
  });

  it.each([
    ['DASHBOARD_KEEP_COMPLETED', '-1'],
    ['DASHBOARD_KEEP_COMPLETED', 'many'],
    ['DASHBOARD_KEEP_COMPLETED_FOR', '500ms'],
    ['DASHBOARD_KEEP_COMPLETED_FOR', '1h,2h'],
    ['DASHBOARD_KEEP_FAILED_FOR', '7 days'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration: ${name}: `));
  });
});
