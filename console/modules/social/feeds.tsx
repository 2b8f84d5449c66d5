/**
 * Feeds as an actor sees them: home (followed actors' and hashtags' posts and the actor's
 * own) and discover (public posts: latest, hot or top over a window, without the actor's
 * mutes and blocks). The actor and the feed are part of the address.
 */
import { Tabs } from "../../lib/ui";
import { go } from "../../lib/router";
import { PostTable, type PostsProps } from "./posts";
import { ActorPicker, lane, WithActors } from "./shared";

const FEEDS = [
  { id: "home", label: "Home" },
  { id: "latest", label: "Discover: latest" },
  { id: "hot", label: "Discover: hot" },
  { id: "top", label: "Discover: top" },
];

export function Feeds(props: PostsProps & { actorId?: string; feed?: string }) {
  const { communityId, actors, href, actorId } = props;
  const feed = FEEDS.some((f) => f.id === props.feed) ? props.feed! : "home";
  return (
    <section class="card" aria-label="Feeds">
      <WithActors actors={actors}>
        {() => (
          <>
            <ActorPicker actors={actors} value={actorId} label="Feed of" hrefFor={(id) => href("feeds", ...(id ? [id, feed] : []))} />
            {actorId && (
              <>
                <Tabs tabs={FEEDS} current={feed} onSelect={(f) => go(href("feeds", actorId, f))} />
                <PostTable
                  {...props}
                  label={`${FEEDS.find((f) => f.id === feed)!.label} feed`}
                  list={
                    feed === "home"
                      ? { path: "/social/v1/communities/{community_id}/actors/{actor_id}/feeds/home", params: { ...lane(communityId), actor_id: actorId } }
                      : { path: "/social/v1/communities/{community_id}/feeds/discover", params: lane(communityId), query: { ranking: feed, actor_id: actorId } }
                  }
                  empty={feed === "home" ? "Nothing yet: this actor follows no one who posted, and wrote nothing." : "No public post yet."}
                />
              </>
            )}
          </>
        )}
      </WithActors>
    </section>
  );
}
