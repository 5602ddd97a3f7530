import { PORTAL_MAX_HOURS } from '../partners/index.js';

/** The session cookie's name and the attributes it is set (and cleared) with. */
export interface PortalCookie {
  name: string;
  options: { path: string; httpOnly: true; sameSite: 'strict'; secure: boolean; maxAge: number };
}

/**
 * The session cookie, by PORTAL_BASE_URL's scheme. Over https: `__Host-portal_session`, `Secure`,
 * `Path=/`: a browser takes a cookie of that name only from this very origin over https, so no other
 * origin of the site (a sibling subdomain, plain http) can set one beside it. Over http (a
 * developer's machine, where a browser would not keep a `Secure` cookie): `portal_session`,
 * `Path=/portal`. Both `HttpOnly` and `SameSite=Strict`; its value is a credential (stored hashed).
 */
export function portalCookie(baseUrl: string): PortalCookie {
  const common = { httpOnly: true, sameSite: 'strict', maxAge: PORTAL_MAX_HOURS * 3600 } as const;
  return baseUrl.startsWith('https:')
    ? { name: '__Host-portal_session', options: { ...common, path: '/', secure: true } }
    : { name: 'portal_session', options: { ...common, path: '/portal', secure: false } };
}

/**
 * Every value a `Cookie` header gives the cookie `name`, in its order. A browser sends each cookie of
 * that name it holds (one a page of the same site set for a deeper path comes first), so the
 * session is looked up among them all, not by whichever comes first (PortalSessions.find).
 */
export function cookieValues(header: string | undefined, name: string): string[] {
  if (!header) return [];
  return header.split(';').flatMap((pair) => {
    const at = pair.indexOf('=');
    if (at < 0 || pair.slice(0, at).trim() !== name) return [];
    return [
      pair
        .slice(at + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1'),
    ];
  });
}
