/**
 * The server backends' HTTP client against real parts: a forward proxy (test/net/forwardProxy.ts: plain
 * absolute-URI requests for http:// targets, CONNECT tunnels for https:// ones, as corporate proxies do), plain and TLS servers with a self-signed certificate made by the openssl CLI, and the server
 * generator on top to see the error a user would read.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import type * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { readCaFile, type ServerFetch, serverFetch, systemCas } from '../../src/net/httpTransport';
import { connectionError } from '../../src/servers/serverErrors';
import { ServerGenerator } from '../../src/servers/serverGenerator';
import { type ForwardProxy, startForwardProxy } from '../net/forwardProxy';

interface Served {
  url: string;
  /** TCP connections accepted so far. */
  connections: number;
  server: http.Server;
}

async function serve(server: http.Server, scheme: 'http' | 'https'): Promise<Served> {
  const s: Served = { url: '', connections: 0, server };
  server.on(scheme === 'https' ? 'secureConnection' : 'connection', () => s.connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  s.url = `${scheme}://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  return s;
}

const hello: http.RequestListener = (req, res) => {
  if (req.url === '/api/generate') {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.end(`${JSON.stringify({ response: 'ok', done: false })}\n${JSON.stringify({ response: '', done: true, done_reason: 'stop' })}\n`);
    return;
  }
  res.end(`hello ${req.url}`);
};

let dir: string;
let caPem: string;
let plain: Served;
let secure: Served;
let proxy: ForwardProxy;
/** Requests that went through the proxy so far, plain or tunnelled. */
const viaProxy = () => proxy.forwarded.length + proxy.tunnels.length;
const fetches: ServerFetch[] = [];
/** Every client made here is closed at the end, so no pooled socket outlives the file. */
const client = (opts: Parameters<typeof serverFetch>[0]) => {
  const f = serverFetch(opts);
  fetches.push(f);
  return f;
};

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-tls-'));
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-days', '1'].concat([
      '-keyout',
      key,
      '-out',
      cert,
    ]),
    { stdio: 'pipe' },
  );
  caPem = fs.readFileSync(cert, 'utf8');
  plain = await serve(http.createServer(hello), 'http');
  secure = await serve(https.createServer({ key: fs.readFileSync(key), cert: caPem }, hello), 'https');
  proxy = await startForwardProxy();
});

after(async () => {
  await Promise.all(fetches.map((f) => f.close()));
  for (const s of [plain.server, secure.server]) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  await proxy.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const text = async (f: typeof fetch, url: string) => {
  const res = await f(url);
  assert.equal(res.status, 200);
  const body = await res.text();
  // undici puts the socket back in its pool a tick after the body ends; the next keystroke comes later.
  await new Promise((r) => setImmediate(r));
  return body;
};

test('direct: no proxy anywhere, and one keep-alive connection carries successive requests', async () => {
  const f = client({ env: {} });
  const before = plain.connections;
  assert.equal(await text(f, `${plain.url}/a`), 'hello /a');
  assert.equal(await text(f, `${plain.url}/b`), 'hello /b');
  assert.equal(plain.connections - before, 1);
  assert.equal(viaProxy(), 0);
});

test('the proxy setting: http:// as absolute-URI requests on one kept-alive proxy connection, https:// in one reused CONNECT tunnel', async () => {
  const f = client({ proxy: proxy.url, env: {} });
  const n = proxy.forwarded.length;
  const c = proxy.connections;
  assert.equal(await text(f, `${plain.url}/via`), 'hello /via');
  assert.equal(await text(f, `${plain.url}/again`), 'hello /again');
  assert.deepEqual(proxy.forwarded.slice(n), [`${plain.url}/via`, `${plain.url}/again`]);
  assert.equal(proxy.connections - c, 1);
  const t = proxy.tunnels.length;
  const s = client({ proxy: proxy.url, caPem, env: {} });
  assert.equal(await text(s, `${secure.url}/via`), 'hello /via');
  assert.equal(await text(s, `${secure.url}/again`), 'hello /again');
  assert.deepEqual(proxy.tunnels.slice(t), [new URL(secure.url).host]);
});

test('HTTP_PROXY / HTTPS_PROXY from the environment are used, and only the given env is read', async () => {
  const saved = process.env.no_proxy;
  // Were the given env merged with process.env, this would send the request direct.
  process.env.no_proxy = '127.0.0.1';
  try {
    const n = proxy.forwarded.length;
    assert.equal(await text(client({ env: { HTTP_PROXY: proxy.url, NO_PROXY: '' } }), `${plain.url}/env`), 'hello /env');
    assert.equal(proxy.forwarded.length, n + 1);
    const t = proxy.tunnels.length;
    assert.equal(await text(client({ env: { https_proxy: proxy.url, NO_PROXY: '' }, caPem }), `${secure.url}/env`), 'hello /env');
    assert.equal(proxy.tunnels.length, t + 1);
  } finally {
    if (saved === undefined) delete process.env.no_proxy;
    else process.env.no_proxy = saved;
  }
});

test('hosts in NO_PROXY (or the noProxy setting) go direct, with the proxy from the env or the setting', async () => {
  const n = viaProxy();
  const cases: Parameters<typeof serverFetch>[0][] = [
    { env: { HTTP_PROXY: proxy.url, NO_PROXY: 'localhost,127.0.0.1' } },
    { env: { http_proxy: proxy.url, no_proxy: `127.0.0.1:${new URL(plain.url).port}` } },
    { proxy: proxy.url, env: { NO_PROXY: '127.0.0.1' } },
    { proxy: proxy.url, env: {}, noProxy: ['example.com', '127.0.0.1'] },
  ];
  for (const opts of cases) {
    const before = plain.connections;
    assert.equal(await text(client(opts), `${plain.url}/direct`), 'hello /direct', JSON.stringify(opts));
    assert.equal(plain.connections, before + 1, JSON.stringify(opts));
  }
  assert.equal(viaProxy(), n);
  // A NO_PROXY for another host leaves this one proxied.
  assert.equal(await text(client({ proxy: proxy.url, env: { NO_PROXY: 'localhost,10.0.0.1' } }), `${plain.url}/p`), 'hello /p');
  assert.equal(viaProxy(), n + 1);
});

test('a self-signed server: refused without its CA, in words naming the certificate; trusted with caPem or strictSSL false', async () => {
  const url = `${secure.url}/tls`;
  const err = await client({ env: {} })(url).then(
    () => assert.fail('a self-signed certificate was accepted'),
    (e: unknown) => e,
  );
  assert.match(connectionError(url, err).message, /^the request to https:\/\/127\.0\.0\.1:\d+\/tls failed: .*certificate/);
  assert.equal(await text(client({ env: {}, caPem }), url), 'hello /tls');
  assert.equal(await text(client({ env: {}, strictSSL: false }), url), 'hello /tls');
});

test('through the proxy, the target server is checked with caPem too', async () => {
  const url = `${secure.url}/tunnel`;
  const n = proxy.tunnels.length;
  await assert.rejects(client({ proxy: proxy.url, env: {} })(url), (e: Error) => /certificate/.test(connectionError(url, e).message));
  assert.equal(await text(client({ proxy: proxy.url, env: {}, caPem }), url), 'hello /tunnel');
  assert.equal(proxy.tunnels.length, n + 2);
});

test('the server generator over this client: a completion with the CA, the certificate error without it', async () => {
  const infill = { prefix: 'x = ', suffix: '\n', middle: '', extra: [] };
  const good = new ServerGenerator({ kind: 'ollama', url: secure.url, timeoutMs: 5000, fetch: client({ env: {}, caPem }) });
  assert.equal((await good.generate('p', { maxNewTokens: 4 }, { infill })).text, 'ok');
  const bad = new ServerGenerator({ kind: 'ollama', url: secure.url, timeoutMs: 5000, fetch: client({ env: {} }) });
  await assert.rejects(bad.generate('p', { maxNewTokens: 4 }, { infill }), /failed: .*certificate/);
});

test('a Request object is refused plainly rather than misread as a URL', async () => {
  await assert.rejects(client({ env: {} })(new Request(plain.url)), /takes a URL, not a Request/);
});

test('readCaFile: the PEM text, or an error naming the file', () => {
  assert.equal(readCaFile(path.join(dir, 'cert.pem')), caPem);
  const missing = path.join(dir, 'nope.pem');
  assert.throws(
    () => readCaFile(missing),
    (e: Error) => e.message.includes(missing) && /cannot read/.test(e.message),
  );
  const der = path.join(dir, 'ca.der');
  fs.writeFileSync(der, Buffer.from([0x30, 0x82, 0x01, 0x0a, 0x02]));
  assert.throws(
    () => readCaFile(der),
    (e: Error) => e.message.includes(der) && /no PEM certificate/.test(e.message),
  );
  const damaged = path.join(dir, 'damaged.pem');
  fs.writeFileSync(damaged, caPem.replace(/\n[A-Za-z0-9+/]{20}/, '\n!!!!'));
  assert.throws(
    () => readCaFile(damaged),
    (e: Error) => e.message.includes(damaged) && /damaged/.test(e.message),
  );
});

test("the system's certificate store is added to, never instead of, Node's list and the CA file", async () => {
  const url = `${secure.url}/system`;
  // Still the CA file's server: the system store comes on top of it.
  assert.equal(await text(client({ env: {}, caPem, systemCas: true }), url), 'hello /system');
  // And the self-signed server is still refused with the system store alone (it is not in it).
  await assert.rejects(client({ env: {}, systemCas: true })(url));
  const cas = systemCas();
  assert.ok(Array.isArray(cas));
  // Where Node can read the store (22.15+, as in current VS Code), it gives PEM certificates.
  for (const c of cas.slice(0, 3)) assert.match(c, /-----BEGIN CERTIFICATE-----/);
});
