/**
 * `bunker backup` and `bunker restore`: a backup is a directory that restores on its own.
 *
 *   <backup>/manifest.json   what is inside (format, version, time, counts)
 *   <backup>/bunker.db       online snapshot of the database (VACUUM INTO: consistent while
 *                            the server writes)
 *   <backup>/objects/        copy of DATA_DIR/objects (local object store only)
 *   <backup>/master.key      only with --include-key
 *
 * The database is copied first, then the objects: an object added in between is an extra
 * file (harmless), an object deleted in between is missing from the copy. The backup is
 * written next to its target and renamed into place when complete, so a failed run never
 * leaves something that looks like a backup.
 */
import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { keyCheckValue, loadMasterKey, masterKeyPath, safeEqual } from "./secrets";
import { ensureWritableDir, reason, StartupError } from "./startup";
import { integrityCheck, isBunkerDb, openExistingSqlite as openExistingDb, readKeyCheckSync as readKeyCheck, vacuumInto as snapshot } from "./store/sqlite";

const FORMAT = "bunker-backup";
const FORMAT_VERSION = 1;
const DB_FILE = "bunker.db";
const OBJECTS = "objects";
const MANIFEST = "manifest.json";
const KEY_FILE = "master.key";

export interface Manifest {
  format: typeof FORMAT;
  format_version: number;
  bunker_version: string;
  created_at: string;
  database: { file: string; bytes: number };
  objects: { location: "included"; files: number; bytes: number } | { location: "s3"; bucket: string | null } | { location: "none" };
  includes_key: boolean;
}

export interface BackupSource {
  dataDir: string;
  objectStore: "local" | "s3";
  s3Bucket: string | null;
  masterKey: string | null;
}

type Progress = (line: string) => void;

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** Files and bytes under a folder, skipping the local store's in-flight temp files. */
function tally(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile() || isTempObject(e.name)) continue;
    files++;
    bytes += statSync(join(e.parentPath, e.name)).size;
  }
  return { files, bytes };
}

/** objects.ts writes `.<hex>.tmp` and renames it into place: never part of a backup. */
const isTempObject = (name: string) => name.startsWith(".") && name.endsWith(".tmp");

const copyObjects = (from: string, to: string) => cpSync(from, to, { recursive: true, filter: (src) => !isTempObject(basename(src)) });

const nonEmpty = (path: string) => existsSync(path) && (!statSync(path).isDirectory() || readdirSync(path).length > 0);

/** The key text as it would sit in master.key: MASTER_KEY when set, else the key file. */
function keyText(src: BackupSource): string {
  if (src.masterKey) return src.masterKey.trim() + "\n";
  const path = masterKeyPath(src.dataDir);
  if (!existsSync(path)) throw new StartupError(`--include-key: MASTER_KEY is unset and ${path} does not exist`);
  return readFileSync(path, "utf8");
}

