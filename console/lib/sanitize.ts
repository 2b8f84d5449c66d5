/**
 * Sanitises a received message's HTML before it goes into a sandbox="" iframe (no script,
 * opaque origin), as a second line of defence: an allowlist of elements and attributes,
 * no event handlers, no javascript: or other non-web URLs, and no remote resources (remote
 * images, backgrounds and CSS url()s are removed and counted, so nothing is fetched and the
 * page's CSP has nothing to refuse). cid: images become the message's own inline parts.
 *
 * DOMParser documents have no browsing context: parsing loads and runs nothing.
 */

const ALLOWED = new Set(
  (
    "a abbr address article aside b bdi bdo big blockquote br caption center cite code col colgroup dd del details dfn div dl dt em figcaption figure " +
    "font footer h1 h2 h3 h4 h5 h6 header hr i img ins kbd li main mark nav ol p pre q s samp section small span strike strong sub summary sup " +
    "table tbody td tfoot th thead time tr tt u ul var wbr html head body title style"
  ).split(" "),
);
/** Dropped with their content. */
const DROP = new Set(["script", "iframe", "frame", "frameset", "object", "embed", "applet", "form", "input", "button", "select", "textarea", "link", "meta", "base", "svg", "math", "audio", "video", "source", "track", "canvas", "noscript", "template", "portal"]);
const ATTRS = new Set("align alt bgcolor border cellpadding cellspacing class color colspan dir face height href hspace id lang name rowspan size span src start style summary title type valign value vspace width".split(" "));
const REMOTE_URL = /url\(\s*(['"]?)\s*(?!data:|cid:|#)[^)]*\)/gi;

export interface Sanitised {
  html: string;
  blocked: number;
}

export function sanitizeMailHtml(input: string, inline: Record<string, string> = {}): Sanitised {
  const doc = new DOMParser().parseFromString(input, "text/html");
  let blocked = 0;
  const clean = (el: Element) => {
    for (const child of [...el.children]) {
      const tag = child.tagName.toLowerCase();
      if (DROP.has(tag)) {
        child.remove();
        continue;
      }
      if (!ALLOWED.has(tag)) {
        // Unknown element: keep its content, drop the element.
        clean(child);
        child.replaceWith(...child.childNodes);
        continue;
      }
      for (const attr of [...child.attributes]) {
        const name = attr.name.toLowerCase();
        const v = attr.value.trim();
        if (!ATTRS.has(name)) child.removeAttribute(attr.name);
        else if (name === "href" && !/^(https?:|mailto:|#)/i.test(v)) child.removeAttribute(attr.name);
        else if (name === "src") {
          if (/^cid:/i.test(v) && inline[v.slice(4)]) child.setAttribute("src", inline[v.slice(4)]!);
          else if (!/^data:image\//i.test(v)) {
            child.removeAttribute("src");
            child.setAttribute("data-blocked", "remote image");
            blocked++;
          }
        } else if (name === "style" && REMOTE_URL.test(v)) {
          child.setAttribute("style", v.replace(REMOTE_URL, "none"));
          blocked++;
        }
        REMOTE_URL.lastIndex = 0;
      }
      if (tag === "a") {
        child.setAttribute("target", "_blank");
        child.setAttribute("rel", "noopener noreferrer");
      }
      if (tag === "style") {
        const css = child.textContent ?? "";
        const safe = css.replace(REMOTE_URL, "none").replace(/@import[^;]*;?/gi, "");
        if (safe !== css) blocked++;
        child.textContent = safe;
        continue;
      }
      clean(child);
    }
  };
  clean(doc.documentElement);
  return { html: "<!doctype html>" + doc.documentElement.outerHTML, blocked };
}

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
