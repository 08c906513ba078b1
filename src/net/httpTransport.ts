/**
 * Ghostline's one HTTP stack, for the server backends and the Hugging Face downloads alike: a team's server
 * or the hub is often behind a corporate proxy or a TLS-inspecting one signed by an internal CA. Node's
 * global fetch and http.request ignore both HTTP(S)_PROXY and VS Code's proxy settings, so every request goes
 * through an undici dispatcher built here that applies them: the backends through `serverFetch`, the hub
 * client through `httpTransport` (undici's streaming `request`).
 * Pure Node (no vscode import): the extension passes its settings in, the CLI and tests use it as is.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as tls from 'node:tls';
import { Agent, type Dispatcher, EnvHttpProxyAgent, fetch as undiciFetch } from 'undici';

export interface TransportOptions {
  /** VS Code's `http.proxy` setting (empty: use the environment). */
  proxy?: string;
  /** Hosts that bypass the proxy (VS Code's `http.noProxy`), on top of NO_PROXY from the environment. */
  noProxy?: string[];
  /** Extra CA certificates (PEM text) trusted besides the system/Node ones. */
  caPem?: string;
  /** VS Code's `http.proxyStrictSSL`; false accepts any server certificate. Default true. */
  strictSSL?: boolean;
  /**
   * Trust the operating system's certificate store too (VS Code's `http.systemCertificates`): on Windows and
   * macOS a company's TLS-inspecting proxy is trusted there, not in Node's bundled list. Needs a Node that can
   * read the store (22.15+, as in current VS Code); an older one keeps its bundled list.
   */
  systemCas?: boolean;
  /** Defaults to process.env: HTTPS_PROXY/https_proxy, HTTP_PROXY/http_proxy, NO_PROXY/no_proxy. */
  env?: NodeJS.ProcessEnv;
}

/** The global fetch's signature, plus close() to drop the pooled connections when the settings change. */
export type ServerFetch = typeof fetch & { close(): Promise<void> };

/**
 * One dispatcher per call, shared by every request made with the returned fetch, so keep-alive connections
 * (and proxy tunnels) are reused between completions instead of paying a TCP/TLS handshake per keystroke.
 */
export function serverFetch(opts: TransportOptions): ServerFetch {
  const dispatcher = makeDispatcher(opts);
  const f = (input: string | URL | Request, init?: RequestInit) => {
    // undici's fetch only knows its own Request class; a global Request would be read as a URL string.
    if (typeof input === 'object' && !(input instanceof URL)) return Promise.reject(new TypeError('serverFetch takes a URL, not a Request'));
    return undiciFetch(input, { ...init, dispatcher } as Parameters<typeof undiciFetch>[1]) as unknown as Promise<Response>;
  };
  return Object.assign(f, { close: () => dispatcher.close() }) as ServerFetch;
}

/** A dispatcher for streamed requests (the hub client), and the proxies it uses, for error messages. */
export interface HttpTransport {
  readonly dispatcher: Dispatcher;
  /** The proxy for http:// and for https:// targets (origins, credentials left out); undefined: direct. */
  readonly proxies: ProxyMap;
  /** Drops every connection at once, requests still running included: call it when done. */
  close(): Promise<void>;
}

export interface ProxyMap {
  'http:'?: string;
  'https:'?: string;
}

export function httpTransport(opts: TransportOptions): HttpTransport {
  const dispatcher = makeDispatcher(opts);
  const { http, https } = proxySettings(opts);
  return {
    dispatcher,
    proxies: { 'http:': shownProxy(http), 'https:': shownProxy(https) },
    close: () => dispatcher.destroy().catch(() => undefined),
  };
}

