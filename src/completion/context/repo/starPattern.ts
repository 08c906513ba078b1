/**
 * What `*` stands for where `pattern` (with at most one `*`, as tsconfig `paths` and package.json `exports`
 * write them) matches `text`: '' for an exact pattern that equals it, null where it does not match.
 */
export function starMatch(pattern: string, text: string): string | null {
  const star = pattern.indexOf('*');
  if (star < 0) return pattern === text ? '' : null;
  const head = pattern.slice(0, star);
  const tail = pattern.slice(star + 1);
  if (text.length < head.length + tail.length || !text.startsWith(head) || !text.endsWith(tail)) return null;
  return text.slice(head.length, text.length - tail.length);
}
