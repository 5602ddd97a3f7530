import {
  circuitsDescription,
  DASHBOARD_CSS,
  dashboardPage,
  dashboardRefusal,
  EVENT_NOT_REDELIVERED,
  SWITCHED_OFF,
} from './dashboard-policy';

const ALLOWED = null;
const OFF = SWITCHED_OFF;

describe('queue dashboard policy', () => {
  it.each([
    ['get', '/api/queues', {}, ALLOWED],
    ['get', '/api/queues/:queueName/:jobId/logs', {}, ALLOWED],
    ['put', '/api/queues/:queueName/:jobId/retry', { jobState: 'failed', jobKind: 'callback' }, ALLOWED],
    ['put', '/api/queues/:queueName/:jobId/retry', { jobState: 'completed', jobKind: 'callback' }, OFF],
    ['put', '/api/queues/:queueName/:jobId/retry', { jobState: 'delayed', jobKind: 'callback' }, OFF],
    ['put', '/api/queues/:queueName/:jobId/retry', { jobState: 'unknown' }, OFF],
    ['put', '/api/queues/:queueName/retry/:queueStatus', { queueStatus: 'failed' }, ALLOWED],
    ['put', '/api/queues/:queueName/retry/:queueStatus', { queueStatus: 'completed' }, OFF],
    ['put', '/api/queues/:queueName/:jobId/promote', { jobState: 'delayed', jobKind: 'callback' }, ALLOWED],
    ['put', '/api/queues/:queueName/:jobId/promote', { jobState: 'delayed', jobKind: 'operational-event' }, ALLOWED],
    ['put', '/api/queues/:queueName/:jobId/promote', { jobState: 'waiting' }, OFF],
    ['put', '/api/queues/:queueName/:jobId/promote', { jobState: 'failed' }, OFF],
    ['put', '/api/queues/:queueName/:jobId/promote', { jobState: 'unknown' }, OFF],
    ['put', '/api/queues/:queueName/promote', {}, ALLOWED],
    ['post', '/api/queues/:queueName/add', {}, OFF],
    ['patch', '/api/queues/:queueName/:jobId/update-data', {}, OFF],
    ['patch', '/api/queues/:queueName/:jobId/delay', {}, OFF],
    ['patch', '/api/queues/:queueName/:jobId/priority', {}, OFF],
    ['put', '/api/queues/:queueName/:jobId/clean', {}, OFF],
    ['put', '/api/queues/:queueName/clean/:queueStatus', { queueStatus: 'completed' }, OFF],
    ['put', '/api/queues/:queueName/empty', {}, OFF],
    ['put', '/api/queues/:queueName/obliterate', {}, OFF],
    ['put', '/api/queues/pause', {}, OFF],
    ['put', '/api/queues/:queueName/pause', {}, OFF],
    ['put', '/api/queues/:queueName/concurrency', {}, OFF],
    ['put', '/api/queues/:queueName/rate-limit', {}, OFF],
  ] as const)('%s %s %j → refused: %s', (method, route, params, refusal) => {
    expect(dashboardRefusal(method, route, params)).toBe(refusal);
  });

  it("refuses Retry on a failed operational event's delivery, saying why and where the event is read", () => {
    const failedEvent = { jobState: 'failed', jobKind: 'operational-event' } as const;
    const refusal = dashboardRefusal('put', '/api/queues/:queueName/:jobId/retry', failedEvent);
    expect(refusal).toBe(EVENT_NOT_REDELIVERED);
    expect(refusal).toMatch(/operational event is not redelivered/);
    expect(refusal).toContain('GET /admin/v1/partners/{partnerId}/events');
  });

  it('serves the page without stylesheets from the internet and with the rules hiding switched-off buttons', () => {
    const html =
      '<head><link href="https://fonts.googleapis.com/css2?family=IBM+Plex+Sans" rel="stylesheet">\n' +
      '<link href="static/css/main.css" rel="stylesheet"></head><body></body>';
    const page = dashboardPage(html);
    expect(page).not.toContain('googleapis');
    expect(page).toContain('<link href="static/css/main.css" rel="stylesheet">');
    expect(page).toContain(`<style id="funding-dashboard">${DASHBOARD_CSS}</style></head>`);
  });

  it('describes the destinations with an open circuit, or none', () => {
    const closed = {
      origin: 'https://ok.example',
      state: 'closed',
      openedAt: null,
      nextProbeAt: null,
      lastError: null,
      waiting: 0,
    };
    expect(circuitsDescription([closed])).toBe('All destinations closed (healthy).');
    expect(
      circuitsDescription([
        closed,
        {
          origin: 'https://down.example',
          state: 'open',
          openedAt: '2026-11-23T10:00:00.000Z',
          nextProbeAt: '2026-11-23T10:00:05.000Z',
          lastError: 'HTTP 503',
          waiting: 12,
        },
        {
          origin: 'https://flaky.example:8443',
          state: 'half_open',
          openedAt: '2026-11-23T09:59:00.000Z',
          nextProbeAt: null,
          lastError: null,
          waiting: 0,
        },
      ]),
    ).toBe(
      'Open circuits (2): https://down.example open since 2026-11-23T10:00:00.000Z, 12 waiting, ' +
        'next probe 2026-11-23T10:00:05.000Z (last error: HTTP 503); ' +
        'https://flaky.example:8443 half-open since 2026-11-23T09:59:00.000Z, 0 waiting, next probe ?.',
    );
  });
});
