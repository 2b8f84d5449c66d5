/**
 * The fixture website of the extraction tests (and the bench): a real HTTP server on
 * 127.0.0.1 with a product page (JSON-LD + OpenGraph), a microdata product, an article, a
 * paginated listing (header tables, rel=next) and one whose next page is gone, a spec sheet (definition list and key/value
 * table), a JSON endpoint, a redirect to a private address, a slow page, a page after a delay (counting the fetches open at once), a huge page, an
 * image and a robots.txt. It records every request and which slow requests were aborted.
 */
export interface FixtureSite {
  url: string;
  port: number;
  requests: string[];
  /** Paths of slow requests whose client went away before the answer. */
  aborted: string[];
  /** Requests for /delay pages in progress now, and the most there were at once (concurrency tests). */
  open: number;
  maxOpen: number;
  /** Resolves when a request for `path` has arrived. */
  waitFor(path: string, timeoutMs?: number): Promise<void>;
  /** Where /redirect-private points (default: the link-local metadata address). */
  redirectTarget: string;
  stop(): Promise<void>;
}

const html = (body: string, head = "") => `<!doctype html><html><head><meta charset="utf-8">${head}</head><body>${body}</body></html>`;

export const PRODUCT = {
  name: "Trail Runner 2",
  sku: "TR-2-BLK",
  price: 129.5,
  currency: "EUR",
  brand: "Northpeak",
  description: "A light trail shoe with a rock plate.",
};

function productPage() {
  const ld = {
    "@context": "https://schema.org",
    "@type": "Product",
    name: PRODUCT.name,
    sku: PRODUCT.sku,
    description: PRODUCT.description,
    brand: { "@type": "Brand", name: PRODUCT.brand },
    offers: { "@type": "Offer", price: String(PRODUCT.price), priceCurrency: PRODUCT.currency, availability: "https://schema.org/InStock" },
  };
  return html(
    `<nav><a href="/">Home</a> <a href="/specs">Shoe specs and sizes</a></nav><h1>${PRODUCT.name}</h1><p>${PRODUCT.description}</p><p>Price: €${PRODUCT.price}</p>`,
    `<title>${PRODUCT.name} | Northpeak</title><meta property="og:title" content="${PRODUCT.name}"><meta property="og:image" content="/img/tr2.png"><script type="application/ld+json">${JSON.stringify(ld)}</script>`,
  );
}

const ROWS = [
  [["Alpine Tent", 320], ["Bivy Bag", 89], ["Camp Stove", 45]],
  [["Down Jacket", 240], ["Energy Gel", 2.5], ["Fleece", 60]],
  [["Gaiters", 35], ["Headlamp", 42]],
] as const;

function listingPage(n: number) {
  const rows = ROWS[n - 1].map(([name, price]) => `<tr><td>${name}</td><td>$${price}</td></tr>`).join("");
  const next = n < ROWS.length ? `<a rel="next" href="/listing?page=${n + 1}">Next</a>` : "";
  return html(`<h1>Catalogue, page ${n}</h1><table><tr><th>Name</th><th>Price</th></tr>${rows}</table>${next}`, `<title>Catalogue ${n}</title>`);
}

export const LISTING_ITEMS = ROWS.flat().map(([name, price]) => ({ name, price }));

export const ARTICLE = { headline: "Why we moved to SQLite", author: "Ada Park", published: "2026-10-02T08:00:00Z" };

function articlePage() {
  const paras = Array.from({ length: 8 }, (_, i) => `<p>Paragraph ${i + 1}: running one database file next to the binary made backups, restores and local development simpler for the whole team, and the numbers held up.</p>`).join("");
  return html(
    `<header><a href="/">Home</a></header><article><h1>${ARTICLE.headline}</h1><p class="byline">By ${ARTICLE.author}</p>${paras}</article><footer>© 2026</footer>`,
    `<title>${ARTICLE.headline}</title><meta property="og:title" content="${ARTICLE.headline}"><meta name="author" content="${ARTICLE.author}"><meta property="article:published_time" content="${ARTICLE.published}"><meta name="description" content="A story about one file.">`,
  );
}

export const SPECS = { weight_grams: 280, drop_mm: 6, waterproof: false, color: "Black" };

function specsPage() {
  return html(
    `<h1>Trail Runner 2 specs</h1><dl><dt>Weight (grams)</dt><dd>280 g</dd><dt>Drop</dt><dd>6 mm</dd></dl>
     <table><tr><th>Color</th><td>Black</td></tr><tr><th>Waterproof</th><td>No</td></tr></table>`,
    "<title>Specs</title>",
  );
}

