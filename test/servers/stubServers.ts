import * as http from 'node:http';

const bodies = new WeakMap<http.IncomingMessage, unknown>();

/** The body of a request to a stub server, parsed when JSON (for handlers that answer by what was asked). */
export const bodyOf = (req: http.IncomingMessage) => bodies.get(req) as Record<string, unknown>;

/** A local HTTP server whose handler the test writes (protocol stubs, misbehaving servers). */
export async function stubServer(handler: http.RequestListener): Promise<{ url: string; close: () => Promise<void>; requests: unknown[]; paths: string[] }> {
  /** Each request's body (parsed when JSON) and path, in the order they arrived. */
  const requests: unknown[] = [];
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      let parsed: unknown = body;
      try {
        parsed = JSON.parse(body);
      } catch {
        // not JSON: kept as text
      }
      requests.push(parsed);
      paths.push(req.url ?? '');
      bodies.set(req, parsed);
      handler(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${addr.port}`,
    requests,
    paths,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** One Server-Sent Events line. */
export const sse = (payload: unknown) => `data: ${JSON.stringify(payload)}\n\n`;

/** A server that answers `status` and then streams one endless line (no newline ever) as fast as the client reads. */
export function floodServer(status = 200): ReturnType<typeof stubServer> {
  return stubServer((_req, res) => {
    res.writeHead(status);
    const chunk = 'x'.repeat(64 * 1024);
    const pump = () => {
      while (res.write(chunk)) if (res.writableLength > 1 << 22) break;
      if (!res.destroyed) setTimeout(pump, 1);
    };
    res.on('close', () => res.destroy());
    pump();
  });
}

/** The URL of a port nothing listens on (a stub server's, just closed). */
export async function refusedUrl(): Promise<string> {
  const closed = await stubServer(() => undefined);
  await closed.close();
  return closed.url;
}
