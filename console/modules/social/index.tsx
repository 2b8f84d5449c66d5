/**
 * Community: communities (search, create, settings, status, delete), their actors (paged
 * list, lookup by id or external id) with each actor's counters, and an actor's status
 * (suspend, reactivate); the moderation queue (targets with open flags) and its actions
 * (hide, remove, restore, warn, ban, dismiss).
 */
import { useState } from "preact/hooks";
import { api, get } from "../lib/api";
import type { ConsoleModule, ScreenProps } from "../lib/module";
import { go } from "../lib/router";
import { ActionButton, Badge, ConfirmButton, ErrorNote, Form, Json, Loading, PagedTable, Section, Tabs, useLoad, when } from "../lib/ui";

const wsBase = (p: ScreenProps) => `/social/v1/workspaces/${p.ws.id}/communities`;
const lane = (id: string) => `/social/v1/communities/${id}`;
const tone = (s: string) => (s === "active" ? "ok" : s === "suspended" ? "warn" : "bad");

function Communities(p: ScreenProps) {
  const [tick, setTick] = useState(0);
  const [filters, setFilters] = useState<Record<string, string | undefined>>({});
  if (p.rest[0]) return <CommunityDetail p={p} id={p.rest[0]} tab={p.rest[1] ?? "actors"} />;
  return (
    <>
      <Section title="Find communities">
        <Form
          id="community-filters"
          inline
          submitLabel="Search"
          fields={[
            { name: "q", label: "Name or slug contains" },
            { name: "status", label: "Status", type: "select", options: ["", "active", "suspended", "archived"].map((s) => ({ value: s, label: s || "any" })) },
          ]}
          onSubmit={async (v) => setFilters(v as Record<string, string | undefined>)}
        />
      </Section>
      <Section title="Communities">
        <PagedTable
          label="Communities"
          path={wsBase(p)}
          query={filters}
          reloadKey={tick}
          empty="No community yet."
          onRow={(c: any) => go(p.href("communities", c.id))}
          columns={[
            { label: "Name", cell: (c: any) => <a href={p.href("communities", c.id)}>{c.display_name}</a> },
            { label: "Slug", cell: (c: any) => <code>{c.slug}</code> },
            { label: "Status", cell: (c: any) => <Badge text={c.status} tone={tone(c.status)} /> },
            { label: "Created", cell: (c: any) => when(c.created_at) },
          ]}
        />
      </Section>
      <Section title="Create a community">
        <Form
          id="create-community"
          submitLabel="Create community"
          resetOnSuccess
          fields={[
            { name: "display_name", label: "Display name", required: true },
            { name: "slug", label: "Slug", required: true, hint: "3-63 lower-case letters, digits and hyphens." },
            { name: "description", label: "Description", type: "textarea", rows: 2 },
          ]}
          onSubmit={async (v) => {
            const c = await api<{ id: string }>("POST", wsBase(p), v);
            setTick(tick + 1);
            go(p.href("communities", c.id));
          }}
        />
      </Section>
    </>
  );
}

