import * as http from 'node:http';
import * as net from 'node:net';

/**
 * A real HTTP forward proxy on 127.0.0.1, as a corporate proxy behaves: absolute-URI requests
 * (`GET http://host/path`) for http:// targets are forwarded, CONNECT opens a tunnel (https:// targets).
 * It records what it forwarded, so a test can tell that traffic really went through it. With `auth`, a
 * request without that `Proxy-Authorization` gets 407 (and a CONNECT is refused with 407).
 */

export interface ForwardProxy {
  url: string;
  /** Absolute URLs forwarded as plain requests, in order. */
  forwarded: string[];
  /** Authorization headers of those requests (undefined where none), in the same order. */
  authorizations: (string | undefined)[];
  /** `host:port` of each CONNECT tunnel opened. */
  tunnels: string[];
  /** Requests and CONNECTs refused with 407. */
  refused: number;
  /** TCP connections accepted from clients. */
  connections: number;
  close(): Promise<void>;
}

const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'te', 'trailer', 'upgrade'];

export async function startForwardProxy(opts: { auth?: string } = {}): Promise<ForwardProxy> {
  const sockets = new Set<net.Socket>();
  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };
  const p: ForwardProxy = { url: '', forwarded: [], authorizations: [], tunnels: [], refused: 0, connections: 0, close: async () => {} };
  const allowed = (req: http.IncomingMessage) => !opts.auth || req.headers['proxy-authorization'] === opts.auth;

  const server = http.createServer((req, res) => {
    if (!allowed(req)) {
      p.refused++;
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="test"' }).end('proxy authentication required');
      return;
    }
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('a proxy request needs an absolute URI');
      return;
    }
    p.forwarded.push(target.href);
    p.authorizations.push(req.headers.authorization);
    const headers = { ...req.headers };
    for (const h of HOP_BY_HOP) delete headers[h];
    const up = http.request(target, { method: req.method, headers, agent: false }, (upRes) => {
      const out = { ...upRes.headers };
      for (const h of HOP_BY_HOP) delete out[h];
      res.writeHead(upRes.statusCode ?? 502, out);
      upRes.pipe(res);
      // A body the target cut short is cut short for the client too.
      upRes.on('close', () => upRes.complete || res.destroy());
    });
    up.on('error', () => (res.headersSent ? res.destroy() : res.writeHead(502).end('bad gateway')));
    req.pipe(up);
  });
  server.on('connection', (s: net.Socket) => {
    p.connections++;
    track(s);
  });
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    track(client);
    if (!allowed(req)) {
      p.refused++;
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    p.tunnels.push(req.url ?? '');
    const [host, port] = (req.url ?? '').split(':');
    const upstream = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    track(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  p.url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  p.close = () =>
    new Promise((r) => {
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      server.close(() => r());
    });
  return p;
}
