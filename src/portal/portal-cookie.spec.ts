import { cookieValues, portalCookie } from './portal-cookie';

describe('the portal session cookie', () => {
  it('is __Host- prefixed, Secure, Path=/ at an https base URL; portal_session at Path=/portal over http', () => {
    expect(portalCookie('https://portal.example')).toEqual({
      name: '__Host-portal_session',
      options: { path: '/', secure: true, httpOnly: true, sameSite: 'strict', maxAge: 8 * 3600 },
    });
    expect(portalCookie('http://127.0.0.1:3000')).toEqual({
      name: 'portal_session',
      options: { path: '/portal', secure: false, httpOnly: true, sameSite: 'strict', maxAge: 8 * 3600 },
    });
  });

  it('reads every value of its name in the Cookie header, in order, and nothing of other names', () => {
    const header =
      'portal_session=fss_a; other=x; __Host-portal_session=fss_h;portal_session="fss_b" ; xportal_session=no';
    expect(cookieValues(header, 'portal_session')).toEqual(['fss_a', 'fss_b']);
    expect(cookieValues(header, '__Host-portal_session')).toEqual(['fss_h']);
    expect(cookieValues('portal_session', 'portal_session')).toEqual([]);
    expect(cookieValues(undefined, 'portal_session')).toEqual([]);
  });
});
