/** The console shell: first-run setup, sign-in, invitation links, layout and routing. */
import { useEffect, useState } from "preact/hooks";
import { api, ApiError, setTokens, setUnauthorizedHandler, signOut, type BodyOf } from "./lib/api";
import type { ConsoleModule, Me, Workspace } from "./lib/module";
import { go, link, replace, useRoute, type Route } from "./lib/router";
import { ErrorNote, Form, Loading, Section, Table } from "./lib/ui";
import { MODULES } from "./modules";

export function App() {
  const route = useRoute();
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const refreshMe = async () => {
    try {
      setMe(await api.get("/platform/v1/introspect"));
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) setMe(null);
      else throw e;
    }
  };
  useEffect(() => {
    setUnauthorizedHandler(() => {
      setTokens(null);
      setMe(null);
    });
    void refreshMe();
  }, []);

  if (route.setup) return <Setup token={route.setup} onDone={refreshMe} />;
  if (me === undefined) return <Loading />;
  // A federated sign-in that needs the code comes back as #mfa_token=... (the callback's 303).
  if (route.mfa) return <Centered><MfaStep token={route.mfa} onDone={async () => (replace("#/"), await refreshMe())} onCancel={() => replace("#/")} /></Centered>;
  if (me === null) return <SignIn invite={!!route.invite} onDone={refreshMe} />;
  return <Shell me={me} route={route} refreshMe={refreshMe} />;
}

function Centered({ children }: { children: preact.ComponentChildren }) {
  return (
    <main class="centered">
      <h1 class="brand">Bunker</h1>
      {children}
    </main>
  );
}

function Setup({ token, onDone }: { token: string; onDone: () => Promise<void> }) {
  const [open, setOpen] = useState<boolean | null>(null);
  useEffect(() => void api.get("/platform/v1/auth/setup").then((r) => setOpen(r.needs_setup)), []);
  if (open === null) return <Loading />;
  if (!open) {
    replace("#/");
    return null;
  }
  return (
    <Centered>
      <Section title="Create the operator account">
        <p class="muted">This link works once. The account you create here can manage every other account.</p>
        <Form
          id="setup"
          submitLabel="Create operator"
          fields={[
            { name: "email", label: "Email", type: "email", required: true },
            { name: "username", label: "Username", required: true },
            { name: "password", label: "Password", type: "password", required: true, hint: "At least 8 characters." },
          ]}
          errorTitle={(e) => (e.details.length && e.details.every((d) => d.field === "password") ? "Choose a stronger password" : e.details.length ? "Check the marked fields" : null)}
          onSubmit={async (v) => {
            setTokens(await api.post("/platform/v1/auth/setup", { body: { ...(v as BodyOf<"post", "/platform/v1/auth/setup">), setup_token: token } }));
            await onDone();
            replace("#/");
          }}
        />
      </Section>
    </Centered>
  );
}

function SignIn({ invite, onDone }: { invite: boolean; onDone: () => Promise<void> }) {
  // Set when the password was right and the account has MFA: the code step replaces the form.
  const [mfaToken, setMfaToken] = useState<string | null>(null);
  if (mfaToken) return <Centered><MfaStep token={mfaToken} onDone={onDone} onCancel={() => setMfaToken(null)} /></Centered>;
  return (
    <Centered>
      <Section title="Sign in">
        {invite && <p class="notice">Sign in with the invited email address to accept the workspace invitation.</p>}
        <Form
          id="signin"
          submitLabel="Sign in"
          fields={[
            { name: "identifier", label: "Email or username", required: true },
            { name: "password", label: "Password", type: "password", required: true },
          ]}
          onSubmit={async (v) => {
            const r = await api.post("/platform/v1/auth/signin", { body: v as BodyOf<"post", "/platform/v1/auth/signin"> });
            if ("mfa_required" in r) return setMfaToken(r.mfa_token);
            setTokens(r);
            await onDone();
          }}
        />
        <Providers />
      </Section>
    </Centered>
  );
}

/**
 * The second step of a sign-in whose account has MFA: a 6-digit code of the authenticator
 * app, or one of the recovery codes. The challenge lives 10 minutes and locks after 5 wrong
 * codes (the API's message says so); "Start over" goes back to the sign-in form.
 */
