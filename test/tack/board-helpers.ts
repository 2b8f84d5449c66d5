/** Shared steps of the card-board tests: an app, a key, a board workspace with a project. */
import { expect } from "bun:test";
import { ownerWithKey, type TestApp } from "../helpers/app";

export const B = "/tack/api/v1/workspaces";

export interface Board {
  token: string;
  session: string;
  platformWs: { id: string; slug: string };
  ws: string;
  project: string;
  lists: Record<string, string>;
  /** Path of the project: /tack/api/v1/workspaces/{ws}/projects/{project}. */
  p: string;
}

let n = 0;

/** A key allowing everything, a board workspace and a project with lists todo, doing, done. */
export async function newBoard(app: TestApp, lists = ["todo", "doing", "done"]): Promise<Board> {
  const { token, session, ws: platformWs } = await ownerWithKey(app);
  const ws = `board-${++n}`;
  expect((await app.call("POST", B, { token, body: { name: ws } })).status).toBe(201);
  const r = await app.call("POST", `${B}/${ws}/projects`, { token, body: { name: "web", lists: lists.map((name) => ({ name })) } });
  expect(r.status).toBe(201);
  return {
    token,
    session,
    platformWs,
    ws,
    project: r.body.id,
    lists: Object.fromEntries(r.body.lists.map((l: any) => [l.name, l.id])),
    p: `${B}/${ws}/projects/web`,
  };
}

export async function card(app: TestApp, b: Board, body: Record<string, unknown>) {
  const r = await app.call("POST", `${b.p}/cards`, { token: b.token, body });
  if (r.status !== 201) throw new Error(`card create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body as { id: string; position: number; list_id: string } & Record<string, any>;
}

/** Titles of a list's active cards in position order, checking positions are 0..n-1. */
export async function column(app: TestApp, b: Board, list: string): Promise<string[]> {
  const r = await app.call("GET", `${b.p}/cards?list=${list}&limit=100`, { token: b.token });
  expect(r.status).toBe(200);
  expect(r.body.data.map((c: any) => c.position)).toEqual(r.body.data.map((_: unknown, i: number) => i));
  return r.body.data.map((c: any) => c.title);
}
