/**
 * This node's name, stable across restarts, so that work a process had claimed when it died
 * (mail it was sending, webhook deliveries in flight) is found and taken back by the next
 * process of the same node at start, instead of waiting out the claim's lease.
 *
 * - The name is NODE_ID when set, else one generated once and kept in DATA_DIR/node-id.
 * - Claims are written as `<name>/<process>/...` (NodeIdentity.owner): the process part is
 *   new at every start, so a process tells its own live claims from a previous life's.
 * - A name is used by one live process at a time: each process holds a lock on
 *   DATA_DIR/node-<name>.lock (the kernel drops it when the process ends, SIGKILL included,
 *   like data-dir-lock.ts). PostgreSQL nodes may share DATA_DIR (objects) and then the
 *   generated name: a second live process on it takes the next free one (`<name>.1`,
 *   `<name>.2`...), so a restarting node never takes a live sibling's claims.
 *
 * The identity belongs to the process (the lock and the process part are the process's), so
 * it is kept per process and data directory: apps started again in one process (tests) get
 * the same one.
 */
import { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { linkSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config";

export const NODE_ID_FILE = "node-id";
/** Names tried on one DATA_DIR: more live processes than this sharing it is a misconfiguration. */
const MAX_SLOTS = 64;

export interface NodeIdentity {
  /** The node's name (NODE_ID, the generated one, or either with a `.n` slot suffix). */
  readonly id: string;
  /** `<id>/<process>`: the owner of this process's claims (a claim appends its own token). */
  readonly owner: string;
  /**
   * SQL LIKE patterns (escape character `\`) over claim owners: `previousLives` matches the
   * claims of this node's earlier processes, `mine` this process's own.
   */
  readonly patterns: { readonly previousLives: string; readonly mine: string };
}

const byDataDir = new Map<string, NodeIdentity>();
/** The name locks, held for the process's life (a lock whose handle is collected is freed). */
const heldLocks: Database[] = [];

const likePrefix = (s: string) => `${s.replace(/[\\%_]/g, (c) => `\\${c}`)}/%`;

/** The name kept in DATA_DIR, made once (two processes starting together agree on one). */
function storedName(dataDir: string): string {
  const path = join(dataDir, NODE_ID_FILE);
  try {
    return readFileSync(path, "utf8").trim();
  } catch (e) {
    if ((e as { code?: string }).code !== "ENOENT") throw e;
  }
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(tmp, `node-${randomBytes(6).toString("hex")}\n`);
  try {
    linkSync(tmp, path); // fails when another process made it first: theirs wins
  } catch (e) {
    if ((e as { code?: string }).code !== "EEXIST") throw e;
  } finally {
    unlinkSync(tmp);
  }
  return readFileSync(path, "utf8").trim();
}

/** Locks DATA_DIR/node-<name>.lock for this process; null when a live process holds it. */
function lockName(dataDir: string, name: string): Database | null {
  const db = new Database(join(dataDir, `node-${name}.lock`), { create: true, readwrite: true });
  try {
    db.run("PRAGMA busy_timeout = 0");
    db.run("PRAGMA journal_mode = MEMORY");
    db.run("PRAGMA locking_mode = EXCLUSIVE");
    db.run("BEGIN EXCLUSIVE");
    return db;
  } catch (e) {
    db.close();
    if ((e as { code?: string }).code === "SQLITE_BUSY") return null;
    throw e;
  }
}

/** This process's identity on `config.dataDir` (made, and its name locked, on first use). */
export function nodeIdentity(config: Pick<Config, "dataDir" | "nodeId">): NodeIdentity {
  const key = `${config.dataDir}\n${config.nodeId ?? ""}`;
  const known = byDataDir.get(key);
  if (known) return known;
  const base = config.nodeId ?? storedName(config.dataDir);
  for (let slot = 0; slot < MAX_SLOTS; slot++) {
    const id = slot === 0 ? base : `${base}.${slot}`;
    const lock = lockName(config.dataDir, id);
    if (!lock) continue;
    const owner = `${id}/${randomBytes(6).toString("hex")}`;
    heldLocks.push(lock);
    const identity = { id, owner, patterns: { previousLives: likePrefix(id), mine: likePrefix(owner) } };
    byDataDir.set(key, identity);
    return identity;
  }
  throw new Error(`more than ${MAX_SLOTS} live processes use node name ${base} on DATA_DIR ${config.dataDir}: give each node its own NODE_ID`);
}

/** The app's node identity (AppContext.node, set on first use). */
export function nodeOf(ctx: { config: Pick<Config, "dataDir" | "nodeId">; node?: NodeIdentity }): NodeIdentity {
  return (ctx.node ??= nodeIdentity(ctx.config));
}
