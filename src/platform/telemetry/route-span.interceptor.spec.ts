import { routeOf } from './route-span.interceptor.js';

describe('routeOf', () => {
  it.each<[string | string[] | undefined, string | string[] | undefined, string]>([
    ['admin/v1/companies', ':companyId/credit', '/admin/v1/companies/:companyId/credit'],
    ['/v1/companies/', '/', '/v1/companies'],
    ['v1/companies', undefined, '/v1/companies'],
    [undefined, 'health', '/health'],
    [['v1/a', 'v1/b'], [':id', ':id/x'], '/v1/a/:id'],
    [undefined, undefined, '/'],
  ])('%p + %p → %s', (controller, handler, route) => {
    expect(routeOf(controller, handler)).toBe(route);
  });
});
