import * as http from 'node:http';

/** A local HTTP server whose handler the test writes (protocol stubs, misbehaving servers). */
export async function stubServer(handler: http.RequestListener): Promise<{ url: string; close: () => Promise<void>; requests: unknown[] }> {
  const requests: unknown[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      try {
        requests.push(JSON.parse(body));
      } catch {
        requests.push(body);
      }
      handler(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${addr.port}`,
    requests,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
