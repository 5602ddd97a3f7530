import type { Page } from 'playwright-core';

/** The widths every portal page is read at: a phone's and a laptop's. */
export const WIDTHS = [390, 1280] as const;

/**
 * Runs in the page (a string: the tests compile without the DOM's types). Every word (a run of
 * letters and digits) of the page's text outside `pre` and the chart, each measured as a range:
 * a word whose rectangles sit on more than one line was broken inside. Ids and URLs may break
 * only after their separators (<wbr>), which no word contains.
 */
const BROKEN_WORDS = `(() => {
  const broken = [];
  for (const root of document.querySelectorAll('header, main')) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.parentElement.closest('pre, svg, .skip')) continue;
      for (const m of n.data.matchAll(/[\\p{L}\\p{N}]+/gu)) {
        const range = document.createRange();
        range.setStart(n, m.index);
        range.setEnd(n, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.bottom)));
        const where = n.parentElement.closest('td, th') ? 'a table cell' : n.parentElement.tagName;
        if (lines.size > 1) broken.push(m[0] + ' in ' + where);
      }
    }
  }
  return broken;
})()`;

/**
 * What is wrong with the page as it is shown now: a serious or critical axe-core violation, a word
 * broken inside, a page wider than the window (tables scroll in their own wrapper). The page's
 * context must bypass the CSP, so axe-core can be injected.
 */
export async function layoutProblems(page: Page, what: string): Promise<string[]> {
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  const violations = await page.evaluate<{ id: string; impact: string; nodes: number }[]>(
    'axe.run().then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length })))',
  );
  const problems = violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${what}: ${v.id} (${v.impact}, ${v.nodes} nodes)`);
  for (const word of await page.evaluate<string[]>(BROKEN_WORDS)) problems.push(`${what}: "${word}" broken inside`);
  const [scrollWidth, width] = await page.evaluate<number[]>(
    '[document.documentElement.scrollWidth, window.innerWidth]',
  );
  if (scrollWidth > width) problems.push(`${what}: ${scrollWidth} px wide at ${width}`);
  return problems;
}
