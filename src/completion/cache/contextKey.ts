import { createHash } from 'node:crypto';

/** Hash of everything around the cursor except the cursor line's prefix (which changes on each keystroke). */
export function contextHash(parts: { path: string; prefix: string; lineSuffix: string; suffix: string; extra: string }): string {
  return createHash('sha1')
    .update(parts.path)
    .update('\0')
    .update(parts.extra)
    .update('\0')
    .update(parts.prefix)
    .update('\0')
    .update(parts.lineSuffix)
    .update('\0')
    .update(parts.suffix)
    .digest('base64');
}
