/**
 * The Worker of mail-inbound's ceiling: mailparser and mailauth alone on the bench's message,
 * back to back, `inFlight` at a time, with the options Bunker gives them (PARSE_OPTIONS,
 * AUTH_OPTIONS) and a resolver with the same 30-second cache against the same DNS server.
 * No SMTP, no object store, no database: what a message costs before Bunker does anything.
 * Answers { warm: true } after warm-up, then the messages finished in `ms`.
 */
import { authenticate } from "mailauth";
import { simpleParser } from "mailparser";
import { AUTH_OPTIONS, mailauthResolver } from "../../src/services/mail/inbound/auth";
import { PARSE_OPTIONS } from "../../src/services/mail/parse";

declare const self: Worker;

export interface CeilingJob {
  raw: Uint8Array;
  dns: string;
  ip: string;
  helo: string;
  sender: string;
  mta: string;
  inFlight: number;
  warmupMs: number;
  ms: number;
}

self.onmessage = async (ev: MessageEvent<CeilingJob>) => {
  const j = ev.data;
  const raw = Buffer.from(j.raw);
  const resolver = mailauthResolver([j.dns]);
  const one = () => Promise.all([simpleParser(raw, PARSE_OPTIONS), authenticate(raw, { ip: j.ip, helo: j.helo, sender: j.sender, mta: j.mta, resolver: resolver as never, ...AUTH_OPTIONS })]);
  const loop = async (until: number, count: () => void) => {
    await Promise.all(
      Array.from({ length: j.inFlight }, async () => {
        while (performance.now() < until) {
          await one();
          count();
        }
      }),
    );
  };
  await loop(performance.now() + j.warmupMs, () => {});
  self.postMessage({ warm: true });
  let n = 0;
  await loop(performance.now() + j.ms, () => n++);
  self.postMessage({ n });
};
