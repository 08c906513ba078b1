import { isIP } from 'node:net';
import type { ProxyMap } from './httpTransport';

/**
 * Tells a failure of the proxy apart from a failure of the target, so a wrong `http.proxy` / HTTPS_PROXY
 * is named as such instead of reading as "the hub is unreachable". No vscode import.
 */

export interface ProxyFailure {
  /** The proxy (origin, without credentials). */
  proxy: string;
  /** `unreachable`: no connection to the proxy; `refused`: the proxy answered but would not forward. */
  reason: 'unreachable' | 'refused';
  /** The socket error code (ECONNREFUSED, ENOTFOUND…) or the proxy's HTTP status. */
  code: string;
}

type NetError = NodeJS.ErrnoException & { hostname?: string; address?: string; port?: number };

/** The proxy `err` is about when a request to `url` failed, or undefined when it came from elsewhere. */
export function proxyFailure(err: unknown, url: string, proxies: ProxyMap | undefined): ProxyFailure | undefined {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return undefined;
  }
  const proxy = proxies?.[target.protocol as keyof ProxyMap];
  if (!proxy || !err || typeof err !== 'object') return undefined;
  const e = err as NetError;
  const message = e.message ?? '';
  // undici's words when a proxy answers a CONNECT or a plain request with something else than success.
  const refused = /^Proxy response \((\d+)\)/.exec(message) ?? /^Proxy Authentication Required \((\d+)\)/.exec(message);
  if (refused) return { proxy, reason: 'refused', code: `HTTP ${refused[1]}` };
  if (e.code === 'UND_ERR_PRX_TLS') return { proxy, reason: 'refused', code: e.code };
  const p = new URL(proxy);
  const host = p.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = Number(p.port) || (p.protocol === 'https:' ? 443 : 80);
  // Name resolution of the proxy's host failed.
  if (e.syscall === 'getaddrinfo' && e.hostname?.toLowerCase() === host) return { proxy, reason: 'unreachable', code: e.code ?? 'ENOTFOUND' };
  // A connection to the proxy's port (and address, when the proxy is given as one) failed.
  if (e.syscall === 'connect' && e.port === port && (!isIP(host) || e.address === host)) {
    return { proxy, reason: 'unreachable', code: e.code ?? 'ECONNREFUSED' };
  }
  return undefined;
}

/** The message for a proxy failure: what failed, and where the proxy is set. */
export function proxyFailureMessage(f: ProxyFailure, url: string): string {
  const host = new URL(url).host;
  const where = "VS Code's http.proxy setting, or HTTPS_PROXY / HTTP_PROXY in the environment";
  return f.reason === 'unreachable'
    ? `Cannot reach the proxy ${f.proxy} (${f.code}) to fetch from ${host}: check the proxy address in ${where}, or list ${new URL(url).hostname} in http.noProxy / NO_PROXY to connect directly.`
    : `The proxy ${f.proxy} refused to forward the request to ${host} (${f.code}): check the proxy address and its credentials in ${where}.`;
}