/** The proxy URLs (explicit setting first, then the environment) and the hosts that bypass them. */
function proxySettings(opts: TransportOptions): { http: string; https: string; noProxy: string } {
  const env = opts.env ?? process.env;
  const pick = (...names: string[]) => names.map((n) => env[n]?.trim()).find((v) => v) ?? '';
  const httpsProxy = pick('https_proxy', 'HTTPS_PROXY');
  const httpProxy = pick('http_proxy', 'HTTP_PROXY');
  const noProxy = [pick('no_proxy', 'NO_PROXY'), ...(opts.noProxy ?? [])].filter((s) => s).join(',');
  const explicit = opts.proxy?.trim();
  return { http: withScheme(explicit || httpProxy), https: withScheme(explicit || httpsProxy), noProxy };
}

/** `proxy.corp:3128` as curl reads it (http://); a value that still is no URL is an error naming it. */
function withScheme(proxy: string): string {
  if (!proxy) return '';
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(proxy) ? proxy : `http://${proxy}`;
  try {
    new URL(url);
  } catch {
    throw new Error(`the proxy "${shownProxy(proxy)}" (http.proxy, HTTPS_PROXY or HTTP_PROXY) is not a valid URL such as http://proxy.example.com:3128`);
  }
  return url;
}

/** A proxy URL as shown in messages: its origin, without credentials. */
function shownProxy(url: string): string | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return url.replace(/^(.*\/\/)?[^@/]*@/, '$1');
  }
}

function makeDispatcher(opts: TransportOptions): Dispatcher {
  const { http, https, noProxy } = proxySettings(opts);
  // Without `ca` Node trusts its defaults (including NODE_EXTRA_CA_CERTS); giving `ca` replaces them, so
  // the defaults are listed again next to the extra certificates.
  const tlsOpts: tls.ConnectionOptions = { rejectUnauthorized: opts.strictSSL ?? true };
  const extra = [...(opts.systemCas ? systemCas() : []), ...(opts.caPem ? [opts.caPem] : [])];
  if (extra.length > 0) tlsOpts.ca = [...defaultCas(), ...extra];
  // The proxy agents ignore `connect`: the target's TLS options go in requestTls, and proxyTls serves an
  // HTTPS proxy signed by the same internal CA.
  const agentOpts = { connect: tlsOpts, requestTls: tlsOpts, proxyTls: tlsOpts };
  if (!http && !https) return new Agent(agentOpts);
  // Every field is passed (empty strings included) so undici never falls back to process.env when `env`
  // was given: tests and callers get exactly the environment they passed. An http:// target goes to an
  // http:// proxy as a plain absolute-URI request, as curl and VS Code send it (many proxies allow CONNECT
  // to port 443 only); https:// targets are tunnelled with CONNECT.
  return new EnvHttpProxyAgent({ ...agentOpts, httpProxy: http, httpsProxy: https, noProxy, proxyTunnel: false });
}

/**
 * Node 22.15+ reports the CAs it trusts by default (bundled, NODE_EXTRA_CA_CERTS, --use-system-ca); older
 * Nodes only expose the bundled list, so there caPem replaces NODE_EXTRA_CA_CERTS rather than adding to it.
 */
function defaultCas(): readonly string[] {
  const get = (tls as { getCACertificates?: (kind: string) => string[] }).getCACertificates;
  return get ? get('default') : tls.rootCertificates;
}

/** The operating system's trusted certificates (Windows store, macOS keychain, Linux's bundle); none on an older Node. */
export function systemCas(): readonly string[] {
  const get = (tls as { getCACertificates?: (kind: string) => string[] }).getCACertificates;
  if (!get) return [];
  try {
    return get('system');
  } catch {
    return []; // a store that cannot be read leaves Node's own list
  }
}

/** A CA file's PEM text; an error naming the file when it cannot be read or holds no valid certificate. */
export function readCaFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the CA certificate file ${path}: ${(err as Error).message}`);
  }
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  if (!blocks)
    throw new Error(
      `the CA certificate file ${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----); a binary DER file converts with: openssl x509 -inform der -in ${path} -out ca.pem`,
    );
  for (const b of blocks) {
    try {
      new X509Certificate(b);
    } catch (err) {
      throw new Error(`the CA certificate file ${path} holds a damaged certificate: ${(err as Error).message}`);
    }
  }
  return text;
}
