// The hub's response headers, read strictly: a value that does not parse is undefined, never a guess.

/** A byte count from a header (Content-Length, X-Linked-Size): plain decimal digits only, else undefined. */
export function parseSize(v: string | undefined): number | undefined {
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  if (!/^\d{1,16}$/.test(t)) return undefined;
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** `Content-Range: bytes start-end/total` (total may be `*`), consistent, else undefined. */
export function parseContentRange(v: string | undefined): { start: number; end: number; total?: number } | undefined {
  const m = typeof v === 'string' ? /^bytes (\d{1,16})-(\d{1,16})\/(\d{1,16}|\*)$/.exec(v.trim()) : null;
  if (!m) return undefined;
  const start = Number(m[1]);
  const end = Number(m[2]);
  const total = m[3] === '*' ? undefined : Number(m[3]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end < start) return undefined;
  if (total !== undefined && (!Number.isSafeInteger(total) || end >= total)) return undefined;
  return { start, end, total };
}

/** The sha256 an ETag carries, when it is one (LFS files); undefined for a git sha1 (small files) or anything else. */
export function sha256FromEtag(etag: string | undefined): string | undefined {
  if (!etag) return undefined;
  const v = etag.trim().replace(/^W\//, '').replace(/^"|"$/g, '').toLowerCase();
  return /^[0-9a-f]{64}$/.test(v) ? v : undefined;
}
