import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BrowserContext, chromium, Page } from 'playwright-core';
import { requireExecutable } from './processes.js';

/** Debian's Chromium (`apt-get install chromium`, as .ci/run does). */
export const CHROMIUM = '/usr/bin/chromium';

// Checked when a test file loads this: without Chromium it fails at once, saying what to install.
requireExecutable(
  CHROMIUM,
  "the dashboard's browser test drives Debian's Chromium",
  'apt-get install -y chromium',
  'chromium',
);

/** Exactly these switches, plus what Playwright needs to drive it (headless, the pipe, the profile). */
export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Where the suite's screenshots go: ignored by git, printed in the run's output for CI to keep. */
export const ARTIFACTS_DIR = path.join(__dirname, '..', '..', 'artifacts');

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/;

export interface TestBrowser {
  page: Page;
  context: BrowserContext;
  /** Every request the page tried to make beyond loopback (all were refused). */
  offLoopback: string[];
  /** Uncaught errors in the page's scripts. */
  pageErrors: string[];
  /** What Chromium refused by a page's content security policy (its console says so), framing included. */
  refusedByPolicy: string[];
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
}

export interface BrowserOptions {
  /** HTTP Basic credentials for every loopback page (the dashboard's); none for the portal. */
  credentials?: { username: string; password: string };
  /** Pages' content security policies off: for injecting axe-core, and for checking escaping without the CSP's help. */
  bypassCSP?: boolean;
  viewport?: { width: number; height: number };
}

/**
 * Headless Chromium with a fresh profile, HTTP Basic credentials for every loopback page (when
 * given), and every request beyond loopback refused, so a page that waits on the internet shows up here.
 */
export async function openBrowser(
  credentials: { username: string; password: string } | undefined,
  options: Omit<BrowserOptions, 'credentials'> = {},
): Promise<TestBrowser> {
  const profile = mkdtempSync(path.join(tmpdir(), 'funding-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    ignoreDefaultArgs: true,
    args: ['--headless', '--remote-debugging-pipe', `--user-data-dir=${profile}`, ...CHROMIUM_FLAGS, 'about:blank'],
    httpCredentials: credentials,
    bypassCSP: options.bypassCSP ?? false,
    viewport: options.viewport ?? { width: 1280, height: 900 },
  });
  const offLoopback: string[] = [];
  const pageErrors: string[] = [];
  const refusedByPolicy: string[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.protocol === 'data:' || LOOPBACK.test(url.hostname)) return route.continue();
    offLoopback.push(url.href);
    return route.abort('blockedbyclient');
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (e) => pageErrors.push(e.message));
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to (frame|display|load|execute|apply)/.test(m.text()))
      refusedByPolicy.push(m.text());
  });
  return {
    page,
    context,
    offLoopback,
    pageErrors,
    refusedByPolicy,
    screenshot: async (name: string) => {
      mkdirSync(ARTIFACTS_DIR, { recursive: true });
      const file = path.join(ARTIFACTS_DIR, name);
      await page.screenshot({ path: file });
      return file;
    },
    close: async () => {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
