import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createWorkspace, signup, startTestApp, type TestApp } from "../helpers/app";
import { addMember, auditActions, BUILTIN, P } from "../helpers/members";
import { inProcess, ON_BINARY } from "../helpers/target";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

const allow = (...actions: string[]) => [{ effect: "allow", actions, resources: ["*"] }];
const roles = (token: string, slug: string, q = "") => app.call("GET", `${P}/workspaces/${slug}/roles${q}`, { token });
const createRole = (token: string, slug: string, body: Record<string, unknown>) => app.call("POST", `${P}/workspaces/${slug}/roles`, { token, body });
const roleCall = (method: string, token: string, slug: string, id: string, body?: unknown) => app.call(method, `${P}/workspaces/${slug}/roles/${id}`, { token, body });

async function ownerWithWorkspace() {
  const owner = await signup(app);
  const ws = await createWorkspace(app, owner.token);
  return { owner, ws };
}

describe("roles", () => {
  inProcess("compares created_at with the frozen injected clock (app.clock.iso)")("list: the three built-ins first, then custom roles; read one", async () => {
    const { owner, ws } = await ownerWithWorkspace();
    const c = await createRole(owner.token, ws.slug, { name: "editor", description: "Edits settings", policy: allow("workspace.read", "workspace.update") });
    expect(c.status).toBe(201);
    expect(c.body).toMatchObject({ name: "editor", description: "Edits settings", builtin: false, policy: allow("workspace.read", "workspace.update") });
    expect(c.body.created_at).toBe(app.clock.iso());
    const list = await roles(owner.token, ws.slug);
    expect(list.status).toBe(200);
    expect(list.body.data.map((r: any) => [r.name, r.builtin])).toEqual([["owner", true], ["admin", true], ["member", true], ["editor", false]]);
    expect(list.body.data[0].policy).toEqual(allow("*"));
    const one = await roleCall("GET", owner.token, ws.slug, c.body.id);
    expect(one.body).toEqual(c.body);
    // The member role may read roles.
    const m = await addMember(app, owner.token, ws.slug);
    expect((await roleCall("GET", m.token, ws.slug, BUILTIN.admin)).body.name).toBe("admin");
    expect((await roles(m.token, ws.slug)).status).toBe(200);
  });

  test("validation: name rules, unique including built-ins, registered actions, no unknown statement keys", async () => {
    const { owner, ws } = await ownerWithWorkspace();
    for (const name of ["", "Upper", "sp ace", "a".repeat(65), "dot.ted"]) {
      const r = await createRole(owner.token, ws.slug, { name, policy: allow("workspace.read") });
      expect(r.status).toBe(400);
    }
    expect((await createRole(owner.token, ws.slug, { name: "a".repeat(64), policy: allow("workspace.read") })).status).toBe(201);
    expect((await createRole(owner.token, ws.slug, { name: "ok_name-1", policy: allow("workspace.read") })).status).toBe(201);
    for (const name of ["owner", "ok_name-1"]) {
      const dup = await createRole(owner.token, ws.slug, { name, policy: allow("workspace.read") });
      expect(dup.status).toBe(409);
      expect(dup.body.error.code).toBe("ROLE_NAME_TAKEN");
    }
    const unknown = await createRole(owner.token, ws.slug, { name: "x", policy: allow("workspace.fly") });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details[0]).toMatchObject({ field: "policy[0].actions[0]", reason: "unknown action" });
    const extra = await createRole(owner.token, ws.slug, { name: "x", policy: [{ effect: "allow", actions: ["workspace.read"], resources: ["*"], condition: { ip: "1.2.3.4" } }] });
    expect(extra.status).toBe(400);
    expect(extra.body.error.details[0].field).toBe("policy[0].condition");
    // The same name may exist in another workspace.
    const other = await createWorkspace(app, owner.token);
    expect((await createRole(owner.token, other.slug, { name: "ok_name-1", policy: allow("workspace.read") })).status).toBe(201);
  });

  test("an admin cannot create, raise or edit a role beyond their own policy; a member cannot create roles", async () => {
    const { owner, ws } = await ownerWithWorkspace();
    const admin = await addMember(app, owner.token, ws.slug, BUILTIN.admin);
    const r = await createRole(admin.token, ws.slug, { name: "deleter", policy: allow("workspace.delete") });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe("ROLE_EXCEEDS_CALLER");
    expect((await createRole(admin.token, ws.slug, { name: "star", policy: allow("*") })).status).toBe(403);
    const ok = await createRole(admin.token, ws.slug, { name: "editor", policy: allow("workspace.update") });
    expect(ok.status).toBe(201);
    const raise = await roleCall("PATCH", admin.token, ws.slug, ok.body.id, { policy: allow("workspace.update", "workspace.delete") });
    expect(raise.status).toBe(403);
    const ownersRole = await createRole(owner.token, ws.slug, { name: "deleter", policy: allow("workspace.delete") });
    expect((await roleCall("PATCH", admin.token, ws.slug, ownersRole.body.id, { name: "renamed" })).status).toBe(403);
    expect((await roleCall("DELETE", admin.token, ws.slug, ownersRole.body.id)).status).toBe(403);
    const member = await addMember(app, owner.token, ws.slug);
    expect((await createRole(member.token, ws.slug, { name: "mine", policy: allow("workspace.read") })).status).toBe(403);
  });

  test("a custom role's policy decides what its holder may do, and changes apply on the next request", async () => {
    const { owner, ws } = await ownerWithWorkspace();
    const editor = await createRole(owner.token, ws.slug, { name: "editor", policy: allow("workspace.read", "workspace.update") });
    const m = await addMember(app, owner.token, ws.slug, editor.body.id);
    expect((await app.call("GET", `${P}/workspaces/${ws.slug}/members`, { token: owner.token })).body.data.find((x: any) => x.id === m.memberId)).toMatchObject({ role: "editor", role_id: editor.body.id });
    const rename = () => app.call("PATCH", `${P}/workspaces/${ws.slug}`, { token: m.token, body: { display_name: "Renamed by editor" } });
    expect((await rename()).status).toBe(200);
    expect((await app.call("DELETE", `${P}/workspaces/${ws.slug}`, { token: m.token })).status).toBe(403);
    expect((await app.call("GET", `${P}/workspaces/${ws.slug}/members`, { token: m.token })).status).toBe(403);
    expect((await app.call("POST", `${P}/workspaces/${ws.slug}/invitations`, { token: m.token, body: { email: "n@example.com" } })).status).toBe(403);

    const patched = await roleCall("PATCH", owner.token, ws.slug, editor.body.id, { policy: allow("workspace.read"), description: "Read only now" });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: "editor", description: "Read only now", policy: allow("workspace.read") });
    const denied = await rename();
    expect(denied.status).toBe(403);
    expect((await app.call("GET", `${P}/introspect/workspaces/${ws.id}`, { token: m.token })).body).toMatchObject({ role: { id: editor.body.id, name: "editor" }, policy: allow("workspace.read") });
  });

  inProcess("reads audit rows from the store (auditActions)")("a role in use cannot be deleted (409 ROLE_IN_USE); built-ins are read-only (403 BUILTIN_ROLE)", async () => {
    const { owner, ws } = await ownerWithWorkspace();
    const r = await createRole(owner.token, ws.slug, { name: "temp", policy: allow("workspace.read") });
    const m = await addMember(app, owner.token, ws.slug, r.body.id);
    const inUse = await roleCall("DELETE", owner.token, ws.slug, r.body.id);
    expect(inUse.status).toBe(409);
    expect(inUse.body.error.code).toBe("ROLE_IN_USE");
    await app.call("PATCH", `${P}/workspaces/${ws.slug}/members/${m.memberId}`, { token: owner.token, body: { role_id: BUILTIN.member } });
    // A pending invitation offering the role also holds it.
    const inv = await app.call("POST", `${P}/workspaces/${ws.slug}/invitations`, { token: owner.token, body: { email: "p@example.com", role_id: r.body.id } });
    expect((await roleCall("DELETE", owner.token, ws.slug, r.body.id)).body.error.code).toBe("ROLE_IN_USE");
    await app.call("DELETE", `${P}/workspaces/${ws.slug}/invitations/${inv.body.id}`, { token: owner.token });
    expect((await roleCall("DELETE", owner.token, ws.slug, r.body.id)).status).toBe(204);
    expect((await roleCall("GET", owner.token, ws.slug, r.body.id)).status).toBe(404);

    for (const id of Object.values(BUILTIN)) {
      const patch = await roleCall("PATCH", owner.token, ws.slug, id, { description: "mine now" });
      expect(patch.status).toBe(403);
      expect(patch.body.error.code).toBe("BUILTIN_ROLE");
      expect((await roleCall("DELETE", owner.token, ws.slug, id)).body.error.code).toBe("BUILTIN_ROLE");
    }
    expect((await auditActions(app, ws.id)).filter((a) => a.action.startsWith("role.")).map((a) => a.action)).toEqual(["role.create", "role.delete"]);
  });

  test("rename: unique names, audit of every change", async () => {
    const { owner, ws } = await ownerWithWorkspace();
    const a = await createRole(owner.token, ws.slug, { name: "alpha", policy: allow("workspace.read") });
    await createRole(owner.token, ws.slug, { name: "beta", policy: allow("workspace.read") });
    expect((await roleCall("PATCH", owner.token, ws.slug, a.body.id, { name: "beta" })).body.error.code).toBe("ROLE_NAME_TAKEN");
    expect((await roleCall("PATCH", owner.token, ws.slug, a.body.id, { name: "admin" })).status).toBe(409);
    // Time passes between creation and rename (the binary's real clock moves on its own).
    if (ON_BINARY) await Bun.sleep(5);
    else app.clock.advance(1000);
    const renamed = await roleCall("PATCH", owner.token, ws.slug, a.body.id, { name: "gamma" });
    expect(renamed.status).toBe(200);
    expect(renamed.body.updated_at).not.toBe(renamed.body.created_at);
    const audit = await app.call("GET", `${P}/workspaces/${ws.slug}/audit-log?action=role.*`, { token: owner.token });
    expect(audit.body.data.map((e: any) => e.action).reverse()).toEqual(["role.create", "role.create", "role.update"]);
    expect(audit.body.data[0].metadata).toEqual({ name: "gamma" });
  });

  test("another workspace's role id is 404; so is a non-member", async () => {
    const one = await ownerWithWorkspace();
    const two = await ownerWithWorkspace();
    const foreign = await createRole(two.owner.token, two.ws.slug, { name: "theirs", policy: allow("workspace.read") });
    for (const method of ["GET", "PATCH", "DELETE"]) {
      const r = await roleCall(method, one.owner.token, one.ws.slug, foreign.body.id, method === "PATCH" ? { name: "stolen" } : undefined);
      expect(r.status).toBe(404);
    }
    expect((await roles(one.owner.token, two.ws.slug)).status).toBe(404);
    expect((await roles(one.owner.token, one.ws.slug)).body.data.map((r: any) => r.name)).not.toContain("theirs");
  });

  test("pagination: limit boundary, cursor walk across built-ins and custom roles, malformed cursor 400", async () => {
    const { owner, ws } = await ownerWithWorkspace();
    for (const name of ["r1", "r2"]) await createRole(owner.token, ws.slug, { name, policy: allow("workspace.read") });
    const all = await roles(owner.token, ws.slug, "?limit=5");
    expect(all.body.data).toHaveLength(5);
    expect(all.body.pagination).toEqual({ next_cursor: null, has_more: false });
    const names: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await roles(owner.token, ws.slug, `?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      names.push(...page.body.data.map((r: any) => r.name));
      cursor = page.body.pagination.next_cursor;
    } while (cursor);
    expect(names).toEqual(["owner", "admin", "member", "r1", "r2"]);
    const bad = await roles(owner.token, ws.slug, "?cursor=not*a*cursor");
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("INVALID_CURSOR");
  });
});