export function createBackup(target: string, src: BackupSource, o: { includeKey: boolean; force: boolean; version: string; now: Date; progress: Progress }): Manifest {
  const dbPath = join(src.dataDir, DB_FILE);
  const db = openExistingDb(dbPath);
  if (!db) throw new StartupError(`no database at ${dbPath}: check DATA_DIR (nothing was backed up)`);
  const staging = join(dirname(target), `.${basename(target)}.partial-${process.pid}`);
  try {
    if (!isBunkerDb(db)) throw new StartupError(`${dbPath} is not a Bunker database (nothing was backed up)`);
    if (nonEmpty(target) && !o.force) throw new StartupError(`${target} already exists: choose a new path, or pass --force to replace it`);
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true, mode: 0o700 });

    o.progress(`database: snapshot of ${dbPath} ...`);
    snapshot(db, join(staging, DB_FILE));
    const dbBytes = statSync(join(staging, DB_FILE)).size;
    o.progress(`database: ${mb(dbBytes)}`);

    let objects: Manifest["objects"] = { location: "none" };
    const objectsDir = join(src.dataDir, OBJECTS);
    if (src.objectStore === "s3") {
      objects = { location: "s3", bucket: src.s3Bucket };
      o.progress(`objects: kept in S3 bucket ${src.s3Bucket ?? "(unset)"}, not copied: back the bucket up with your S3 tooling`);
    } else if (existsSync(objectsDir)) {
      o.progress(`objects: copying ${objectsDir} ...`);
      copyObjects(objectsDir, join(staging, OBJECTS));
      objects = { location: "included", ...tally(join(staging, OBJECTS)) };
      o.progress(`objects: ${objects.files} files, ${mb(objects.bytes)}`);
    } else {
      o.progress("objects: none yet");
    }

    if (o.includeKey) {
      writeFileSync(join(staging, KEY_FILE), keyText(src), { mode: 0o600 });
      chmodSync(join(staging, KEY_FILE), 0o600);
      o.progress("key: INCLUDED. Anyone holding this backup can decrypt every stored secret (signing keys, webhook secrets, TOTP seeds): keep it encrypted and access-controlled");
    } else {
      o.progress("key: not included. Keep MASTER_KEY (or DATA_DIR/master.key) safe separately: a restore cannot start without it (or pass --include-key)");
    }

    const manifest: Manifest = {
      format: FORMAT,
      format_version: FORMAT_VERSION,
      bunker_version: o.version,
      created_at: o.now.toISOString(),
      database: { file: DB_FILE, bytes: dbBytes },
      objects,
      includes_key: o.includeKey,
    };
    writeFileSync(join(staging, MANIFEST), JSON.stringify(manifest, null, 2) + "\n");
    if (existsSync(target)) rmSync(target, { recursive: true, force: true }); // --force (checked above)
    renameSync(staging, target);
    return manifest;
  } catch (e) {
    rmSync(staging, { recursive: true, force: true });
    if (e instanceof StartupError) throw e;
    throw new StartupError(`backup failed: ${reason(e)}`);
  } finally {
    db.close();
  }
}

/** A backup directory, or a bare database file from `bunker backup <file>` of earlier versions. */
function readBackup(source: string): { dbFile: string; objectsDir: string | null; keyFile: string | null } {
  if (!existsSync(source)) throw new StartupError(`${source} does not exist`);
  if (statSync(source).isFile()) return { dbFile: source, objectsDir: null, keyFile: null };
  const manifestPath = join(source, MANIFEST);
  let manifest: Partial<Manifest>;
  try {
    manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  } catch {
    throw new StartupError(`${source} is not a Bunker backup (no readable ${MANIFEST})`);
  }
  if (manifest.format !== FORMAT || manifest.format_version !== FORMAT_VERSION) throw new StartupError(`${source}: unsupported backup format ${manifest.format} v${manifest.format_version}`);
  const objectsDir = join(source, OBJECTS);
  const keyFile = join(source, KEY_FILE);
  return { dbFile: join(source, DB_FILE), objectsDir: existsSync(objectsDir) ? objectsDir : null, keyFile: existsSync(keyFile) ? keyFile : null };
}

/**
 * Restores into an empty (or new) DATA_DIR. With `force`, the database, objects and (when
 * the backup has one) the key of DATA_DIR are replaced: stop the server first. Ends by
 * checking the key that the restored instance will start with against the database.
 */
