import { Marked, Tokens } from 'marked';

/** Where the partner guide is served, and its pictures and stylesheet below it. */
export const GUIDE_PATH = '/docs/partners';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ENTITIES[c]);

/**
 * A heading's anchor as GitHub makes it, so links between sections written for the repository
 * work on the served page too: lower case, punctuation dropped, spaces as hyphens, a repeat
 * numbered (`-1`, `-2`).
 */
export function slugOf(text: string, taken: Map<string, number>): string {
  const base = text
    .toLowerCase()
    .trim()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
  const n = taken.get(base) ?? 0;
  taken.set(base, n + 1);
  return n === 0 ? base : `${base}-${n}`;
}

/** The guide as a page: its title (the first heading), its sections (for the contents) and its body. */
export interface RenderedGuide {
  title: string;
  sections: { id: string; text: string }[];
  html: string;
}

/**
 * docs/partners.md as HTML. The file is ours, yet nothing in it passes through as markup: raw
 * HTML is shown as text, a link goes only to a section of the page or to an http(s) address (a
 * link to a file of the repository, which a partner does not have, keeps its words only), and a
 * picture only from `images` (the files served beside the page).
 */
export function renderGuide(markdown: string, images: ReadonlySet<string>): RenderedGuide {
  const taken = new Map<string, number>();
  const sections: RenderedGuide['sections'] = [];
  let title = '';
  const marked = new Marked({
    gfm: true,
    renderer: {
      html: ({ text }: Tokens.HTML | Tokens.Tag) => escapeHtml(text),
      heading({ tokens, depth, text }: Tokens.Heading) {
        const id = slugOf(text, taken);
        const inner = this.parser.parseInline(tokens);
        if (depth === 1 && !title) title = text.replace(/`/g, '');
        if (depth === 2) sections.push({ id, text: text.replace(/`/g, '') });
        return `<h${depth} id="${escapeHtml(id)}">${inner}</h${depth}>\n`;
      },
      link({ href, tokens }: Tokens.Link) {
        const inner = this.parser.parseInline(tokens);
        if (href.startsWith('#')) return `<a href="${escapeHtml(href)}">${inner}</a>`;
        if (/^https?:\/\//i.test(href)) return `<a href="${escapeHtml(href)}">${inner}</a>`;
        return inner;
      },
      image({ href, text }: Tokens.Image) {
        if (!images.has(href)) return escapeHtml(text);
        return `<img src="${GUIDE_PATH}/${escapeHtml(href)}" alt="${escapeHtml(text)}">`;
      },
    },
  });
  const html = marked.parse(markdown, { async: false });
  return { title, sections, html };
}

/** The whole page: the contents first, links to the API reference of the partners' routes. */
export function guidePage(guide: RenderedGuide, apiPath: string): string {
  const item = (s: { id: string; text: string }) => `<li><a href="#${escapeHtml(s.id)}">${escapeHtml(s.text)}</a></li>`;
  const contents = guide.sections.map(item).join('');
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(guide.title)} · Funding service</title><link rel="stylesheet" href="${GUIDE_PATH}/guide.css"></head>
<body><header><p>Funding service · partner guide · <a href="${apiPath}">API reference (partner routes)</a></p></header>
<nav aria-label="Contents"><ul>${contents}</ul></nav>
<main>${guide.html}</main></body></html>`;
}
