import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for the Hugging Face hub on 127.0.0.1, answering the way the hub does:
 * - `/{owner}/{name}/resolve/{rev}/{file}`: small files 200 with a git-sha1 ETag; LFS files (>= lfsThreshold
 *   bytes, or listed in `lfs`) 302 to a CDN server on another port, with `ETag`, `X-Linked-Etag` ("<sha256>"),
 *   `X-Linked-Size`, `X-Repo-Commit`. HEAD answers the same headers without a body.
 * - `/api/models/{owner}/{name}/revision/{rev}`: `{sha, siblings: [{rfilename, size, lfs?}]}`.
 * - Gated repos: 401 without a token, 403 with a wrong one. Unknown repos: 401 + X-Error-Code RepoNotFound
 *   (as the hub does without a token) or 404 with one; unknown files 404 + EntryNotFound.
 * - CDN: Range (206 + Content-Range, 416 out of range); `dropAfter` closes the connection after N bytes on the
 *   first GET of a file; `corrupt` flips a byte of a file's body; `throttle` sends slowly; `unsized` files are
 *   served chunked with no size header anywhere (no Content-Length, no X-Linked-Size); `extra` appends bytes
 *   to a file's GET body (chunked) while HEAD still declares the true size.
 * - `log` records every request (both servers), so a test can assert that none was made.
 * Repo contents: `fakeModelFiles` (an ONNX export), `fakeCheckpointFiles` (a safetensors checkpoint, single or
 * sharded with an index), `filesFromFolder` (a fixture folder such as test/fixtures/checkpoints/qwen2).
 */

export interface FakeRepo {
  files: Record<string, Buffer>;
  /** Token required (gated repo). */
  token?: string;
  /** Force these files through the LFS path whatever their size. */
  lfs?: string[];
}

