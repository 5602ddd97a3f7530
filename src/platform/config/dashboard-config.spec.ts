import { loadConfig } from './app-config.js';

describe('queue dashboard window settings', () => {
  it('shows at most 1000 delivered callbacks, delivered within 1 h, by default', () => {
    expect(loadConfig({}).dashboardKeep).toEqual({ completed: { count: 1000, ageMs: 3_600_000 } });
  });

  it('reads counts and durations', () => {
    const c = loadConfig({ DASHBOARD_KEEP_COMPLETED: '50', DASHBOARD_KEEP_COMPLETED_FOR: '10m' });
    expect(c.dashboardKeep).toEqual({ completed: { count: 50, ageMs: 600_000 } });
  });

  it.each([
    ['DASHBOARD_KEEP_COMPLETED', '-1'],
    ['DASHBOARD_KEEP_COMPLETED', 'many'],
    ['DASHBOARD_KEEP_COMPLETED_FOR', '500ms'],
    ['DASHBOARD_KEEP_COMPLETED_FOR', '1h,2h'],
    ['DASHBOARD_KEEP_COMPLETED_FOR', '7 days'],
  ])('refuses %s=%s, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration: ${name}: `));
  });
});