export function restoreBackup(source: string, dest: BackupSource, o: { force: boolean; progress: Progress }): { keyMatches: boolean | null } {
  const b = readBackup(source);
  const check = openExistingDb(b.dbFile);
  if (!check) throw new StartupError(`${b.dbFile} is missing: the backup is incomplete`);
  try {
    if (!isBunkerDb(check)) throw new StartupError(`${b.dbFile} is not a Bunker database`);
    o.progress(`database: checking ${b.dbFile} ...`);
    const integrity = integrityCheck(check);
    if (integrity !== "ok") throw new StartupError(`${b.dbFile} is damaged (${integrity})`);
  } finally {
    check.close();
  }

  ensureWritableDir(dest.dataDir);
  const dbPath = join(dest.dataDir, DB_FILE);
  const objectsDir = join(dest.dataDir, OBJECTS);
  const keyPath = masterKeyPath(dest.dataDir);
  if (!o.force && (existsSync(dbPath) || nonEmpty(objectsDir))) {
    throw new StartupError(`${dest.dataDir} already holds a database or objects: restore into an empty DATA_DIR, or pass --force to replace them (stop the server first)`);
  }
  if (!o.force && b.keyFile && existsSync(keyPath) && readFileSync(keyPath, "utf8").trim() !== readFileSync(b.keyFile, "utf8").trim()) {
    throw new StartupError(`${keyPath} exists and differs from the backup's key: move it away, or pass --force to replace it`);
  }

  try {
    // A stale WAL beside the restored file would be replayed into it: remove both first.
    for (const f of [dbPath, `${dbPath}-wal`, `${dbPath}-shm`]) rmSync(f, { force: true });
    const partial = `${dbPath}.partial-${process.pid}`;
    cpSync(b.dbFile, partial);
    renameSync(partial, dbPath);
    o.progress(`database: restored to ${dbPath}`);

    rmSync(objectsDir, { recursive: true, force: true });
    if (b.objectsDir) {
      copyObjects(b.objectsDir, objectsDir);
      const t = tally(objectsDir);
      o.progress(`objects: ${t.files} files, ${mb(t.bytes)} restored to ${objectsDir}`);
    } else {
      o.progress("objects: none in the backup");
    }

    if (b.keyFile) {
      writeFileSync(keyPath, readFileSync(b.keyFile), { mode: 0o600 });
      chmodSync(keyPath, 0o600);
      o.progress(`key: restored to ${keyPath}`);
    }
  } catch (e) {
    throw new StartupError(`restore failed: ${reason(e)}`);
  }
  return { keyMatches: verifyRestoredKey(dbPath, dest, o.progress) };
}

/** Reports whether the key the server will use is the database's; null when there is none yet. */
function verifyRestoredKey(dbPath: string, dest: BackupSource, progress: Progress): boolean | null {
  const db = openExistingDb(dbPath)!;
  let expected: string | null;
  try {
    expected = readKeyCheck(db);
  } catch {
    expected = null; // a backup from before key checks: the first start records the key
  } finally {
    db.close();
  }
  if (!dest.masterKey && !existsSync(masterKeyPath(dest.dataDir))) {
    progress(`key: NONE. Set MASTER_KEY to the original key, or copy the original master.key into ${dest.dataDir}, before starting`);
    return null;
  }
  if (expected === null) return null;
  let key: Uint8Array;
  try {
    key = loadMasterKey({ masterKey: dest.masterKey, dataDir: dest.dataDir });
  } catch (e) {
    progress(`key: unreadable (${reason(e)})`);
    return false;
  }
  const ok = safeEqual(expected, keyCheckValue(key));
  progress(ok ? "key: matches the database" : `key: does NOT match the database: the server will refuse to start until ${dest.masterKey ? "MASTER_KEY" : "master.key"} is the original key`);
  return ok;
}

/**
 * The operator's backup download (GET /platform/v1/admin/backup): a consistent online
 * snapshot of the live SQLite database written to `target`, the same file `bunker backup`
 * puts in <backup>/bunker.db (`bunker restore <file>` takes it as it is). A separate
 * read-only connection makes the copy, so the server keeps writing meanwhile; an in-memory
 * database is copied from the writer between transactions.
 */
export async function snapshotLiveDatabase(db: { location: string; exclusive<T>(fn: (writer: import("bun:sqlite").Database) => T): Promise<T> }, target: string): Promise<void> {
  if (db.location === ":memory:") return db.exclusive((w) => snapshot(w, target));
  const ro = openExistingDb(db.location);
  if (!ro) throw new Error(`no database at ${db.location}`);
  try {
    snapshot(ro, target);
  } finally {
    ro.close();
  }
}
