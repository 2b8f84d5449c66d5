/**
 * The console's building blocks: data loading, paged tables, forms that show the API's
 * field errors next to their field, secrets shown once with a copy button, confirmations,
 * tabs. Screens are written from these, so each stays a few dozen lines.
 */
import type { ComponentChildren, JSX } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiError, fieldOf, getUrl, url, type FieldDetail, type Get, type Page, type ParamsOf, type PathOf, type QueryOf } from "./api";

export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error: Error) => live && setState({ error, loading: false }),
    );
    return () => void (live = false);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  return { ...state, reload: useCallback(() => setTick((t) => t + 1), []) };
}

/**
 * An error: its message (or `title`) and code, and the API's field details, all of them or
 * `details` (a form passes the ones it did not already show beside their fields).
 */
export function ErrorNote({ error, title, details: only }: { error?: Error | null; title?: string | null; details?: FieldDetail[] }) {
  if (!error) return null;
  const details = only ?? (error instanceof ApiError ? error.details : []);
  return (
    <div class="error" role="alert">
      {title ?? error.message}
      {error instanceof ApiError && <span class="code"> ({error.code})</span>}
      {details.length > 0 && (
        <ul>
          {details.map((d) => (
            <li>
              <code>{d.field}</code>: {d.reason}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

export function Loading({ what = "Loading" }: { what?: string }) {
  return (
    <p class="muted" role="status" aria-busy="true">
      <span class="spinner" /> {what}…
    </p>
  );
}

export interface Column<T> {
  label: string;
  cell: (row: T) => ComponentChildren;
}

/** The GET paths that answer a cursor-paged list ({data, pagination}). */
export type PagedPath = { [P in PathOf<"get">]: Get<P> extends { data: unknown[]; pagination?: unknown } ? P : never }[PathOf<"get">];
/** A row of the list at `P`. */
export type RowOf<P extends PagedPath> = Get<P> extends { data: (infer T)[] } ? T : never;

/**
 * A table over a cursor-paged list endpoint ({data, pagination}): Previous/Next keep a
 * stack of cursors. `query` changes (filters, as typed in a form) start again from the first page.
 */
export function PagedTable<P extends PagedPath>(props: {
  path: P;
  query?: { [K in keyof QueryOf<P>]?: string };
  columns: Column<RowOf<P>>[];
  empty?: string;
  reloadKey?: unknown;
  label: string;
  limit?: number;
  onRow?: (row: RowOf<P>) => void;
} & ([ParamsOf<P>] extends [never] ? { params?: undefined } : { params: ParamsOf<P> })) {
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const key = url(props.path, { path: props.params }) + JSON.stringify(props.query ?? {});
  useEffect(() => setCursors([null]), [key]);
  const cursor = cursors[cursors.length - 1] ?? null;
  const { data, error, loading } = useLoad(
    () => getUrl(url(props.path, { path: props.params, query: { ...props.query, limit: props.limit ?? 20, cursor } })) as Promise<Page<RowOf<P>>>,
    [key, cursor, props.reloadKey],
  );
  return (
    <div class="table-wrap">
      <ErrorNote error={error} />
      <Table label={props.label} rows={data?.data ?? []} columns={props.columns} empty={loading ? "Loading…" : (props.empty ?? "Nothing yet.")} onRow={props.onRow} />
      {(cursors.length > 1 || data?.pagination?.has_more) && (
        <nav class="pager" aria-label={`${props.label} pages`}>
          <button type="button" class="secondary" disabled={cursors.length <= 1} onClick={() => setCursors((c) => c.slice(0, -1))}>
            Previous
          </button>
          <span class="muted">Page {cursors.length}</span>
          <button type="button" class="secondary" disabled={!data?.pagination?.has_more} onClick={() => setCursors((c) => [...c, data!.pagination!.next_cursor])}>
            Next
          </button>
        </nav>
      )}
    </div>
  );
}

export function Table<T>({ rows, columns, empty, label, onRow }: { rows: T[]; columns: Column<T>[]; empty?: string; label: string; onRow?: (row: T) => void }) {
  return (
    <table aria-label={label}>
      <thead>
        <tr>
          {columns.map((c) => (
            <th scope="col">{c.label}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 ? (
          <tr>
            <td colSpan={columns.length} class="muted">
              {empty ?? "Nothing yet."}
            </td>
          </tr>
        ) : (
          rows.map((r) => (
            <tr
              class={onRow ? "clickable" : undefined}
              tabIndex={onRow ? 0 : undefined}
              // Controls inside the row (buttons, links, checkboxes) do their own thing, not open the row.
              onClick={onRow ? (e) => !(e.target as Element).closest("button, a, input, select, label") && onRow(r) : undefined}
              onKeyDown={onRow ? (e) => (e.key === "Enter" || e.key === " ") && e.target === e.currentTarget && (e.preventDefault(), onRow(r)) : undefined}
            >
              {columns.map((c) => (
                <td data-label={c.label}>{c.cell(r)}</td>
              ))}
            </tr>
          ))
        )}
      </tbody>
    </table>
  );
}

export interface Field {
  name: string;
  label: string;
  type?: "text" | "email" | "password" | "number" | "url" | "select" | "textarea" | "json" | "checkbox" | "datetime-local" | "color";
  options?: { value: string; label: string }[];
  required?: boolean;
  placeholder?: string;
  hint?: string;
  initial?: unknown;
  rows?: number;
}

type Values = Record<string, unknown>;

function initialValue(f: Field): unknown {
  if (f.initial !== undefined) return f.type === "json" ? JSON.stringify(f.initial, null, 2) : f.initial;
  if (f.type === "checkbox") return false;
  if (f.type === "select") return f.options?.[0]?.value ?? "";
  return "";
}

/**
 * A form whose submit calls the API. Errors: each `details[].field` next to the input it
 * names (aria-invalid + described-by), and below the form the API's message (or what
 * `errorTitle` calls it) with only the details no field showed, so nothing is said twice.
 * JSON fields are parsed first; a parse error is shown next to the field without a request.
 */
export function Form(props: {
  id?: string;
  fields: Field[];
  submitLabel: string;
  onSubmit: (values: Values) => Promise<unknown>;
  resetOnSuccess?: boolean;
  onChange?: (values: Values) => void;
  children?: ComponentChildren;
  inline?: boolean;
  /** A heading for an API error in this form's words (null: the API's message). */
  errorTitle?: (error: ApiError) => string | null;
}) {
  const initial = () => Object.fromEntries(props.fields.map((f) => [f.name, initialValue(f)]));
  const [values, setValues] = useState<Values>(initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const [unplaced, setUnplaced] = useState<FieldDetail[]>([]);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const set = (name: string, v: unknown) => {
    const next = { ...values, [name]: v };
    setValues(next);
    props.onChange?.(next);
  };
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setFieldErrors({});
    const out: Values = {};
    const local: Record<string, string> = {};
    for (const f of props.fields) {
      const v = values[f.name];
      if (f.type === "json") {
        try {
          out[f.name] = v === "" ? undefined : JSON.parse(String(v));
        } catch (err) {
          local[f.name] = `Not valid JSON: ${(err as Error).message}`;
        }
      } else if (f.type === "number") out[f.name] = v === "" ? undefined : Number(v);
      else if (f.type === "checkbox") out[f.name] = !!v;
      else out[f.name] = v === "" ? undefined : v;
    }
    if (Object.keys(local).length) return setFieldErrors(local);
    setBusy(true);
    try {
      await props.onSubmit(out);
      if (props.resetOnSuccess) setValues(initial());
    } catch (err) {
      const known = new Set(props.fields.map((f) => f.name));
      const byField: Record<string, string> = {};
      const rest: FieldDetail[] = [];
      if (err instanceof ApiError) {
        for (const d of err.details) {
          const name = fieldOf(d);
          // The field's own name goes without saying beside it; a path inside it (policy[0].actions) does not.
          const said = d.field === name ? d.reason : `${d.field}: ${d.reason}`;
          if (known.has(name)) byField[name] = byField[name] ? `${byField[name]}; ${said}` : said;
          else rest.push(d);
        }
      }
      setFieldErrors(byField);
      setUnplaced(rest);
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  const fid = (f: Field) => `${props.id ?? "f"}-${f.name}`;
  return (
    <form id={props.id} class={props.inline ? "form inline" : "form"} onSubmit={submit} noValidate>
      {props.fields.map((f) => {
        const err = fieldErrors[f.name];
        const common = {
          id: fid(f),
          name: f.name,
          required: f.required,
          placeholder: f.placeholder,
          "aria-invalid": err ? true : undefined,
          "aria-describedby": err ? `${fid(f)}-err` : undefined,
        };
        const v = values[f.name];
        let input: JSX.Element;
        if (f.type === "select") {
          input = (
            <select {...common} value={String(v)} onChange={(e) => set(f.name, (e.target as HTMLSelectElement).value)}>
              {f.options!.map((o) => (
                <option value={o.value}>{o.label}</option>
              ))}
            </select>
          );
        } else if (f.type === "textarea" || f.type === "json") {
          input = <textarea {...common} rows={f.rows ?? 6} spellcheck={false} value={String(v ?? "")} onInput={(e) => set(f.name, (e.target as HTMLTextAreaElement).value)} />;
        } else if (f.type === "checkbox") {
          input = <input {...common} type="checkbox" checked={!!v} onChange={(e) => set(f.name, (e.target as HTMLInputElement).checked)} />;
        } else {
          input = <input {...common} type={(f.type ?? "text") as "text"} value={String(v ?? "")} onInput={(e) => set(f.name, (e.target as HTMLInputElement).value)} />;
        }
        return (
          <div class={`field${f.type === "checkbox" ? " check" : ""}`}>
            <label for={fid(f)}>{f.label}</label>
            {input}
            {f.hint && <small class="muted">{f.hint}</small>}
            {err && (
              <small class="field-error" id={`${fid(f)}-err`} role="alert">
                {err}
              </small>
            )}
          </div>
        );
      })}
      {props.children}
      <div class="actions">
        <button type="submit" disabled={busy} aria-busy={busy}>
          {busy ? "Working…" : props.submitLabel}
        </button>
      </div>
      <ErrorNote error={error} title={error instanceof ApiError ? props.errorTitle?.(error) : null} details={unplaced} />
    </form>
  );
}

export function CopyButton({ text, label = "Copy" }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone(true);
      setTimeout(() => setDone(false), 1500);
    } catch {
      // no clipboard permission: the value is selectable next to the button
    }
  };
  return (
    <button type="button" class="secondary small" onClick={copy} aria-label={done ? "Copied" : `${label}: ${text.slice(0, 24)}`}>
      {done ? "Copied" : label}
    </button>
  );
}

/** A secret the API returns once: shown with a copy button until dismissed, never stored. */
export function SecretOnce({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  return (
    <div class="secret" role="region" aria-label={label}>
      <strong>{label}</strong>
      <p class="muted">Copy it now: it is shown once and cannot be read again.</p>
      <div class="secret-row">
        <code class="secret-value">{value}</code>
        <CopyButton text={value} />
      </div>
      <button type="button" class="secondary" onClick={onDone}>
        Done
      </button>
    </div>
  );
}

/** A button that asks for a second click before doing something destructive; `name` says what a short label is about (a row's "Delete"). */
export function ConfirmButton({ label, confirm, onConfirm, danger = true, name }: { label: string; confirm?: string; onConfirm: () => Promise<unknown>; danger?: boolean; name?: string }) {
  const [armed, setArmed] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const click = async () => {
    if (!armed) return setArmed(true);
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
    } catch (e) {
      setError(e as Error);
    } finally {
      setBusy(false);
      setArmed(false);
    }
  };
  return (
    <span class="confirm">
      <button type="button" class={danger ? "danger small" : "secondary small"} aria-label={armed ? undefined : name} disabled={busy} onClick={click} onBlur={() => setTimeout(() => setArmed(false), 200)}>
        {armed ? (confirm ?? `Confirm ${label.toLowerCase()}`) : label}
      </button>
      {error && <span class="error inline-error">{error.message}</span>}
    </span>
  );
}

/** An action button with a busy state and the API's error next to it. */
export function ActionButton({ label, run, kind = "secondary" }: { label: string; run: () => Promise<unknown>; kind?: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  return (
    <span class="confirm">
      <button
        type="button"
        class={`${kind} small`}
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setError(null);
          try {
            await run();
          } catch (e) {
            setError(e as Error);
          } finally {
            setBusy(false);
          }
        }}
      >
        {busy ? "Working…" : label}
      </button>
      {error && <span class="error inline-error">{error.message}</span>}
    </span>
  );
}

export function Tabs({ tabs, current, onSelect }: { tabs: { id: string; label: string }[]; current: string; onSelect: (id: string) => void }) {
  return (
    <div class="tabs" role="tablist">
      {tabs.map((t) => (
        <button type="button" role="tab" aria-selected={t.id === current} class={t.id === current ? "tab active" : "tab"} onClick={() => onSelect(t.id)}>
          {t.label}
        </button>
      ))}
    </div>
  );
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card" aria-label={title}>
      <header class="card-head">
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : "—");

/** An ISO instant as a datetime-local input's value (the browser's time zone, to the minute). */
export function localInput(iso: string | null | undefined): string {
  if (!iso) return "";
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/** A datetime-local input's value as an ISO instant; empty is null. */
export const fromLocalInput = (v: unknown): string | null => (v ? new Date(String(v)).toISOString() : null);

export function Badge({ text, tone }: { text: string; tone?: "ok" | "warn" | "bad" | "info" }) {
  return <span class={`badge ${tone ?? ""}`}>{text}</span>;
}

export function Json({ value }: { value: unknown }) {
  return <pre class="json">{JSON.stringify(value, null, 2)}</pre>;
}

/** A sandboxed iframe for HTML we did not write (mail previews): no scripts, no same origin. */
export function SandboxedHtml({ html, title }: { html: string; title: string }) {
  const ref = useRef<HTMLIFrameElement>(null);
  return <iframe ref={ref} class="preview" title={title} sandbox="" srcdoc={html} />;
}