function CommunityDetail({ p, id, tab }: { p: ScreenProps; id: string; tab: string }) {
  const path = `${wsBase(p)}/${id}`;
  const c = useLoad(() => get(path), [path]);
  const [saved, setSaved] = useState(false);
  if (c.error) return <ErrorNote error={c.error} />;
  const com = c.data;
  if (!com) return <Loading />;
  const setStatus = async (status: string) => (await api("PATCH", path, { status }), c.reload());
  return (
    <>
      <p>
        <a href={p.href("communities")}>← All communities</a>
      </p>
      <Section title={com.display_name} actions={<Badge text={com.status} tone={tone(com.status)} />}>
        <dl class="facts">
          <dt>Id</dt>
          <dd>
            <code>{com.id}</code>
          </dd>
          <dt>Slug</dt>
          <dd>
            <code>{com.slug}</code>
          </dd>
          <dt>Auth App</dt>
          <dd>{com.app_id ?? "none"}</dd>
          <dt>Description</dt>
          <dd>{com.description ?? "—"}</dd>
        </dl>
        {com.status !== "archived" && (
          <div class="row-actions">
            {com.status === "active" ? <ActionButton label="Suspend community" run={() => setStatus("suspended")} /> : <ActionButton label="Reactivate community" run={() => setStatus("active")} />}
            <ConfirmButton label="Archive" confirm="Confirm archive (final)" onConfirm={() => setStatus("archived")} />
            <ConfirmButton label="Delete community" onConfirm={async () => (await api("DELETE", path), go(p.href("communities")))} />
          </div>
        )}
      </Section>
      <Tabs
        tabs={[
          { id: "actors", label: "Actors" },
          { id: "moderation", label: "Moderation" },
          { id: "settings", label: "Settings" },
        ]}
        current={tab}
        onSelect={(t) => go(p.href("communities", id, t))}
      />
      {tab === "actors" && <Actors communityId={id} />}
      {tab === "moderation" && <Moderation path={`${path}/moderation`} />}
      {tab === "settings" && (
        <Section title="Settings">
          <Form
            key={com.updated_at}
            id="community-settings"
            submitLabel="Save settings"
            fields={[
              { name: "display_name", label: "Display name", initial: com.display_name },
              { name: "description", label: "Description", type: "textarea", rows: 2, initial: com.description ?? "" },
              ...Object.entries(com.settings as Record<string, number>).map(([k, v]) => ({ name: k, label: k.replace(/_/g, " "), type: "number" as const, initial: v })),
            ]}
            onSubmit={async (v) => {
              const { display_name, description, ...settings } = v;
              setSaved(false);
              await api("PATCH", path, { display_name, description: description ?? null, settings });
              setSaved(true);
              c.reload();
            }}
          />
          {saved && (
            <p class="notice" role="status">
              Saved.
            </p>
          )}
        </Section>
      )}
    </>
  );
}

/** Which actions fit a target: posts and comments are hidden / removed; actors are banned. */
const ACTIONS_FOR: Record<string, [string, string][]> = {
  post: [["hide", "Hide"], ["remove", "Remove"], ["restore", "Restore"], ["warn", "Warn author"], ["ban", "Ban author"], ["dismiss", "Dismiss"]],
  comment: [["hide", "Hide"], ["remove", "Remove"], ["restore", "Restore"], ["warn", "Warn author"], ["ban", "Ban author"], ["dismiss", "Dismiss"]],
  actor: [["warn", "Warn"], ["ban", "Ban"], ["restore", "Restore"], ["dismiss", "Dismiss"]],
};

/** The review queue: targets with open flags, oldest first; each action closes the target's flags. */
function Moderation({ path }: { path: string }) {
  const [tick, setTick] = useState(0);
  const [open, setOpen] = useState<any>(null);
  const act = async (item: any, action: string) => {
    await api("POST", `${path}/actions`, { action, target_type: item.target_type, target_id: item.target_id });
    setOpen(null);
    setTick((n) => n + 1);
  };
  return (
    <>
      <Section title="Moderation queue" actions={<ActionButton label="Refresh" run={async () => setTick((n) => n + 1)} />}>
        <PagedTable
          label="Moderation queue"
          path={`${path}/queue`}
          reloadKey={tick}
          onRow={setOpen}
          empty="No open flags."
          columns={[
            { label: "Target", cell: (q: any) => <span>{q.target_type} <code>{q.target_id}</code></span> },
            { label: "Author / actor", cell: (q: any) => (q.target_actor_id ? <code>{q.target_actor_id}</code> : "—") },
            { label: "Flags", cell: (q: any) => `${q.flag_count} (${q.reporter_count} reporters)` },
            { label: "Reasons", cell: (q: any) => Object.entries(q.reasons).map(([r, n]) => `${r} ×${n}`).join(", ") },
            { label: "Hidden", cell: (q: any) => (q.auto_hidden ? <Badge text="auto-hidden" tone="warn" /> : "") },
            { label: "Last flagged", cell: (q: any) => when(q.last_flagged_at) },
            {
              label: "",
              cell: (q: any) => (
                <span class="row-actions">
                  {(ACTIONS_FOR[q.target_type] ?? [["dismiss", "Dismiss"]]).map(([a, label]) =>
                    a === "ban" || a === "remove" ? <ConfirmButton label={label} onConfirm={() => act(q, a)} /> : <ActionButton label={label} run={() => act(q, a)} />,
                  )}
                </span>
              ),
            },
          ]}
        />
      </Section>
      {open && (
        <Section title={`Flags on ${open.target_type} ${open.target_id}`} actions={<button type="button" class="secondary small" onClick={() => setOpen(null)}>Close</button>}>
          <Json value={open.flags} />
        </Section>
      )}
    </>
  );
}

