import { expect } from "bun:test";

/**
 * Three reset requests each for a known and an unknown address, interleaved: every answer is
 * 204 and the same, so the flood tells the caller nothing about who has an account.
 */
export async function floodResets(requestReset: (email: string) => Promise<{ status: number; body: unknown }>, known: string, nobody: string) {
  const answers = [];
  for (let i = 0; i < 3; i++) answers.push(await requestReset(known), await requestReset(nobody));
  for (const r of answers) {
    expect(r.status).toBe(204);
    expect(r.body).toBe(answers[0].body);
  }
}
