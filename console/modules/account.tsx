/**
 * Account: the signed-in account's own security settings. Two-step verification (TOTP):
 * enrol an authenticator app (the secret and otpauth URI shown as text, once), confirm it
 * with a code, the recovery codes shown once, regenerate them, disable a factor (needs a
 * current code or a recovery code). Secrets live only in this component's state.
 */
import { useState } from "preact/hooks";
import { api, type AnswerOf, type Get } from "../lib/api";
import type { ConsoleModule, ScreenProps } from "../lib/module";
import { Badge, ConfirmButton, CopyButton, ErrorNote, Form, Loading, Section, Table, useLoad, when } from "../lib/ui";

type Factor = Get<"/platform/v1/me/mfa">["data"][number];
type Enrolment = AnswerOf<"post", "/platform/v1/me/mfa/totp">;

/** Recovery codes the API shows once: listed with one copy button for all, until dismissed. */
function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  return (
    <div class="secret" role="region" aria-label="Recovery codes">
      <strong>Recovery codes</strong>
      <p class="muted">Save these now: they are shown once. Each one signs you in once if you lose the authenticator app.</p>
      <ul class="recovery-codes" data-testid="recovery-codes">
        {codes.map((c) => (
          <li>
            <code>{c}</code>
          </li>
        ))}
      </ul>
      <div class="actions">
        <CopyButton text={codes.join("\n")} label="Copy all" />
        <button type="button" class="secondary" onClick={onDone}>
          Done
        </button>
      </div>
    </div>
  );
}

function Enrol({ onConfirmed }: { onConfirmed: (codes: string[] | null) => void }) {
  const [enrolment, setEnrolment] = useState<Enrolment | null>(null);
  if (!enrolment) {
    return (
      <Form
        id="mfa-enrol"
        submitLabel="Set up an authenticator app"
        fields={[{ name: "name", label: "Name of this authenticator", placeholder: "Authenticator app", hint: "Shown in the list below, e.g. the phone's name." }]}
        onSubmit={async (v) => setEnrolment(await api.post("/platform/v1/me/mfa/totp", { body: { name: (v.name as string | undefined) ?? null } }))}
      />
    );
  }
  return (
    <div class="secret" role="region" aria-label="New authenticator">
      <strong>Add this key to your authenticator app</strong>
      <p class="muted">Type the secret into the app (time-based, 6 digits, 30 seconds), or paste the otpauth URI into an app or QR generator you trust. It is shown once.</p>
      <div class="secret-row">
        <span>Secret</span>
        <code class="secret-value" data-testid="totp-secret">
          {enrolment.secret}
        </code>
        <CopyButton text={enrolment.secret} />
      </div>
      <div class="secret-row">
        <span>URI</span>
        <code class="secret-value" data-testid="totp-uri">
          {enrolment.otpauth_uri}
        </code>
        <CopyButton text={enrolment.otpauth_uri} />
      </div>
      <Form
        id="mfa-confirm"
        submitLabel="Confirm"
        fields={[{ name: "code", label: "Code from the app", required: true, placeholder: "123456", hint: "Confirm within 10 minutes." }]}
        onSubmit={async (v) => {
          const r = await api.post("/platform/v1/me/mfa/totp/{factor_id}/confirm", { path: { factor_id: enrolment.factor_id }, body: { code: String(v.code ?? "").trim() } });
          setEnrolment(null);
          onConfirmed(r.recovery_codes ?? null);
        }}
      />
      <button type="button" class="secondary" onClick={() => setEnrolment(null)}>
        Cancel
      </button>
    </div>
  );
}

function Security(p: ScreenProps) {
  const state = useLoad(() => api.get("/platform/v1/me/mfa"), []);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [disabling, setDisabling] = useState<Factor | null>(null);
  const s = state.data;
  return (
    <>
      <Section title="Two-step verification">
        <p>
          Status: {s ? <Badge text={s.enabled ? "on" : "off"} tone={s.enabled ? "ok" : "warn"} /> : "…"}
          {s?.enabled && <span class="muted"> · sign-in asks for a code after the password (and after an identity provider) · {s.recovery_codes_left} recovery codes left</span>}
        </p>
        <ErrorNote error={state.error} />
        {codes && <RecoveryCodes codes={codes} onDone={() => setCodes(null)} />}
        {!s ? (
          <Loading />
        ) : (
          <Table
            label="Authenticators"
            rows={s.data.filter((f) => f.status !== "disabled")}
            empty="No authenticator yet."
            columns={[
              { label: "Name", cell: (f) => f.name ?? "Authenticator app" },
              { label: "Status", cell: (f) => <Badge text={f.status} tone={f.status === "active" ? "ok" : "warn"} /> },
              { label: "Added", cell: (f) => when(f.created_at) },
              {
                label: "",
                cell: (f) =>
                  f.status === "pending" ? (
                    <ConfirmButton label="Remove" onConfirm={async () => (await api.delete("/platform/v1/me/mfa/{factor_id}", { path: { factor_id: f.id } }), state.reload())} />
                  ) : (
                    <button type="button" class="danger small" onClick={() => setDisabling(f)}>
                      Disable
                    </button>
                  ),
              },
            ]}
          />
        )}
        {disabling && (
          <div class="secret" role="region" aria-label="Disable authenticator">
            <strong>Disable “{disabling.name ?? "Authenticator app"}”</strong>
            <p class="muted">Prove it is you: a current code of the app, or one of your recovery codes (used up).</p>
            <Form
              id="mfa-disable"
              submitLabel="Disable authenticator"
              fields={[{ name: "code", label: "Code or recovery code", required: true }]}
              onSubmit={async (v) => {
                await api.delete("/platform/v1/me/mfa/{factor_id}", { path: { factor_id: disabling.id }, body: { code: String(v.code ?? "").trim() } });
                setDisabling(null);
                state.reload();
              }}
            />
            <button type="button" class="secondary" onClick={() => setDisabling(null)}>
              Cancel
            </button>
          </div>
        )}
      </Section>
      {s && !s.enabled && (
        <Section title="Add an authenticator app">
          <Enrol
            onConfirmed={(c) => {
              setCodes(c);
              state.reload();
            }}
          />
        </Section>
      )}
      {s?.enabled && (
        <Section title="Recovery codes">
          <p class="muted">New codes replace every earlier one.</p>
          <ConfirmButton
            label="Regenerate recovery codes"
            confirm="Replace all recovery codes"
            danger={false}
            onConfirm={async () => {
              setCodes((await api.post("/platform/v1/me/mfa/recovery-codes/regenerate")).recovery_codes);
              state.reload();
            }}
          />
        </Section>
      )}
      <p class="muted">Signed in as {p.me.account?.email}.</p>
    </>
  );
}

export const accountModule: ConsoleModule = {
  id: "account",
  title: "Account",
  scope: "instance",
  screens: [{ id: "security", title: "Security", view: Security }],
};
