import { circuitsDescription, DASHBOARD_CSS, dashboardPage, dashboardRequestAllowed } from './dashboard-policy';

describe('queue dashboard policy', () => {
  it.each([
    ['get', '/api/queues', {}, true],
    ['get', '/api/queues/:queueName/:jobId/logs', {}, true],
    ['put', '/api/queues/:queueName/:jobId/retry', { jobState: 'failed' }, true],
    ['put', '/api/queues/:queueName/:jobId/retry', { jobState: 'completed' }, false],
    ['put', '/api/queues/:queueName/retry/:queueStatus', { queueStatus: 'failed' }, true],
    ['put', '/api/queues/:queueName/retry/:queueStatus', { queueStatus: 'completed' }, false],
    ['put', '/api/queues/:queueName/:jobId/retry', { jobState: 'delayed' }, false],
    ['put', '/api/queues/:queueName/:jobId/promote', { jobState: 'delayed' }, true],
    ['put', '/api/queues/:queueName/:jobId/promote', { jobState: 'waiting' }, false],
    ['put', '/api/queues/:queueName/:jobId/promote', { jobState: 'failed' }, false],
    ['put', '/api/queues/:queueName/:jobId/promote', { jobState: 'unknown' }, false],
    ['put', '/api/queues/:queueName/promote', {}, true],
    ['post', '/api/queues/:queueName/add', {}, false],
    ['patch', '/api/queues/:queueName/:jobId/update-data', {}, false],
    ['patch', '/api/queues/:queueName/:jobId/delay', {}, false],
    ['patch', '/api/queues/:queueName/:jobId/priority', {}, false],
    ['put', '/api/queues/:queueName/:jobId/clean', {}, false],
    ['put', '/api/queues/:queueName/clean/:queueStatus', { queueStatus: 'completed' }, false],
    ['put', '/api/queues/:queueName/empty', {}, false],
    ['put', '/api/queues/:queueName/obliterate', {}, false],
    ['put', '/api/queues/:queueName/pause', {}, false],
    ['put', '/api/queues/pause', {}, false],
    ['put', '/api/queues/:queueName/concurrency', {}, false],
    ['put', '/api/queues/:queueName/rate-limit', {}, false],
  ])('%s %s %j → allowed %s', (method, route, params, allowed) => {
    expect(dashboardRequestAllowed(method, route, params)).toBe(allowed);
  });

  it('serves the page without stylesheets from the internet and with the rules hiding switched-off buttons', () => {
    const html =
      '<head><link href="https://fonts.googleapis.com/css2?family=IBM+Plex+Sans" rel="stylesheet">\n<link href="static/css/main.css" rel="stylesheet"></head><body></body>';
    const page = dashboardPage(html);
    expect(page).not.toContain('googleapis');
    expect(page).toContain('<link href="static/css/main.css" rel="stylesheet">');
    expect(page).toContain(`<style id="funding-dashboard">${DASHBOARD_CSS}</style></head>`);
  });

  it('describes the destinations with an open circuit, or none', () => {
    const closed = { origin: 'https://ok.example', state: 'closed', openedAt: null, nextProbeAt: null, lastError: null, waiting: 0 };
    expect(circuitsDescription([closed])).toBe('All destinations closed (healthy).');
    expect(
      circuitsDescription([
        closed,
        { origin: 'https://down.example', state: 'open', openedAt: '2026-11-23T10:00:00.000Z', nextProbeAt: '2026-11-23T10:00:05.000Z', lastError: 'HTTP 503', waiting: 12 },
        { origin: 'https://flaky.example:8443', state: 'half_open', openedAt: '2026-11-23T09:59:00.000Z', nextProbeAt: null, lastError: null, waiting: 0 },
      ]),
    ).toBe(
      'Open circuits (2): https://down.example open since 2026-11-23T10:00:00.000Z, 12 waiting, next probe 2026-11-23T10:00:05.000Z (last error: HTTP 503); ' +
        'https://flaky.example:8443 half-open since 2026-11-23T09:59:00.000Z, 0 waiting, next probe ?.',
    );
  });
});