function MfaStep({ token, onDone, onCancel }: { token: string; onDone: () => Promise<void>; onCancel: () => void }) {
  const [recovery, setRecovery] = useState(false);
  return (
    <Section title="Two-step verification">
      <p class="muted">{recovery ? "Enter one of the recovery codes you saved when you set up MFA. Each code works once." : "Enter the 6-digit code your authenticator app shows for Bunker."}</p>
      {recovery ? (
        <Form
          id="mfa-recover"
          key="recover"
          submitLabel="Verify"
          fields={[{ name: "recovery_code", label: "Recovery code", required: true, placeholder: "xxxx-xxxx-xxxx-xxxx" }]}
          onSubmit={async (v) => {
            setTokens(await api.post("/platform/v1/auth/mfa/recover", { body: { mfa_token: token, recovery_code: String(v.recovery_code ?? "") } }));
            await onDone();
          }}
        />
      ) : (
        <Form
          id="mfa-verify"
          key="verify"
          submitLabel="Verify"
          fields={[{ name: "code", label: "Authentication code", required: true, placeholder: "123456" }]}
          onSubmit={async (v) => {
            setTokens(await api.post("/platform/v1/auth/mfa/verify", { body: { mfa_token: token, code: String(v.code ?? "").trim() } }));
            await onDone();
          }}
        />
      )}
      <div class="actions">
        <button type="button" class="secondary small" onClick={() => setRecovery(!recovery)}>
          {recovery ? "Use the authenticator app" : "Use a recovery code"}
        </button>
        <button type="button" class="secondary small" onClick={onCancel}>
          Start over
        </button>
      </div>
    </Section>
  );
}

/**
 * "Sign in with …" per configured console identity provider. The start route sends the
 * browser to the provider; return_to (this page) must be allowed by OAUTH_RETURN_TO_ORIGINS.
 */
function Providers() {
  const [list, setList] = useState<{ id: string; display_name: string; start_path: string }[]>([]);
  useEffect(() => {
    api.get("/platform/v1/auth/providers").then((r) => setList(r.data), () => setList([]));
  }, []);
  if (!list.length) return null;
  const returnTo = encodeURIComponent(location.origin + location.pathname);
  return (
    <div class="providers">
      {list.map((p) => (
        <a class="button-link" href={`${p.start_path}?return_to=${returnTo}`}>
          Sign in with {p.display_name}
        </a>
      ))}
    </div>
  );
}

function InviteBanner({ token, refreshMe }: { token: string; refreshMe: () => Promise<void> }) {
  return (
    <Section title="Workspace invitation">
      <Form
        id="invite"
        submitLabel="Accept invitation"
        fields={[]}
        onSubmit={async () => {
          const r = await api.post("/platform/v1/invitations/accept", { body: { token } });
          await refreshMe();
          replace(link({ workspace: r.workspace_slug, module: "workspace", screen: "overview" }));
        }}
      />
    </Section>
  );
}

const visible = (m: ConsoleModule, ws: Workspace | undefined) => m.scope === "instance" || (ws && (!m.service || ws.services.includes(m.service)));

