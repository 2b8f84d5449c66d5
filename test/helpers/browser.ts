/**
 * Drives Debian's Chromium (apt-get install -y chromium) through playwright-core for the
 * admin console's end-to-end tests: no browser download, no skipping. A missing browser
 * fails the test with the command that installs it.
 *
 * Each page records browser console errors and uncaught page errors (tests assert there are
 * none) and saves screenshots under test-output/console/ (git-ignored).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const SHOTS = resolve(import.meta.dir, "../../test-output/console");

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: the console tests need Debian's Chromium. Install it with \`apt-get install -y chromium\` (or set CHROMIUM_PATH).`);
  }
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
}

export interface ConsolePage {
  page: Page;
  context: BrowserContext;
  /** Console errors and page errors seen so far. */
  errors: string[];
  shot(name: string): Promise<void>;
}

export async function openConsole(browser: Browser, base: string, opts: { width?: number; height?: number; colorScheme?: "light" | "dark" } = {}): Promise<ConsolePage> {
  const context = await browser.newContext({
    viewport: { width: opts.width ?? 1280, height: opts.height ?? 860 },
    colorScheme: opts.colorScheme ?? "light",
    baseURL: base,
  });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  const page = await context.newPage();
  // A hang guard with slack for CI, whose three runs load both cores ~8x over (a step that
  // passes in well under 1 s on a quiet machine took over 15 s there once); not a timing check.
  page.setDefaultTimeout(30_000);
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()} @ ${m.location().url}`);
  });
  page.on("pageerror", (e) => errors.push(`page: ${e.message}`));
  mkdirSync(SHOTS, { recursive: true });
  return {
    page,
    context,
    errors,
    shot: async (name) => void (await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })),
  };
}

/**
 * Errors not explained by `expected`: Chromium logs every 4xx answer as a console error
 * ("Failed to load resource ... @ <url>"), so a refusal the test provokes on purpose (a
 * policy the API rejects, the signed-out introspect) is listed by status and URL.
 */
export function unexpected(errors: string[], expected: RegExp[] = []): string[] {
  return errors.filter((e) => !expected.some((re) => re.test(e)));
}

/** The signed-out check every fresh page makes (GET /platform/v1/introspect answers 401). */
export const SIGNED_OUT = /status of 401 .*@ http:\/\/127\.0\.0\.1:\d+\/platform\/v1\/introspect$/;

/**
 * Runs a journey; when a step fails, saves a FAILED-<name> screenshot and prints what the
 * page shows and the browser errors, so a CI log says where it stopped.
 */
export async function journey(cp: ConsolePage, name: string, steps: () => Promise<void>): Promise<void> {
  try {
    await steps();
  } catch (e) {
    await cp.shot(`FAILED-${name}`).catch(() => {});
    const text = await cp.page.evaluate(() => document.body.innerText).catch(() => "(page gone)");
    console.error(`console journey "${name}" failed at ${cp.page.url()}\n--- page ---\n${text.slice(0, 4000)}\n--- browser errors ---\n${cp.errors.join("\n")}`);
    throw e;
  }
}

/**
 * What makes the page scroll sideways at its current width: empty when the document fits
 * (scrollWidth <= viewport width); otherwise the scroll width and the innermost elements
 * whose right edge passes the viewport (tag, class, width), so a failure names the culprit.
 */
export async function overflow(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    if (document.documentElement.scrollWidth <= width) return [];
    const wide = [...document.body.querySelectorAll("*")].filter((el) => {
      const r = el.getBoundingClientRect();
      if (r.right <= width + 0.5) return false;
      // Inside a scroll box of its own (a wide table in its wrapper): not the page's doing.
      for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) if (p.scrollWidth > p.clientWidth && getComputedStyle(p).overflowX !== "visible") return false;
      return true;
    });
    const innermost = wide.filter((el) => !wide.some((o) => o !== el && el.contains(o)));
    return [`scrollWidth ${document.documentElement.scrollWidth} > ${width}`, ...innermost.slice(0, 8).map((el) => `${el.tagName.toLowerCase()}.${[...el.classList].join(".")} ${Math.round(el.getBoundingClientRect().width)}px`)];
  });
}
