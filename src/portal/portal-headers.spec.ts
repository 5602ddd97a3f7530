import { underPortal } from './portal-headers';

describe("the portal's headers", () => {
  it('go on every target under /portal, however the router would read its first segment', () => {
    const under = ['/portal', '/portal/', '/portal/x?y=1', '/PORTAL/x', '/%70ortal/x', '/P%4FRTAL', '/portal?token=x'];
    under.push('/portal;x', 'http://h.example/portal/x');
    expect(under.filter((t) => !underPortal(t))).toEqual([]);
  });

  it('and on nothing else', () => {
    const elsewhere = ['/', '/portals', '/portal.css', '/v1/portal', '/v1/partner/portal-links', '/admin/queues'];
    elsewhere.push('http://h.example/v1/x?portal');
    expect(underPortal(undefined)).toBe(false);
    expect(elsewhere.filter((t) => underPortal(t))).toEqual([]);
  });
});