function Shell({ me, route, refreshMe }: { me: Me; route: Route; refreshMe: () => Promise<void> }) {
  const ws = me.workspaces.find((w) => w.slug === route.workspace) ?? (route.workspace ? undefined : undefined);
  const mod = MODULES.find((m) => m.id === route.module);
  const [navOpen, setNavOpen] = useState(false);
  useEffect(() => setNavOpen(false), [location.hash]);
  const screen = mod && (mod.screens.find((s) => s.id === route.screen) ?? mod.screens[0]);
  let body: preact.ComponentChildren;
  if (route.workspace && !ws) body = <ErrorNote error={new Error(`No workspace "${route.workspace}" among yours.`)} />;
  else if (!mod || !screen) body = <Home me={me} refreshMe={refreshMe} />;
  else if (mod.scope === "workspace" && !ws) body = <Home me={me} refreshMe={refreshMe} />;
  else if (!visible(mod, ws)) body = <ErrorNote error={new Error(`The ${mod.service} service is not enabled in this workspace (Workspace → Services).`)} />;
  else {
    const View = screen.view;
    body = <View me={me} ws={ws!} rest={route.rest} refreshMe={refreshMe} href={(s, ...rest) => link({ workspace: mod.scope === "workspace" ? ws!.slug : null, module: mod.id, screen: s, rest })} />;
  }
  return (
    <div class="layout">
      <header class="topbar">
        <button type="button" class="menu secondary small" aria-expanded={navOpen} aria-controls="nav" onClick={() => setNavOpen(!navOpen)}>
          Menu
        </button>
        <a class="brand" href="#/">
          Bunker
        </a>
        <label class="switcher">
          <span class="sr-only">Workspace</span>
          <select
            aria-label="Workspace"
            value={ws?.slug ?? ""}
            onChange={(e) => {
              const slug = (e.target as HTMLSelectElement).value;
              go(slug ? link({ workspace: slug, module: "workspace", screen: "overview" }) : "#/");
            }}
          >
            <option value="">All workspaces</option>
            {me.workspaces.map((w) => (
              <option value={w.slug}>{w.display_name}</option>
            ))}
          </select>
        </label>
        <span class="spacer" />
        <ThemeToggle />
        <span class="who" data-testid="who">
          {me.account?.username}
          {me.account?.is_operator && <span class="badge info">operator</span>}
        </span>
        <button
          type="button"
          class="secondary small"
          onClick={async () => {
            await signOut();
            location.hash = "#/";
            await refreshMe();
          }}
        >
          Sign out
        </button>
      </header>
      <nav id="nav" class={navOpen ? "sidebar open" : "sidebar"} aria-label="Console">
        {MODULES.filter((m) => visible(m, ws)).map((m) => (
          <div class="nav-group">
            <h3>{m.title}</h3>
            {m.screens.map((s) => {
              const href = link({ workspace: m.scope === "workspace" ? ws!.slug : null, module: m.id, screen: s.id });
              const current = mod?.id === m.id && screen?.id === s.id;
              return (
                <a href={href} aria-current={current ? "page" : undefined}>
                  {s.title}
                </a>
              );
            })}
          </div>
        ))}
        {!ws && <p class="muted small-note">Pick a workspace to see its services.</p>}
        <a class="docs" href="/docs" target="_blank" rel="noopener">
          API docs
        </a>
      </nav>
      <main class="content">
        {route.invite && <InviteBanner token={route.invite} refreshMe={refreshMe} />}
        {screen && mod && <h1 class="screen-title">{`${mod.title} · ${screen.title}`}</h1>}
        {body}
      </main>
    </div>
  );
}

function ThemeToggle() {
  const [theme, setTheme] = useState(() => document.documentElement.dataset.theme ?? "auto");
  const next = theme === "auto" ? "dark" : theme === "dark" ? "light" : "auto";
  return (
    <button
      type="button"
      class="secondary small"
      aria-label={`Theme: ${theme}; switch to ${next}`}
      onClick={() => {
        setTheme(next);
        if (next === "auto") delete document.documentElement.dataset.theme;
        else document.documentElement.dataset.theme = next;
        try {
          localStorage.setItem("bunker-theme", next); // a display preference, nothing secret
        } catch {}
      }}
    >
      {theme === "auto" ? "Auto" : theme === "dark" ? "Dark" : "Light"}
    </button>
  );
}

function Home({ me, refreshMe }: { me: Me; refreshMe: () => Promise<void> }) {
  return (
    <>
      <h1 class="screen-title">Workspaces</h1>
      <Section title="Your workspaces">
        <Table
          label="Workspaces"
          rows={me.workspaces}
          empty="No workspaces yet: create one below."
          columns={[
            { label: "Name", cell: (w) => <a href={link({ workspace: w.slug, module: "workspace", screen: "overview" })}>{w.display_name}</a> },
            { label: "Slug", cell: (w) => <code>{w.slug}</code> },
            { label: "Role", cell: (w) => w.role },
            { label: "Services", cell: (w) => <span class="muted">{w.services.join(", ")}</span> },
          ]}
        />
      </Section>
      <Section title="Create a workspace">
        <Form
          id="create-workspace"
          submitLabel="Create workspace"
          resetOnSuccess
          fields={[
            { name: "display_name", label: "Display name", required: true },
            { name: "slug", label: "Slug", required: true, hint: "Lower-case letters, digits and dashes; used in URLs." },
          ]}
          onSubmit={async (v) => {
            const w = await api.post("/platform/v1/workspaces", { body: v as BodyOf<"post", "/platform/v1/workspaces"> });
            await refreshMe();
            go(link({ workspace: w.slug, module: "workspace", screen: "overview" }));
          }}
        />
      </Section>
    </>
  );
}
