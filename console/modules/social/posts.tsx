/**
 * Posts: the public list (optionally one author's), a post written as an actor (every kind:
 * text, link, image, quote, story, poll; published, draft or scheduled), and one post with
 * its assets, poll results, comments, moderation (hide, remove, restore), a report on an
 * actor's behalf, publishing a draft and deletion.
 */
import { useState } from "preact/hooks";
import { api, type BodyOf, type ParamsOf } from "../../lib/api";
import { go } from "../../lib/router";
import { ActionButton, Badge, ConfirmButton, ErrorNote, Form, Loading, PagedTable, Section, useLoad, when, type Column, type Field, type RowOf } from "../../lib/ui";
import { Comments } from "./comments";
import { moderate, type ModerationAt } from "./moderation";
import { actorOptions, lane, onThisOrigin, REASONS, tone, WithActors, type Actors } from "./shared";

const KINDS = ["text", "link", "image", "quote", "story", "poll"];
const POSTS = "/social/v1/communities/{community_id}/posts";
/** The lists of posts: the public list, an actor's home feed, the discover feed. */
type PostList = typeof POSTS | "/social/v1/communities/{community_id}/actors/{actor_id}/feeds/home" | "/social/v1/communities/{community_id}/feeds/discover";
export type PostSource = { [P in PostList]: { path: P; params: ParamsOf<P>; query?: Record<string, string | undefined> } }[PostList];
/** What a post's free-form attributes may hold that a row shows (a link's URL, a poll's question). */
type Attributes = { url?: string; poll?: { question?: string } } | null;
const VISIBILITIES = ["public", "followers", "close_friends"];

export interface PostsProps {
  communityId: string;
  moderation: ModerationAt;
  actors: Actors;
  href: (...rest: string[]) => string;
}

export function Posts(props: PostsProps & { postId?: string }) {
  return props.postId ? <PostDetail {...props} id={props.postId} /> : <PostList {...props} />;
}

function PostList(props: PostsProps) {
  const [author, setAuthor] = useState<string | undefined>(undefined);
  return (
    <>
      <Section title="Posts">
        <p class="muted">Published public posts, newest first. Drafts, scheduled posts and moderated posts open from their link or the moderation queue.</p>
        <WithActors actors={props.actors}>
          {() => (
            <Form
              id="post-filters"
              inline
              submitLabel="Filter"
              fields={[{ name: "author_id", label: "Author", type: "select", options: [{ value: "", label: "anyone" }, ...actorOptions(props.actors)] }]}
              onSubmit={async (v) => setAuthor(v.author_id as string | undefined)}
            />
          )}
        </WithActors>
        <PostTable list={{ path: POSTS, params: lane(props.communityId), query: { author_id: author } }} label="Posts" empty="No published public post yet." {...props} />
      </Section>
      <Section title="Write a post">
        <WithActors actors={props.actors}>{() => <NewPost {...props} />}</WithActors>
      </Section>
    </>
  );
}

/** A paged list of posts (the public list or a feed): author, kind, text, counts; a row opens the post. */
export function PostTable({ list, label, empty, actors, href, reloadKey }: { list: PostSource; label: string; empty: string; reloadKey?: unknown } & PostsProps) {
  // Every list answers the same post view; the table is typed by the public list's.
  const source = list as { path: typeof POSTS; params: ParamsOf<typeof POSTS>; query?: { author_id?: string } };
  const columns: Column<RowOf<typeof POSTS>>[] = [
    { label: "Author", cell: (x) => actors.name(x.actor_id) },
    { label: "Kind", cell: (x) => x.kind },
    { label: "Text", cell: (x) => <a href={href("posts", x.id)} class="clip">{x.body ?? (x.attributes as Attributes)?.poll?.question ?? (x.attributes as Attributes)?.url ?? "(no text)"}</a> },
    { label: "Visibility", cell: (x) => x.effective_visibility },
    { label: "Comments", cell: (x) => String(x.comment_count) },
    { label: "Reactions", cell: (x) => String(x.reaction_count) },
    { label: "Published", cell: (x) => when(x.published_at) },
  ];
  return <PagedTable label={label} {...source} reloadKey={reloadKey} empty={empty} onRow={(x) => go(href("posts", x.id))} columns={columns} />;
}

