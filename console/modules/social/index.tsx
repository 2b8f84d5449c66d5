/**
 * Community: communities (search, create, settings, status, delete) and, in one community,
 * a tab for each part of the service: actors, posts (with comments), feeds as an actor,
 * moderation, notifications of an actor, assets, settings. The address is
 * #/w/<workspace>/community/communities/<community>/<tab>/<id...>.
 */
import { useState } from "preact/hooks";
import { api, type BodyOf } from "../../lib/api";
import type { ConsoleModule, ScreenProps } from "../../lib/module";
import { go } from "../../lib/router";
import { ActionButton, Badge, ConfirmButton, ErrorNote, Form, Loading, PagedTable, Section, Tabs, useLoad, when } from "../../lib/ui";
import { Actors } from "./actors";
import { Assets } from "./assets";
import { Feeds } from "./feeds";
import { Moderation, moderationPath } from "./moderation";
import { Notifications } from "./notifications";
import { Posts } from "./posts";
import { tone, useActors } from "./shared";

/** The path parameter of the workspace's communities. */
const wsBase = (p: ScreenProps) => ({ workspace_id: p.ws.id });

const TABS = [
  { id: "actors", label: "Actors" },
  { id: "posts", label: "Posts" },
  { id: "feeds", label: "Feeds" },
  { id: "moderation", label: "Moderation" },
  { id: "notifications", label: "Notifications" },
  { id: "assets", label: "Assets" },
  { id: "settings", label: "Settings" },
];

function Communities(p: ScreenProps) {
  const [tick, setTick] = useState(0);
  const [filters, setFilters] = useState<Record<string, string | undefined>>({});
  if (p.rest[0]) return <CommunityDetail p={p} id={p.rest[0]} tab={p.rest[1] ?? "actors"} sub={p.rest.slice(2)} />;
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
          path="/social/v1/workspaces/{workspace_id}/communities"
          params={wsBase(p)}
          query={filters}
          reloadKey={tick}
          empty="No community yet."
          onRow={(c) => go(p.href("communities", c.id))}
          columns={[
            { label: "Name", cell: (c) => <a href={p.href("communities", c.id)}>{c.display_name}</a> },
            { label: "Slug", cell: (c) => <code>{c.slug}</code> },
            { label: "Status", cell: (c) => <Badge text={c.status} tone={tone(c.status)} /> },
            { label: "Created", cell: (c) => when(c.created_at) },
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
            const c = await api.post("/social/v1/workspaces/{workspace_id}/communities", { path: wsBase(p), body: v as BodyOf<"post", "/social/v1/workspaces/{workspace_id}/communities"> });
            setTick(tick + 1);
            go(p.href("communities", c.id));
          }}
        />
      </Section>
    </>
  );
}

function CommunityDetail({ p, id, tab, sub }: { p: ScreenProps; id: string; tab: string; sub: string[] }) {
  const path = { ...wsBase(p), community_id: id };
  const c = useLoad(() => api.get("/social/v1/workspaces/{workspace_id}/communities/{community_id}", { path }), [p.ws.id, id]);
  const [saved, setSaved] = useState(false);
  // Actors name authors and fill the pickers of every tab; read again on a tab change (the backend writes them).
  const actors = useActors(id, tab);
  const href = (...rest: string[]) => p.href("communities", id, ...rest);
  const lanes = { communityId: id, moderation: moderationPath(p.ws.id, id), actors, href };
  if (c.error) return <ErrorNote error={c.error} />;
  const com = c.data;
  // Until the community of this address arrives, the previous one's must not drive the tabs.
  if (!com || com.id !== id.toLowerCase()) return <Loading />;
  const setStatus = async (status: "active" | "suspended" | "archived") => (await api.patch("/social/v1/workspaces/{workspace_id}/communities/{community_id}", { path, body: { status } }), c.reload());
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
            <ConfirmButton label="Delete community" onConfirm={async () => (await api.delete("/social/v1/workspaces/{workspace_id}/communities/{community_id}", { path }), go(p.href("communities")))} />
          </div>
        )}
      </Section>
      <Tabs tabs={TABS} current={tab} onSelect={(t) => go(href(t))} />
      {tab === "actors" && <Actors communityId={id} />}
      {tab === "posts" && <Posts {...lanes} postId={sub[0]} />}
      {tab === "feeds" && <Feeds {...lanes} actorId={sub[0]} feed={sub[1]} />}
      {tab === "moderation" && <Moderation path={lanes.moderation} actors={actors} postHref={(postId) => href("posts", postId)} />}
      {tab === "notifications" && <Notifications {...lanes} actorId={sub[0]} />}
      {tab === "assets" && <Assets communityId={id} actors={actors} />}
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
              await api.patch("/social/v1/workspaces/{workspace_id}/communities/{community_id}", { path, body: { display_name, description: description ?? null, settings } as BodyOf<"patch", "/social/v1/workspaces/{workspace_id}/communities/{community_id}"> });
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

export const socialModule: ConsoleModule = {
  id: "community",
  title: "Community",
  scope: "workspace",
  service: "social",
  screens: [{ id: "communities", title: "Communities", view: Communities }],
};
