import type { TestApp } from './harness.js';

/** The path and query of a link (the app is called in-process, not at PORTAL_BASE_URL). */
export const linkTarget = (url: string) => new URL(url).pathname + new URL(url).search;
/** A link's token, as its Sign in form carries it. */
export const linkToken = (url: string) => new URL(url).searchParams.get('token')!;

/** A link made with the partner's API key. */
export async function portalLink(
  t: TestApp,
  apiKey: string,
  body: object = {},
): Promise<{ url: string; expiresAt: string }> {
  return (await t.as(apiKey, 'post', '/v1/partner/portal-links', body).expect(201)).body as {
    url: string;
    expiresAt: string;
  };
}

/** A link's Sign in as a browser sends it from the link's page: a form POST from the portal's own origin. */
export function pressSignIn(
  t: TestApp,
  token: string,
  headers: Record<string, string> = { 'Sec-Fetch-Site': 'same-origin' },
) {
  return t.http().post('/portal/login').set(headers).type('form').send({ token });
}

/** Follows a link (its page names the partner and uses nothing), then signs in: the session's `Cookie` header. */
export async function signInWith(t: TestApp, url: string): Promise<string> {
  const page = await t.http().get(linkTarget(url)).expect(200);
  if (page.headers['set-cookie'] !== undefined) throw new Error('a link page set a cookie');
  const res = await pressSignIn(t, linkToken(url)).expect(303);
  if (res.headers.location !== '/portal') throw new Error(`Sign in went to ${res.headers.location}`);
  return String(res.headers['set-cookie']).split(';')[0];
}

/** A page's CSRF token, as its forms carry it. */
export async function csrfOf(t: TestApp, cookie: string, page = '/portal/settings'): Promise<string> {
  const html = (await t.http().get(page).set('Cookie', cookie).expect(200)).text;
  return /name="_csrf" value="([^"]+)"/.exec(html)![1];
}