export interface LoggedRequest {
  server: 'hub' | 'cdn';
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

export interface FakeHub {
  endpoint: string;
  cdnOrigin: string;
  repos: Map<string, FakeRepo>;
  log: LoggedRequest[];
  /** file path -> bytes after which the first CDN GET of that file is cut. */
  dropAfter: Map<string, number>;
  /** Files whose body is served with one byte changed (headers stay right). */
  corrupt: Set<string>;
  /** Files served chunked, with no size in any header. */
  unsized: Set<string>;
  /** file path -> bytes appended to its GET body (served chunked); HEAD declares the true size. */
  extra: Map<string, number>;
  /** Slow sending: `chunk` bytes every `delayMs`. */
  throttle?: { chunk: number; delayMs: number };
  /** Small files: a relative 307 to `/api/resolve-cache/models/{repo}/{commit}/{file}` (as the hub does now). */
  resolveCache?: boolean;
  /** Answer every resolve with this status (e.g. 503) for the next `n` requests. */
  failNext?: { status: number; n: number };
  close(): Promise<void>;
}

export const COMMIT = '0123456789abcdef0123456789abcdef01234567';

export function sha256(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

function gitSha1(b: Buffer): string {
  return createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex');
}

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function sendBody(res: http.ServerResponse, body: Buffer, hub: FakeHub, dropAt?: number): void {
  const limit = dropAt ?? body.length;
  const t = hub.throttle;
  if (!t && dropAt === undefined) {
    res.end(body);
    return;
  }
  let off = 0;
  const step = () => {
    if (res.destroyed) return;
    if (off >= limit) {
      // Close the connection mid-body (FIN after the bytes sent, short of Content-Length): a reset would
      // also discard bytes still in flight, which makes the cut point random.
      if (dropAt !== undefined) res.socket?.end();
      else res.end();
      return;
    }
    const n = Math.min(t ? t.chunk : limit - off, limit - off);
    const next = () => (t ? setTimeout(step, t.delayMs) : setImmediate(step));
    off += n;
    // Wait until the bytes are handed to the socket: a cut must come after them, not discard them.
    res.write(body.subarray(off - n, off), () => next());
  };
  step();
}

export async function startFakeHub(repos: Record<string, FakeRepo> = {}, lfsThreshold = 1024): Promise<FakeHub> {
  const servers: http.Server[] = [];
  const hub: FakeHub = {
    endpoint: '',
    cdnOrigin: '',
    repos: new Map(Object.entries(repos)),
    log: [],
    dropAfter: new Map(),
    corrupt: new Set(),
    unsized: new Set(),
    extra: new Map(),
    close: async () => {
      for (const s of servers) {
        s.closeAllConnections();
        await new Promise<void>((r) => s.close(() => r()));
      }
    },
  };
  const dropped = new Set<string>();
  // Headers and body for `unsized` / `extra`: no Content-Length, chunked, extra bytes appended.
  const shape = (file: string, method: string, headers: http.OutgoingHttpHeaders, body: Buffer): Buffer => {
    const extra = method === 'HEAD' ? 0 : (hub.extra.get(file) ?? 0);
    if (hub.unsized.has(file) || extra > 0) {
      delete headers['content-length'];
      headers['transfer-encoding'] = 'chunked';
    }
    return extra > 0 ? Buffer.concat([body, Buffer.alloc(extra, 0x5a)]) : body;
  };
  const blobs = new Map<string, { file: string; body: Buffer }>();

  const cdn = http.createServer((req, res) => {
    hub.log.push({ server: 'cdn', method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const m = /^\/lfs\/([0-9a-f]{64})(\?.*)?$/.exec(req.url ?? '');
    const blob = m ? blobs.get(m[1]) : undefined;
    if (!blob) {
      res.writeHead(404).end('no such blob');
      return;
    }
    let body = blob.body;
    if (hub.corrupt.has(blob.file)) {
      body = Buffer.from(body);
      body[Math.floor(body.length / 2)] ^= 0xff;
    }
    let start = 0;
    let end = body.length - 1;
    let status = 200;
    const range = req.headers.range;
    if (range) {
      const r = /^bytes=(\d+)-(\d*)$/.exec(range);
      if (!r || Number(r[1]) >= body.length) {
        res.writeHead(416, { 'content-range': `bytes */${body.length}` }).end();
        return;
      }
      start = Number(r[1]);
      if (r[2]) end = Math.min(end, Number(r[2]));
      status = 206;
    }
    const slice = body.subarray(start, end + 1);
    const headers: http.OutgoingHttpHeaders = {
      'content-type': 'application/octet-stream',
      'content-length': slice.length,
      'accept-ranges': 'bytes',
      etag: `"${sha256(blob.body)}"`,
    };
    if (status === 206) headers['content-range'] = `bytes ${start}-${end}/${hub.unsized.has(blob.file) ? '*' : body.length}`;
    const sent = shape(blob.file, req.method ?? '', headers, slice);
    res.writeHead(status, headers);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    let dropAt: number | undefined;
    const cut = hub.dropAfter.get(blob.file);
    if (cut !== undefined && !dropped.has(blob.file)) {
      dropped.add(blob.file);
      dropAt = Math.min(cut, slice.length);
    }
    sendBody(res, sent, hub, dropAt);
  });

  const main = http.createServer((req, res) => {
    hub.log.push({ server: 'hub', method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const url = new URL(req.url ?? '/', 'http://x');
    const p = decodeURIComponent(url.pathname);
    const api = /^\/api\/models\/([^/]+\/[^/]+)\/revision\/([^/]+)$/.exec(p);
    const cached = /^\/api\/resolve-cache\/models\/([^/]+\/[^/]+)\/([0-9a-f]{40})\/(.+)$/.exec(p);
    const resolve = cached ?? /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(p);
    const repoId = api?.[1] ?? resolve?.[1];
    if (!repoId) {
      res.writeHead(404).end('not found');
      return;
    }
    const auth = req.headers.authorization;
    const repo = hub.repos.get(repoId);
    if (!repo) {
      // The hub hides private repos: 401 without a token, 404 with one.
      res.writeHead(auth ? 404 : 401, { 'x-error-code': 'RepoNotFound', 'x-error-message': 'Repository not found' }).end();
      return;
    }
    if (repo.token) {
      if (!auth) {
        res.writeHead(401, { 'x-error-code': 'GatedRepo', 'x-error-message': 'Access to this model is restricted' }).end();
        return;
      }
      if (auth !== `Bearer ${repo.token}`) {
        res.writeHead(403, { 'x-error-code': 'GatedRepo', 'x-error-message': 'Not in the authorized list' }).end();
        return;
      }
    }
    if (hub.failNext && hub.failNext.n > 0) {
      hub.failNext.n--;
      res.writeHead(hub.failNext.status).end('try later');
      return;
    }
    const isLfs = (f: string) => repo.files[f].length >= lfsThreshold || (repo.lfs ?? []).includes(f);
    if (api) {
      const siblings = Object.keys(repo.files).map((f) =>
        isLfs(f)
          ? { rfilename: f, size: repo.files[f].length, lfs: { sha256: sha256(repo.files[f]), size: repo.files[f].length } }
          : { rfilename: f, size: repo.files[f].length },
      );
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: repoId, sha: COMMIT, siblings }));
      return;
    }
    const file = resolve![3];
    const body = repo.files[file];
    if (!body) {
      res.writeHead(404, { 'x-error-code': 'EntryNotFound', 'x-error-message': 'Entry not found' }).end();
      return;
    }
    if (isLfs(file)) {
      const sum = sha256(body);
      blobs.set(sum, { file, body });
      const location = `${hub.cdnOrigin}/lfs/${sum}?X-Signature=abc&file=${encodeURIComponent(file)}`;
      const text = `Found. Redirecting to ${location}`;
      res.writeHead(302, {
        location,
        etag: `"${sum}"`,
        'x-linked-etag': `"${sum}"`,
        ...(hub.unsized.has(file) ? {} : { 'x-linked-size': body.length }),
        'x-repo-commit': COMMIT,
        'content-length': Buffer.byteLength(text),
      });
      res.end(req.method === 'HEAD' ? undefined : text);
      return;
    }
    if (hub.resolveCache && !cached) {
      res.writeHead(307, { location: `/api/resolve-cache/models/${repoId}/${COMMIT}/${encodeURIComponent(file)}`, 'x-repo-commit': COMMIT }).end();
      return;
    }
    // Small file: served by the hub itself, ETag = git blob sha1.
    let start = 0;
    let status = 200;
    const headers: http.OutgoingHttpHeaders = { etag: `"${gitSha1(body)}"`, 'x-repo-commit': COMMIT, 'accept-ranges': 'bytes' };
    if (req.headers.range) {
      const r = /^bytes=(\d+)-$/.exec(req.headers.range);
      if (!r || Number(r[1]) >= body.length) {
        res.writeHead(416, { 'content-range': `bytes */${body.length}` }).end();
        return;
      }
      start = Number(r[1]);
      status = 206;
      headers['content-range'] = `bytes ${start}-${body.length - 1}/${hub.unsized.has(file) ? '*' : body.length}`;
    }
    const slice = body.subarray(start);
    headers['content-length'] = slice.length;
    const sent = shape(file, req.method ?? '', headers, slice);
    res.writeHead(status, headers);
    if (req.method === 'HEAD') res.end();
    else sendBody(res, sent, hub);
  });

  servers.push(main, cdn);
  const [hubPort, cdnPort] = await Promise.all([listen(main), listen(cdn)]);
  hub.endpoint = `http://127.0.0.1:${hubPort}`;
  hub.cdnOrigin = `http://127.0.0.1:${cdnPort}`;
  return hub;
}

/** A port nothing listens on (for the offline case). */
export async function closedPort(): Promise<number> {
  const s = http.createServer();
  const port = await listen(s);
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** A small model: JSON config/tokenizer files and an ONNX file of `onnxBytes` random bytes. */
export function fakeModelFiles(onnxBytes = 300_000, seed = 1): Record<string, Buffer> {
  // Deterministic pseudo-random bytes (xorshift), so failures reproduce.
  const onnx = Buffer.alloc(onnxBytes);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < onnxBytes; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    onnx[i] = x & 0xff;
  }
  return {
    'config.json': Buffer.from(JSON.stringify({ model_type: 'llama', hidden_size: 64, num_hidden_layers: 2 })),
    'generation_config.json': Buffer.from(JSON.stringify({ eos_token_id: 0 })),
    'tokenizer.json': Buffer.from(JSON.stringify({ version: '1.0', model: { type: 'BPE', vocab: { a: 0 }, merges: [] }, pad: 'x'.repeat(2000) })),
    'tokenizer_config.json': Buffer.from(JSON.stringify({ eos_token: '<eos>' })),
    'onnx/model_quantized.onnx': onnx,
  };
}

/** Deterministic pseudo-random bytes. */
function noise(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}

/** A well-formed safetensors file with one F32 tensor `name` of `floats` values. */
function fakeSafetensors(name: string, floats: number, seed = 1): Buffer {
  const header = Buffer.from(JSON.stringify({ [name]: { dtype: 'F32', shape: [floats], data_offsets: [0, floats * 4] } }));
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(header.length));
  return Buffer.concat([len, header, noise(floats * 4, seed)]);
}

/**
 * A Hugging Face checkpoint repo (config, tokenizer, safetensors weights), for the convert flow with a fake
 * converter. `shards` > 0: the weights split into that many shards named by model.safetensors.index.json;
 * `weightMap` replaces the index's weight_map (bad shard paths).
 */
export function fakeCheckpointFiles(
  opts: { shards?: number; floats?: number; seed?: number; weightMap?: Record<string, string> } = {},
): Record<string, Buffer> {
  const floats = opts.floats ?? 20_000;
  const seed = opts.seed ?? 11;
  const files: Record<string, Buffer> = {
    'config.json': Buffer.from(
      JSON.stringify({ model_type: 'qwen2', architectures: ['Qwen2ForCausalLM'], hidden_size: 64, num_hidden_layers: 2, torch_dtype: 'bfloat16' }),
    ),
    'generation_config.json': Buffer.from(JSON.stringify({ eos_token_id: 0 })),
    'tokenizer.json': Buffer.from(JSON.stringify({ version: '1.0', model: { type: 'BPE', vocab: { a: 0 }, merges: [] }, pad: 'x'.repeat(2000) })),
    'tokenizer_config.json': Buffer.from(JSON.stringify({ eos_token: '<eos>' })),
  };
  const n = opts.shards ?? 0;
  if (n === 0) {
    files['model.safetensors'] = fakeSafetensors('model.embed_tokens.weight', floats, seed);
    return files;
  }
  const weightMap: Record<string, string> = {};
  for (let i = 1; i <= n; i++) {
    const shard = `model-${String(i).padStart(5, '0')}-of-${String(n).padStart(5, '0')}.safetensors`;
    const tensor = `model.layers.${i - 1}.weight`;
    files[shard] = fakeSafetensors(tensor, floats, seed + i);
    weightMap[tensor] = shard;
  }
  files['model.safetensors.index.json'] = Buffer.from(JSON.stringify({ metadata: { total_size: n * floats * 4 }, weight_map: opts.weightMap ?? weightMap }));
  return files;
}

/** Every file under a folder (a test fixture), keyed by its path relative to the folder with "/". */
export function filesFromFolder(dir: string): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  for (const rel of fs.readdirSync(dir, { recursive: true }) as string[]) {
    const p = path.join(dir, rel);
    if (fs.statSync(p).isFile()) out[rel.split(path.sep).join('/')] = fs.readFileSync(p);
  }
  return out;
}
