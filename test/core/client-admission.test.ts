/**
 * The cap on requests in progress per client address is exact across the switch from
 * remembering requests (fewer than the cap in progress in all) to counting them per address.
 */
import { expect, test } from "bun:test";
import { ClientAdmission, type AdmissionSlot } from "../../src/core/client-admission";

/** Requests whose address is the text after "#" in their URL (a stand-in for server.requestIP). */
const from = (address: string) => new Request(`http://x/#${address}`);
const addressOf = (r: Request) => r.url.split("#")[1] || null;

test("no address passes the cap, whether its requests came in before or after the server was crowded", () => {
  const a = new ClientAdmission(3, addressOf);
  const held: AdmissionSlot[] = [];
  // Three from A while the server is quiet: remembered, not attributed.
  for (let i = 0; i < 3; i++) {
    const s: AdmissionSlot = {};
    expect(a.admit(s, from("A"))).toBe(true);
    held.push(s);
  }
  // The fourth from A: the total reached the cap, so all are attributed and A is full.
  expect(a.admit({}, from("A"))).toBe(false);
  const b: AdmissionSlot = {};
  expect(a.admit(b, from("B"))).toBe(true);
  // One of A's ends: A may have one more, then is full again.
  a.release(held.pop()!);
  const again: AdmissionSlot = {};
  expect(a.admit(again, from("A"))).toBe(true);
  expect(a.admit({}, from("A"))).toBe(false);
  // All end (twice over: release is idempotent); the quiet mode returns and nothing is left counted.
  for (const s of [...held, b, again, b]) a.release(s);
  for (let i = 0; i < 3; i++) expect(a.admit({}, from("A"))).toBe(true);
  expect(a.admit({}, from("A"))).toBe(false);
});

test("requests without an address (in-process) are admitted and counted in the total only", () => {
  const a = new ClientAdmission(2, addressOf);
  const slots = Array.from({ length: 5 }, () => ({}) as AdmissionSlot);
  for (const s of slots) expect(a.admit(s, from(""))).toBe(true);
  for (const s of slots) a.release(s);
  expect(a.admit({}, from("A"))).toBe(true);
  expect(a.admit({}, from("A"))).toBe(true);
  expect(a.admit({}, from("A"))).toBe(false);
});