/** The post form: fields follow the kind (a link's URL, a poll's question and options, an image's asset, a quoted post). */
function NewPost({ communityId, actors, href }: PostsProps) {
  const [kind, setKind] = useState("text");
  const [status, setStatus] = useState("published");
  const extra: Record<string, Field[]> = {
    link: [{ name: "url", label: "Link URL", type: "url", required: true, placeholder: "https://…" }],
    image: [
      { name: "asset_id", label: "Image asset id", required: true, hint: "A ready asset of the author (Assets tab)." },
      { name: "alt_text", label: "Alt text" },
    ],
    quote: [{ name: "quote_post_id", label: "Quoted post id", required: true }],
    poll: [
      { name: "question", label: "Poll question", required: true },
      { name: "options", label: "Poll options", type: "textarea", rows: 4, required: true, hint: "One per line, 2 to 10." },
    ],
  };
  const fields: Field[] = [
    { name: "actor_id", label: "Author", type: "select", options: actorOptions(actors) },
    { name: "kind", label: "Kind", type: "select", options: KINDS.map((k) => ({ value: k, label: k })) },
    { name: "body", label: "Text", type: "textarea", rows: 3, hint: "Up to 10,000 characters; #hashtags and @external_id mentions are picked up." },
    ...(extra[kind] ?? []),
    { name: "visibility", label: "Visibility", type: "select", options: VISIBILITIES.map((k) => ({ value: k, label: k.replace("_", " ") })) },
    { name: "status", label: "Status", type: "select", options: ["published", "draft", "scheduled"].map((k) => ({ value: k, label: k })) },
    ...(status === "scheduled" ? [{ name: "scheduled_for", label: "Publish at", type: "datetime-local" as const, required: true }] : []),
  ];
  return (
    <Form
      id="new-post"
      submitLabel="Publish"
      fields={fields}
      onChange={(v) => (setKind(String(v.kind)), setStatus(String(v.status)))}
      onSubmit={async (v) => {
        const body: Record<string, unknown> = { actor_id: v.actor_id, kind: v.kind, body: v.body, visibility: v.visibility, status: v.status };
        if (v.status === "scheduled" && v.scheduled_for) body.scheduled_for = new Date(String(v.scheduled_for)).toISOString();
        if (v.kind === "link") body.attributes = { url: v.url };
        if (v.kind === "poll") body.attributes = { poll: { question: v.question, options: String(v.options ?? "").split("\n").map((s) => s.trim()).filter(Boolean) } };
        if (v.kind === "image") body.assets = [{ asset_id: v.asset_id, alt_text: v.alt_text ?? null }];
        if (v.kind === "quote") body.quote_post_id = v.quote_post_id;
        const post = await api.post(POSTS, { path: lane(communityId), body: body as BodyOf<"post", typeof POSTS> });
        go(href("posts", post.id));
      }}
    />
  );
}

