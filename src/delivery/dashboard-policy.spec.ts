import { DASHBOARD_CSS, dashboardPage, dashboardRequestAllowed } from './dashboard-policy';

describe('queue dashboard policy', () => {
  it.each([
    ['get', '/api/queues', {}, true],
    ['get', '/api/queues/:queueName/:jobId/logs', {}, true],
    ['put', '/api/queues/:queueName/:jobId/retry', { jobState: 'failed' }, true],
    ['put', '/api/queues/:queueName/:jobId/retry', { jobState: 'completed' }, false],
    ['put', '/api/queues/:queueName/retry/:queueStatus', { queueStatus: 'failed' }, true],
    ['put', '/api/queues/:queueName/retry/:queueStatus', { queueStatus: 'completed' }, false],
    ['put', '/api/queues/:queueName/:jobId/promote', {}, true],
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
});