function Actors({ communityId }: { communityId: string }) {
  const [open, setOpen] = useState<any>(null);
  const [tick, setTick] = useState(0);
  return (
    <>
      <Section title="Look up an actor">
        <Form
          id="actor-lookup"
          inline
          submitLabel="Look up"
          fields={[
            { name: "by", label: "By", type: "select", options: [{ value: "external", label: "external id" }, { value: "id", label: "actor id" }] },
            { name: "ref", label: "Id", required: true },
          ]}
          onSubmit={async (v) => {
            const ref = encodeURIComponent(String(v.ref ?? "").trim());
            setOpen(await get(v.by === "id" ? `${lane(communityId)}/actors/${ref}` : `${lane(communityId)}/actors/by-external/${ref}`));
            setTick((t) => t + 1);
          }}
        />
      </Section>
      {open && <ActorCard communityId={communityId} actor={open} onChange={(a) => (setOpen(a), setTick(tick + 1))} onClose={() => setOpen(null)} />}
      <Section title="Actors" actions={<ActionButton label="Refresh" run={async () => setTick((t) => t + 1)} />}>
        <PagedTable
          label="Actors"
          path={`${lane(communityId)}/actors`}
          reloadKey={tick}
          empty="No actor yet: your backend creates them (POST /actors)."
          onRow={setOpen}
          columns={[
            { label: "External id", cell: (a: any) => <code>{a.external_id}</code> },
            { label: "Name", cell: (a: any) => a.display_name ?? "—" },
            { label: "Status", cell: (a: any) => <Badge text={a.status} tone={tone(a.status === "deleted" ? "archived" : a.status)} /> },
            { label: "Private", cell: (a: any) => (a.is_private ? "yes" : "no") },
            { label: "Created", cell: (a: any) => when(a.created_at) },
          ]}
        />
      </Section>
    </>
  );
}

function ActorCard({ communityId, actor, onChange, onClose }: { communityId: string; actor: any; onChange: (a: any) => void; onClose: () => void }) {
  const path = `${lane(communityId)}/actors/${actor.id}`;
  const counters = useLoad(() => get(`${path}/counters`), [path, actor.updated_at]);
  const setStatus = async (status: string) => onChange(await api("PATCH", path, { status }));
  const n = counters.data;
  return (
    <Section
      title={`Actor ${actor.display_name ?? actor.external_id}`}
      actions={
        <button type="button" class="secondary small" onClick={onClose}>
          Close
        </button>
      }
    >
      <dl class="facts" data-testid="actor">
        <dt>Id</dt>
        <dd>
          <code>{actor.id}</code>
        </dd>
        <dt>External id</dt>
        <dd>
          <code>{actor.external_id}</code>
        </dd>
        <dt>Status</dt>
        <dd>
          <Badge text={actor.status} tone={tone(actor.status === "deleted" ? "archived" : actor.status)} />
          {actor.shadow_banned_at && <span class="muted"> shadow-banned until {when(actor.shadow_banned_until)}</span>}
        </dd>
        <dt>Private</dt>
        <dd>{actor.is_private ? "yes" : "no"}</dd>
      </dl>
      <h3>Counters</h3>
      <ErrorNote error={counters.error} />
      {n ? (
        <dl class="facts" data-testid="counters">
          <dt>Followers</dt>
          <dd>{n.follower_count}</dd>
          <dt>Following</dt>
          <dd>{n.following_count}</dd>
          <dt>Posts</dt>
          <dd>{n.post_count}</dd>
          <dt>Comments</dt>
          <dd>{n.comment_count}</dd>
          <dt>Blocks</dt>
          <dd>{n.blocks_count}</dd>
        </dl>
      ) : (
        !counters.error && <Loading />
      )}
      {Object.keys(actor.metadata ?? {}).length > 0 && (
        <>
          <h3>Metadata</h3>
          <Json value={actor.metadata} />
        </>
      )}
      <div class="row-actions">
        {actor.status === "active" && <ActionButton label="Suspend actor" run={() => setStatus("suspended")} />}
        {actor.status === "suspended" && <ActionButton label="Reactivate actor" run={() => setStatus("active")} />}
      </div>
    </Section>
  );
}

export const socialModule: ConsoleModule = {
  id: "community",
  title: "Community",
  scope: "workspace",
  service: "social",
  screens: [{ id: "communities", title: "Communities", view: Communities }],
};
