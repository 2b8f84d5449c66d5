/** Hash routing: #/w/<slug>/<module>/<screen>/<rest...> or #/<module>/<screen>/<rest...>. */
import { useEffect, useState } from "preact/hooks";

export interface Route {
  workspace: string | null;
  module: string | null;
  screen: string | null;
  rest: string[];
  /** #setup=... and #invite=... links the server mails and prints. */
  setup: string | null;
  invite: string | null;
  /** #mfa_token=...: a federated sign-in that needs the second factor (the OIDC callback's redirect). */
  mfa: string | null;
}

export function parse(hash: string): Route {
  const h = hash.replace(/^#/, "");
  const params = new URLSearchParams(h.startsWith("/") ? "" : h);
  const parts = h.startsWith("/") ? h.slice(1).split("/").filter(Boolean).map(decodeURIComponent) : [];
  let workspace: string | null = null;
  if (parts[0] === "w") {
    workspace = parts[1] ?? null;
    parts.splice(0, 2);
  }
  return { workspace, module: parts[0] ?? null, screen: parts[1] ?? null, rest: parts.slice(2), setup: params.get("setup"), invite: params.get("invite"), mfa: params.get("mfa_token") };
}

export function link(r: { workspace?: string | null; module: string; screen?: string; rest?: string[] }): string {
  const parts = [...(r.workspace ? ["w", r.workspace] : []), r.module, ...(r.screen ? [r.screen] : []), ...(r.rest ?? [])];
  return "#/" + parts.map(encodeURIComponent).join("/");
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parse(location.hash));
  useEffect(() => {
    const on = () => setRoute(parse(location.hash));
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}

export const go = (hash: string) => void (location.hash = hash);

/** Replaces the current entry (no history entry for one-time links) and re-routes. */
export function replace(hash: string) {
  history.replaceState(null, "", `/admin/${hash}`);
  dispatchEvent(new HashChangeEvent("hashchange"));
}
