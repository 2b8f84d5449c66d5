/**
 * Assets: images uploaded for an actor (the two-step upload: a signed URL, then the bytes
 * PUT to it), the community's assets newest first, one asset's renditions previewed, and
 * deletion. Processing runs on the server's scheduler: an asset opened while it is
 * processing is read again every second until it is ready or failed.
 */
import { useEffect, useState } from "preact/hooks";
import { api, ApiError, type Get } from "../../lib/api";
import { Badge, ConfirmButton, ErrorNote, Loading, PagedTable, Section, useLoad, when } from "../../lib/ui";
import { actorOptions, lane, onThisOrigin, tone, WithActors, type Actors } from "./shared";

const PENDING = new Set(["uploading", "processing"]);
const size = (n: number | null) => (n === null ? "—" : n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1048576).toFixed(1)} MiB`);
const thumbOf = (a: Get<"/social/v1/communities/{community_id}/assets/{asset_id}">) => a.renditions.find((r) => r.name === "thumb");

export function Assets({ communityId, actors }: { communityId: string; actors: Actors }) {
  const [tick, setTick] = useState(0);
  const [open, setOpen] = useState<string | null>(null);
  return (
    <>
      <Section title="Upload an image">
        <WithActors actors={actors}>{() => <Upload communityId={communityId} actors={actors} onDone={(id) => (setOpen(id), setTick((t) => t + 1))} />}</WithActors>
      </Section>
      {open && <AssetDetail communityId={communityId} id={open} actors={actors} onChange={() => setTick((t) => t + 1)} onClose={() => setOpen(null)} />}
      <Section title="Assets">
        <PagedTable
          label="Assets"
          path="/social/v1/communities/{community_id}/assets" params={lane(communityId)}
          reloadKey={tick}
          empty="No asset yet."
          onRow={(a) => setOpen(a.id)}
          columns={[
            { label: "Preview", cell: (a) => (thumbOf(a) ? <img src={onThisOrigin(thumbOf(a)!.url)} alt={`Asset ${a.id}`} width={Math.min(64, thumbOf(a)!.width)} /> : "—") },
            { label: "Owner", cell: (a) => actors.name(a.owner_actor_id) },
            { label: "Status", cell: (a) => <Badge text={a.failure_reason ? `${a.status}: ${a.failure_reason}` : a.status} tone={tone(a.status)} /> },
            { label: "Type", cell: (a) => a.content_type ?? "—" },
            { label: "Size", cell: (a) => (a.width ? `${a.width}×${a.height}, ${size(a.byte_size)}` : size(a.byte_size)) },
            { label: "Uploaded", cell: (a) => when(a.created_at) },
          ]}
        />
      </Section>
    </>
  );
}

/** The two-step upload: POST /assets/uploads (JSON, the session's credential), then the bytes to the signed URL. */
function Upload({ communityId, actors, onDone }: { communityId: string; actors: Actors; onDone: (id: string) => void }) {
  const [owner, setOwner] = useState(actors.list[0]?.id ?? "");
  const [file, setFile] = useState<File | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    if (!file) return setError(new ApiError(400, "VALIDATION_ERROR", "Choose an image file first"));
    setBusy(true);
    try {
      const step = await api.post("/social/v1/communities/{community_id}/assets/uploads", { path: lane(communityId), body: { actor_id: owner } });
      if (file.size > step.max_bytes) throw new ApiError(413, "FILE_TOO_LARGE", `Images are at most ${size(step.max_bytes)}`);
      const put = await fetch(onThisOrigin(step.upload_url), { method: "PUT", body: file, credentials: "omit", headers: { "content-type": "application/octet-stream" } });
      if (!put.ok) {
        const err = ((await put.json().catch(() => ({}))) as { error?: { code?: string; message?: string } }).error ?? {};
        throw new ApiError(put.status, err.code ?? `HTTP_${put.status}`, err.message ?? put.statusText);
      }
      (e.target as HTMLFormElement).reset();
      setFile(null);
      onDone(step.asset.id);
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form id="upload-asset" class="form" onSubmit={submit} noValidate>
      <div class="field">
        <label for="upload-owner">Owner</label>
        <select id="upload-owner" value={owner} onChange={(e) => setOwner((e.target as HTMLSelectElement).value)}>
          {actorOptions(actors).map((o) => (
            <option value={o.value}>{o.label}</option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="upload-file">Image</label>
        <input id="upload-file" type="file" accept="image/jpeg,image/png,image/webp,image/gif,image/avif" onChange={(e) => setFile((e.target as HTMLInputElement).files?.[0] ?? null)} />
        <small class="muted">JPEG, PNG, WebP, GIF or AVIF, at most 10 MiB. Metadata (EXIF, location) is stripped.</small>
      </div>
      <div class="actions">
        <button type="submit" disabled={busy} aria-busy={busy}>
          {busy ? "Uploading…" : "Upload"}
        </button>
      </div>
      <ErrorNote error={error} />
    </form>
  );
}

function AssetDetail({ communityId, id, actors, onChange, onClose }: { communityId: string; id: string; actors: Actors; onChange: () => void; onClose: () => void }) {
  const path = { ...lane(communityId), asset_id: id };
  const a = useLoad(() => api.get("/social/v1/communities/{community_id}/assets/{asset_id}", { path }), [communityId, id]);
  // Each read is a new object: while it is pending, read again a second after the last read.
  useEffect(() => {
    if (!a.data) return;
    if (!PENDING.has(a.data.status)) return void onChange();
    const timer = setTimeout(a.reload, 1000);
    return () => clearTimeout(timer);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [a.data]);
  const close = (
    <button type="button" class="secondary small" onClick={onClose}>
      Close
    </button>
  );
  if (a.error) return <Section title="Asset" actions={close}><ErrorNote error={a.error} /></Section>;
  const x = a.data;
  if (!x) return <Loading />;
  return (
    <Section title={`Asset ${x.id}`} actions={close}>
      <dl class="facts" data-testid="asset">
        <dt>Owner</dt>
        <dd>{actors.name(x.owner_actor_id)}</dd>
        <dt>Status</dt>
        <dd>
          <Badge text={x.status} tone={tone(x.status)} />
          {x.failure_reason && <span class="muted"> {x.failure_reason}</span>}
        </dd>
        <dt>Original</dt>
        <dd>{x.width ? `${x.content_type}, ${x.width}×${x.height}, ${size(x.byte_size)}` : size(x.byte_size)}</dd>
      </dl>
      {PENDING.has(x.status) && <Loading what="Processing" />}
      {x.renditions.length > 0 && (
        <>
          <h3>Renditions</h3>
          <div class="row-actions" aria-label="Renditions">
            {x.renditions.map((r) => (
              <figure>
                <img src={onThisOrigin(r.url)} alt={`${r.name} rendition`} width={Math.min(r.width, 200)} style={{ maxWidth: "100%", height: "auto" }} />
                <figcaption class="muted">{`${r.name}: ${r.width}×${r.height}, ${r.content_type.replace("image/", "")}, ${size(r.byte_size)}`}</figcaption>
              </figure>
            ))}
          </div>
        </>
      )}
      <div class="row-actions">
        <ConfirmButton label="Delete asset" onConfirm={async () => (await api.delete("/social/v1/communities/{community_id}/assets/{asset_id}", { path }), onChange(), onClose())} />
      </div>
    </Section>
  );
}