function microdataPage() {
  return html(
    `<div itemscope itemtype="https://schema.org/Product"><h1 itemprop="name">Summit Pack 30</h1><span itemprop="sku">SP-30</span>
     <div itemprop="offers" itemscope itemtype="https://schema.org/Offer"><span itemprop="price" content="149.00">$149</span><meta itemprop="priceCurrency" content="USD"></div></div>`,
    "<title>Summit Pack 30</title>",
  );
}

export function startFixtureSite(): FixtureSite {
  const requests: string[] = [];
  const aborted: string[] = [];
  const waiters = new Set<() => void>();
  const site: FixtureSite = {
    url: "",
    port: 0,
    requests,
    aborted,
    redirectTarget: "http://169.254.169.254/latest/meta-data/",
    open: 0,
    maxOpen: 0,
    waitFor(path, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!requests.includes(path)) return false;
          waiters.delete(onReq);
          clearTimeout(timer);
          resolve();
          return true;
        };
        const onReq = () => void check();
        const timer = setTimeout(() => {
          waiters.delete(onReq);
          reject(new Error(`fixture site: no request for ${path} after ${timeoutMs} ms`));
        }, timeoutMs);
        if (!check()) waiters.add(onReq);
      });
    },
    stop: async () => {
      await server.stop(true);
    },
  };
  const page = (body: string, type = "text/html; charset=utf-8", status = 200) => new Response(body, { status, headers: { "content-type": type } });
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    idleTimeout: 0,
    async fetch(req) {
      const u = new URL(req.url);
      const path = u.pathname + u.search;
      requests.push(path);
      for (const w of waiters) w();
      switch (u.pathname) {
        case "/robots.txt":
          return page("User-agent: *\nDisallow: /private-area\n\nUser-agent: OtherBot\nDisallow: /\n", "text/plain");
        case "/product":
          return page(productPage());
        case "/micro":
          return page(microdataPage());
        case "/article":
          return page(articlePage());
        case "/specs":
          return page(specsPage());
        case "/listing":
          return page(listingPage(Number(u.searchParams.get("page") ?? "1")));
        case "/listing-dead-end":
          // Page 1 of the listing whose "next" link leads to a page that is gone.
          return page(listingPage(1).replace('href="/listing?page=2"', 'href="/listing-gone"'));
        case "/api/product":
          return page(JSON.stringify({ product: { name: PRODUCT.name, sku: PRODUCT.sku, price: PRODUCT.price } }), "application/json");
        case "/private-area":
          return page(productPage());
        case "/moved":
          return new Response(null, { status: 301, headers: { location: "/product" } });
        case "/redirect-private":
          return new Response(null, { status: 302, headers: { location: site.redirectTarget } });
        case "/slow-once":
          if (requests.filter((r) => r === path).length > 1) return page(productPage());
        // falls through: the first request is slow
        case "/slow":
          return new Promise<Response>((resolve) => {
            const t = setTimeout(() => resolve(page(productPage())), 60_000);
            req.signal.addEventListener("abort", () => {
              clearTimeout(t);
              aborted.push(path);
              resolve(page(""));
            });
          });
        case "/delay": {
          // The product page after ?ms= milliseconds (abortable); counts the fetches open at once.
          site.maxOpen = Math.max(site.maxOpen, ++site.open);
          const ms = Number(u.searchParams.get("ms") ?? "50");
          return new Promise<Response>((resolve) => {
            let answered = false;
            const done = (body: string) => {
              if (answered) return;
              answered = true;
              clearTimeout(t);
              site.open--;
              resolve(page(body));
            };
            const t = setTimeout(() => done(productPage()), ms);
            req.signal.addEventListener("abort", () => done(""), { once: true });
          });
        }
        case "/huge":
          return page(html(`<h1>Huge</h1><p>${"x".repeat(6 * 1024 * 1024)}</p>`));
        case "/image.png":
          return page("PNG", "image/png");
        case "/empty":
          return page(html("<p>Nothing structured here.</p>", "<title>Empty</title>"));
        default:
          return page(html("<h1>Not found</h1>"), "text/html", 404);
      }
    },
  });
  site.port = server.port!;
  site.url = `http://127.0.0.1:${site.port}`;
  return site;
}
