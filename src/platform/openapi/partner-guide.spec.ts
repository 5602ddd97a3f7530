import { guidePage, renderGuide, slugOf } from './partner-guide.js';

describe('the partner guide as HTML', () => {
  const render = (markdown: string, images: string[] = []) => renderGuide(markdown, new Set(images)).html;

  it('gives each heading the anchor GitHub gives it, repeats numbered, so links between sections work', () => {
    const taken = new Map<string, number>();
    expect(slugOf('Verifying `v1a` signatures (Ed25519)', taken)).toBe('verifying-v1a-signatures-ed25519');
    expect(slugOf('Retries, outages and `Retry-After`', taken)).toBe('retries-outages-and-retry-after');
    expect(slugOf('Retries, outages and `Retry-After`', taken)).toBe('retries-outages-and-retry-after-1');
    const html = render('# Guide\n\n## Moving your receiver\n\nSee [moving](#moving-your-receiver).\n');
    expect(html).toContain('<h2 id="moving-your-receiver">Moving your receiver</h2>');
    expect(html).toContain('<a href="#moving-your-receiver">moving</a>');
  });

  it('passes no markup through: raw HTML is text, links only to sections or http(s), only served pictures', () => {
    const html = render(
      [
        '<script>alert(1)</script>',
        '',
        'Inline <img src=x onerror=alert(1)> and [a trick](javascript:alert(1)),',
        '[a file](operations.md), [a site](https://example.com/x).',
        '',
        '![served](portal-overview.png) ![not served](../secret.png)',
      ].join('\n'),
      ['portal-overview.png'],
    );
    expect(html).not.toMatch(/<script|<img src=x|javascript:|href="operations\.md"/i);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('a trick');
    expect(html).toContain('a file');
    expect(html).toContain('<a href="https://example.com/x">a site</a>');
    expect(html).toContain('<img src="/docs/partners/portal-overview.png" alt="served">');
    expect(html).toContain('not served');
    expect(html).not.toContain('secret.png');
  });

  it('escapes code, and makes a page with the title, the contents and the link to the partner API reference', () => {
    const guide = renderGuide(
      '# Integrating as a partner\n\n## The request\n\n```sh\ncurl -H "a<b"\n```\n\n## Retries\n',
      new Set(),
    );
    expect(guide.html).toContain('curl -H &quot;a&lt;b&quot;');
    const page = guidePage(guide, '/docs/partners/api');
    expect(page).toContain('<title>Integrating as a partner · Funding service</title>');
    expect(page).toContain('<li><a href="#the-request">The request</a></li><li><a href="#retries">Retries</a></li>');
    expect(page).toContain('<a href="/docs/partners/api">');
    expect(page).not.toContain('<script');
  });
});
