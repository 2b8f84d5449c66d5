/** Reading a body stream with a byte limit: shared by the inbound body reader and outbound HTTP. */

export interface LimitedRead {
  /** At most `limit` bytes, from the start of the stream. */
  bytes: Uint8Array<ArrayBuffer>;
  /** The stream held more than `limit` bytes; it was cancelled instead of read to the end. */
  overflow: boolean;
}

/**
 * Reads `stream` to its end or until it passes `limit` bytes, whichever is first; a large or
 * endless body is cancelled there instead of downloaded. Callers decide: refuse (413) or
 * keep the prefix (a response excerpt).
 */
export async function readLimited(stream: ReadableStream<Uint8Array> | null, limit: number): Promise<LimitedRead> {
  if (!stream) return { bytes: new Uint8Array(0), overflow: false };
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let overflow = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const room = limit - size;
    if (value.byteLength > room) {
      if (room > 0) chunks.push(value.subarray(0, room));
      size = limit;
      overflow = true;
      void reader.cancel().catch(() => {});
      break;
    }
    chunks.push(value);
    size += value.byteLength;
  }
  return { bytes: joinChunks(chunks, size), overflow };
}

/** Chunks read from a stream as one array (the chunk itself when there is just one that owns its buffer). */
export function joinChunks(chunks: readonly Uint8Array[], size: number): Uint8Array<ArrayBuffer> {
  if (chunks.length === 1 && chunks[0].buffer instanceof ArrayBuffer && chunks[0].byteLength === chunks[0].buffer.byteLength) {
    return chunks[0] as Uint8Array<ArrayBuffer>;
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return bytes;
}
