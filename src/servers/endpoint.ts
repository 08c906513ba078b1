/**
 * The URL of an API path on a server whose base URL may carry a path (a gateway's
 * https://gw.example.com/llm) or already end in the API version users copy from docs
 * (http://host:8000/v1): the path is appended to the base's, and a repeated /v1 is written once.
 */
export function endpoint(base: string, path: string): string {
  const u = new URL(base);
  let prefix = u.pathname.replace(/\/+$/, '');
  if (prefix.endsWith('/v1') && path.startsWith('/v1/')) prefix = prefix.slice(0, -3);
  u.pathname = `${prefix}${path}`;
  u.search = '';
  u.hash = '';
  return u.toString();
}
