import { describe, expect, test } from "bun:test";
import { readLimited } from "../../src/core/streams";

/** A stream of the given chunks; records whether the reader cancelled it. */
function streamOf(chunks: number[]) {
  const state = { cancelled: false };
  let i = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (i < chunks.length) c.enqueue(new Uint8Array(chunks[i]).fill(i++ + 1));
      else c.close();
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

describe("readLimited", () => {
  test("exactly the limit, in several chunks: whole, no overflow", async () => {
    const { stream, state } = streamOf([3, 4, 3]);
    const r = await readLimited(stream, 10);
    expect(r.overflow).toBe(false);
    expect([...r.bytes]).toEqual([1, 1, 1, 2, 2, 2, 2, 3, 3, 3]);
    expect(state.cancelled).toBe(false);
  });

  test("one byte over: the first `limit` bytes, overflow, the rest never read", async () => {
    const { stream, state } = streamOf([6, 5, 1000]);
    const r = await readLimited(stream, 10);
    expect(r.overflow).toBe(true);
    expect([...r.bytes]).toEqual([1, 1, 1, 1, 1, 1, 2, 2, 2, 2]);
    expect(state.cancelled).toBe(true);
  });

  test("no stream, an empty stream", async () => {
    expect(await readLimited(null, 10)).toEqual({ bytes: new Uint8Array(0), overflow: false });
    expect((await readLimited(streamOf([]).stream, 10)).bytes.byteLength).toBe(0);
  });
});