function PostDetail({ communityId, moderation, actors, href, id }: PostsProps & { id: string }) {
  const path = { ...lane(communityId), post_id: id };
  const post = useLoad(() => api.get("/social/v1/communities/{community_id}/posts/{post_id}", { path }), [communityId, id]);
  const [reported, setReported] = useState(false);
  if (post.error) return <ErrorNote error={post.error} />;
  const x = post.data;
  // Until the post of this address arrives, the previous one's data must not drive its parts.
  if (!x || x.id !== id.toLowerCase()) return <Loading />;
  const mod = (action: "restore" | "hide" | "remove") => moderate(moderation, action, "post", x.id).then(post.reload);
  return (
    <>
      <p>
        <a href={href("posts")}>← All posts</a>
      </p>
      <Section title={`Post by ${actors.name(x.actor_id)}`} actions={<Badge text={x.status} tone={tone(x.status)} />}>
        {x.body && <p>{x.body}</p>}
        {x.kind === "link" && (
          <p>
            Link: <code>{(x.attributes as Attributes)!.url}</code>
          </p>
        )}
        {x.assets.length > 0 && <PostAssets communityId={communityId} refs={x.assets} />}
        {x.kind === "poll" && <PollResults at={path} />}
        <dl class="facts" data-testid="post">
          <dt>Id</dt>
          <dd>
            <code>{x.id}</code>
          </dd>
          <dt>Kind</dt>
          <dd>{x.kind}</dd>
          <dt>Visibility</dt>
          <dd>{x.effective_visibility === x.visibility ? x.visibility : `${x.visibility} (${x.effective_visibility}: the author is private)`}</dd>
          <dt>Moderation</dt>
          <dd>{x.moderation ? <Badge text={x.moderation} tone="bad" /> : "none"}</dd>
          <dt>Counts</dt>
          <dd>{`${x.comment_count} comments, ${x.reaction_count} reactions, ${x.repost_count} reposts, ${x.view_count} views`}</dd>
          {x.hashtags.length > 0 && (
            <>
              <dt>Hashtags</dt>
              <dd>{x.hashtags.map((t) => `#${t}`).join(" ")}</dd>
            </>
          )}
          <dt>{x.status === "scheduled" ? "Scheduled for" : "Published"}</dt>
          <dd>{when(x.status === "scheduled" ? x.scheduled_for : x.published_at)}</dd>
          {x.expires_at && (
            <>
              <dt>Expires</dt>
              <dd>{when(x.expires_at)}</dd>
            </>
          )}
        </dl>
        <div class="row-actions">
          {x.status !== "published" && <ActionButton label="Publish now" kind="primary" run={() => api.patch("/social/v1/communities/{community_id}/posts/{post_id}", { path, body: { status: "published" } }).then(post.reload)} />}
          {x.moderation ? <ActionButton label="Restore" run={() => mod("restore")} /> : <ActionButton label="Hide" run={() => mod("hide")} />}
          {x.moderation !== "removed" && <ConfirmButton label="Remove" onConfirm={() => mod("remove")} />}
          <ConfirmButton label="Delete post" onConfirm={async () => (await api.delete("/social/v1/communities/{community_id}/posts/{post_id}", { path }), go(href("posts")))} />
        </div>
      </Section>
      {x.status === "published" && <Comments communityId={communityId} postId={x.id} moderation={moderation} actors={actors} onChange={post.reload} />}
      <Section title="Report this post">
        <p class="muted">A report (flag) on an actor's behalf, as your product's report button sends it; it lands in the moderation queue.</p>
        <Form
          id="report-post"
          resetOnSuccess
          submitLabel="Report"
          fields={[
            { name: "reporter_actor_id", label: "Reporter", type: "select", options: actorOptions(actors) },
            { name: "reason", label: "Reason", type: "select", options: REASONS.map((r) => ({ value: r, label: r.replace("_", " ") })) },
            { name: "note", label: "Note" },
          ]}
          onSubmit={async (v) => {
            setReported(false);
            await api.post("/social/v1/communities/{community_id}/flags", { path: lane(communityId), body: { ...(v as BodyOf<"post", "/social/v1/communities/{community_id}/flags">), target_type: "post", target_id: x.id } });
            setReported(true);
          }}
        />
        {reported && (
          <p class="notice" role="status">
            Reported: the post is in the moderation queue.
          </p>
        )}
      </Section>
    </>
  );
}

function PostAssets({ communityId, refs }: { communityId: string; refs: { asset_id: string; alt_text: string | null }[] }) {
  const assets = useLoad(() => Promise.all(refs.map((r) => api.get("/social/v1/communities/{community_id}/assets/{asset_id}", { path: { ...lane(communityId), asset_id: r.asset_id } }).catch(() => null))), [communityId, refs.map((r) => r.asset_id).join()]);
  return (
    <div class="row-actions">
      {(assets.data ?? []).map((a, i) => {
        const thumb = a?.renditions.find((r) => r.name === "small");
        return thumb ? <img src={onThisOrigin(thumb.url)} alt={refs[i].alt_text ?? ""} width={thumb.width} height={thumb.height} style={{ maxWidth: "100%", height: "auto" }} /> : <span class="muted">(asset {refs[i].asset_id} unavailable)</span>;
      })}
    </div>
  );
}

function PollResults({ at }: { at: { community_id: string; post_id: string } }) {
  const r = useLoad(() => api.get("/social/v1/communities/{community_id}/posts/{post_id}/poll-results", { path: at }), [at.community_id, at.post_id]);
  if (r.error) return <ErrorNote error={r.error} />;
  if (!r.data) return <Loading />;
  return (
    <div aria-label="Poll results">
      <strong>{r.data.question}</strong>
      <ul>
        {r.data.options.map((o) => (
          <li>{`${o.label}: ${o.count}`}</li>
        ))}
      </ul>
      <small class="muted">{r.data.total_votes} votes</small>
    </div>
  );
}
