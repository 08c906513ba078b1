/**
 * The payloads of a streamed HTTP body: Server-Sent Events (`data: {...}` lines, `data: [DONE]` at the end)
 * or NDJSON (one JSON object per line). A line cut by the end of the body is reported, not guessed at.
 */
/** No payload of a completion stream comes near this; a line that grows past it is a hostile or broken server. */
const MAX_LINE_CHARS = 1 << 20;

export async function* streamPayloads(body: AsyncIterable<Uint8Array>, format: 'sse' | 'ndjson'): AsyncGenerator<unknown> {
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of body) {
    buf += decoder.decode(chunk, { stream: true });
    let nl = buf.indexOf('\n');
    while (nl >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '');
      buf = buf.slice(nl + 1);
      const payload = parseLine(line, format);
      if (payload === DONE) return;
      if (payload !== SKIP) yield payload;
      nl = buf.indexOf('\n');
    }
    if (buf.length > MAX_LINE_CHARS) throw new ServerProtocolError(`the server sent a line longer than ${MAX_LINE_CHARS} characters`);
  }
  buf += decoder.decode();
  if (buf.trim() !== '') {
    const payload = parseLine(buf, format);
    if (payload !== DONE && payload !== SKIP) yield payload;
  }
}

/** An answer that is not streamed (a /tokenize, /props or model list) stays far below this. */
export const MAX_ANSWER_BYTES = 16 << 20;
/** What an error message can use of an error's body. */
const MAX_ERROR_BODY_BYTES = 64 << 10;

/**
 * Reads a body that is not streamed to its end, failing once it passes `maxBytes`: a broken or hostile server
 * that never stops answering must not fill the extension host's memory. `keep` false: read and discarded.
 */
export async function readCapped(body: AsyncIterable<Uint8Array> | null, maxBytes: number, what: string, keep = true): Promise<string> {
  if (!body) return '';
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.byteLength;
    if (bytes > maxBytes) throw new ServerProtocolError(`the server sent more than ${maxBytes} bytes in answer to ${what}`);
    if (keep) chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A warm-up's answer, read to its end and discarded. */
export async function drainCapped(body: AsyncIterable<Uint8Array> | null, maxBytes = MAX_LINE_CHARS): Promise<void> {
  await readCapped(body, maxBytes, 'a warm-up', false);
}

/** An error's body for its message: empty when unreadable or larger than an error message could use. */
export function errorBody(res: Response): Promise<string> {
  return readCapped(res.body, MAX_ERROR_BODY_BYTES, 'an error').catch(() => '');
}

const DONE = Symbol('done');
const SKIP = Symbol('skip');

function parseLine(line: string, format: 'sse' | 'ndjson'): unknown {
  if (line.trim() === '') return SKIP;
  let data = line;
  if (format === 'sse') {
    // Comments (": ping") and other fields (event:, id:) carry no payload here.
    if (!line.startsWith('data:')) return SKIP;
    data = line.slice(5).trim();
    if (data === '[DONE]') return DONE;
  }
  try {
    return JSON.parse(data);
  } catch {
    throw new ServerProtocolError(`the server sent a line that is not JSON: ${JSON.stringify(data.slice(0, 120))}`);
  }
}

export class ServerProtocolError extends Error {
  override name = 'ServerProtocolError';
}
