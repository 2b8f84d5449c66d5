/**
 * Opens the master key and proves it is the one the database was created with. The first
 * start records a key-check value; every later start compares against it, so a wrong
 * MASTER_KEY or a restore without master.key stops start-up with a message, instead of
 * passing /readyz and then failing the first request that decrypts a secret.
 */
import { existsSync } from "node:fs";
import type { Db } from "./db";
import { keyCheckValue, loadMasterKey, masterKeyPath, safeEqual } from "./secrets";
import { reason, StartupError } from "./startup";
import { insertKeyCheck, readKeyCheck } from "./store/key-check";

export async function unlockMasterKey(db: Db, opts: { masterKey: string | null; dataDir: string }, now: string): Promise<Uint8Array> {
  const keyFile = masterKeyPath(opts.dataDir);
  const source = opts.masterKey ? "MASTER_KEY" : keyFile;
  const expected = await readKeyCheck(db);
  // Creating a fresh key file next to a database that has one would only hide the loss.
  if (expected !== null && !opts.masterKey && !existsSync(keyFile)) {
    throw new StartupError(`no master key: MASTER_KEY is unset and ${keyFile} is missing, but this database was created with a key. Set MASTER_KEY, or restore master.key from the backup (bunker backup --include-key)`);
  }
  let key: Uint8Array;
  try {
    key = loadMasterKey(opts);
  } catch (e) {
    throw new StartupError(reason(e));
  }
  const value = keyCheckValue(key);
  if (expected === null) await insertKeyCheck(db, value, now);
  // Read back: a concurrent first start may have recorded its key first.
  if (!safeEqual((await readKeyCheck(db)) ?? "", value)) {
    throw new StartupError(`${source} is not the master key this database was created with; refusing to start. Use the original key (MASTER_KEY, or the master.key from the same backup as the database)`);
  }
  return key;
}
