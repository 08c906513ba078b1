/**
 * Download Model behind a proxy: the real downloader against the fake hub, through a real forward proxy on
 * 127.0.0.1 (test/net/forwardProxy.ts), over the same transport as the server backends. The hub is also
 * served over TLS (a self-signed certificate from the openssl CLI, trusted with caPem) so that one download
 * takes both roads: a CONNECT tunnel to the https:// hub, plain absolute-URI requests to the http:// CDN.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as tls from 'node:tls';
import { after, before, beforeEach, test } from 'node:test';
import { downloadModel, modelDir } from '../../src/hub/downloader';
import { HubError, isTransient } from '../../src/hub/hubErrors';
import { listRepoFiles } from '../../src/hub/hubClient';
import { commonFiles, type ModelFile } from '../../src/hub/recommended';
import type { TransportOptions } from '../../src/net/httpTransport';
import { startForwardProxy, type ForwardProxy } from '../net/forwardProxy';
import { closedPort, fakeModelFiles, startFakeHub, type FakeHub } from './fakeHub';

const REPO = 'acme/proxied-coder';
const TOKEN = 'hf_proxy_token';
const FILES: ModelFile[] = [...commonFiles(), { path: 'onnx/model_quantized.onnx' }];
const model = fakeModelFiles(60_000, 5);

let hub: FakeHub;
let proxy: ForwardProxy;
let authProxy: ForwardProxy;
let tlsHub: { endpoint: string; caPem: string; close: () => Promise<void> };
let tmp: string;
let storage: string;

/** The fake hub behind a TLS front (https://127.0.0.1:port), its certificate made by openssl. */
async function tlsFront(target: string, dir: string): Promise<typeof tlsHub> {
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', '/CN=127.0.0.1'];
  execFileSync('openssl', [...args, '-addext', 'subjectAltName=IP:127.0.0.1', '-days', '1', '-keyout', key, '-out', cert], { stdio: 'pipe' });
  const caPem = fs.readFileSync(cert, 'utf8');
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  const server = tls.createServer({ key: fs.readFileSync(key), cert: caPem }, (s) => {
    const up = net.connect(Number(port), hostname);
    for (const x of [s, up]) {
      sockets.add(x);
      x.on('close', () => sockets.delete(x));
      x.on('error', () => undefined);
    }
    s.pipe(up).pipe(s);
    s.on('close', () => up.destroy());
    up.on('close', () => s.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const endpoint = `https://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  const close = () =>
    new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
  return { endpoint, caPem, close };
}

before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-proxy-'));
  hub = await startFakeHub({ [REPO]: { files: model, token: TOKEN } });
  proxy = await startForwardProxy();
  authProxy = await startForwardProxy({ auth: `Basic ${Buffer.from('ann:s3cret').toString('base64')}` });
  tlsHub = await tlsFront(hub.endpoint, tmp);
});
after(async () => {
  await Promise.all([hub.close(), proxy.close(), authProxy.close(), tlsHub.close()]);
  fs.rmSync(tmp, { recursive: true, force: true });
});
beforeEach(() => {
  storage = fs.mkdtempSync(path.join(tmp, 'storage-'));
  hub.log.length = 0;
  for (const p of [proxy, authProxy]) {
    p.forwarded.length = 0;
    p.authorizations.length = 0;
    p.tunnels.length = 0;
    p.refused = 0;
  }
});

const download = (transport: TransportOptions | undefined, extra: { endpoint?: string; env?: NodeJS.ProcessEnv } = {}) =>
  downloadModel({ endpoint: hub.endpoint, env: {}, ...extra, transport, repo: REPO, token: TOKEN, files: FILES, storageDir: storage, retryDelayMs: 10 });

function assertDownloaded(): void {
  const dir = modelDir(storage, REPO);
  for (const [f, body] of Object.entries(model)) assert.deepEqual(fs.readFileSync(path.join(dir, f)), body, f);
}

const host = (origin: string) => new URL(origin).host;

test('the http.proxy setting: every request of a download goes through the proxy, the CDN redirect included', async () => {
  await download({ proxy: proxy.url, env: {} });
  assertDownloaded();
  // Every request the hub and the CDN answered came through the proxy, and the proxy forwarded to both.
  assert.equal(proxy.forwarded.length, hub.log.length);
  assert.ok(proxy.forwarded.some((u) => u.startsWith(`${hub.endpoint}/${REPO}/resolve/`)));
  assert.ok(proxy.forwarded.some((u) => u.startsWith(`${hub.cdnOrigin}/lfs/`)));
  assert.deepEqual(proxy.tunnels, []);
  // The token went to the hub only: never on to the CDN's host.
  proxy.forwarded.forEach((u, i) => {
    const toHub = new URL(u).origin === hub.endpoint;
    assert.equal(proxy.authorizations[i], toHub ? `Bearer ${TOKEN}` : undefined, u);
  });
});

test('an https hub is tunnelled (CONNECT) with the private CA, the http CDN forwarded, Range resume through the proxy', async () => {
  hub.dropAfter.set('onnx/model_quantized.onnx', 20_000);
  await download({ proxy: proxy.url, caPem: tlsHub.caPem, env: {} }, { endpoint: tlsHub.endpoint });
  assertDownloaded();
  assert.ok(proxy.tunnels.length >= 1);
  assert.ok(proxy.tunnels.every((t) => t === host(tlsHub.endpoint)));
  // Inside the tunnel the hub saw the token; the CDN (plain, through the proxy) never did.
  assert.ok(hub.log.some((r) => r.server === 'hub' && r.headers.authorization === `Bearer ${TOKEN}`));
  const cdn = proxy.forwarded.filter((u) => u.startsWith(hub.cdnOrigin));
  assert.ok(cdn.length >= 2, 'the cut GET and its resume');
  assert.ok(proxy.authorizations.every((a) => a === undefined));
  assert.ok(hub.log.some((r) => r.server === 'cdn' && r.headers.range === 'bytes=20000-'));
  // Without the CA the same hub is refused, in words about its certificate.
  await assert.rejects(download({ proxy: proxy.url, env: {} }, { endpoint: tlsHub.endpoint }), (e: HubError) => /certificate/i.test(e.message));
});

test('HTTPS_PROXY / HTTP_PROXY from the environment are used when no setting is given (the CLI, and VS Code without http.proxy)', async () => {
  await download(undefined, { env: { HTTP_PROXY: proxy.url } });
  assertDownloaded();
  assert.equal(proxy.forwarded.length, hub.log.length);
  const listing = await listRepoFiles(tlsHub.endpoint, REPO, 'main', { token: TOKEN, env: { HTTPS_PROXY: proxy.url }, transport: { caPem: tlsHub.caPem } });
  assert.equal(listing.files.length, Object.keys(model).length);
  assert.deepEqual(proxy.tunnels, [host(tlsHub.endpoint)]);
});

test('noProxy and NO_PROXY bypass the proxy', async () => {
  const cases: (TransportOptions | { env: NodeJS.ProcessEnv })[] = [
    { proxy: proxy.url, noProxy: ['example.com', '127.0.0.1'], env: {} },
    { proxy: proxy.url, env: { NO_PROXY: 'localhost,127.0.0.1' } },
  ];
  for (const transport of cases) {
    storage = fs.mkdtempSync(path.join(tmp, 'storage-'));
    await download(transport);
    assertDownloaded();
  }
  storage = fs.mkdtempSync(path.join(tmp, 'storage-'));
  await download(undefined, { env: { HTTP_PROXY: proxy.url, NO_PROXY: '127.0.0.1' } });
  assertDownloaded();
  assert.ok(hub.log.length > 0);
  assert.deepEqual(proxy.forwarded, []);
  assert.deepEqual(proxy.tunnels, []);
});

test('a proxy that cannot be reached gives one clear error naming it, and nothing reaches the hub', async () => {
  const wrong = `http://127.0.0.1:${await closedPort()}`;
  for (const transport of [{ proxy: wrong, env: {} }, { env: { HTTP_PROXY: wrong } }]) {
    const err = await download(transport).then(
      () => assert.fail('expected an error'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof HubError, String(err));
    assert.equal(err.kind, 'offline');
    assert.equal(err.message.split(wrong).length, 2, err.message);
    assert.match(err.message, /^Cannot reach the proxy http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\) to fetch from 127\.0\.0\.1:\d+: .*http\.proxy/);
    assert.equal(isTransient(err), false, 'not retried');
  }
  assert.equal(hub.log.length, 0);
});

test('a proxy that wants credentials: one 407, reported once without retries; the credentials in the URL are sent and never shown', async () => {
  for (const endpoint of [hub.endpoint, tlsHub.endpoint]) {
    authProxy.refused = 0;
    await assert.rejects(download({ proxy: authProxy.url, caPem: tlsHub.caPem, env: {} }, { endpoint }), (e: HubError) => {
      assert.equal(e.kind, 'http');
      assert.match(e.message, /^The proxy http:\/\/127\.0\.0\.1:\d+ refused to forward the request to 127\.0\.0\.1:\d+ \(HTTP 407\)/);
      return true;
    });
    assert.equal(authProxy.refused, 1, endpoint);
  }
  assert.equal(hub.log.length, 0);
  const withCreds = authProxy.url.replace('http://', 'http://ann:s3cret@');
  await download({ proxy: withCreds, caPem: tlsHub.caPem, env: {} }, { endpoint: tlsHub.endpoint });
  assertDownloaded();
  assert.ok(authProxy.tunnels.length >= 1 && authProxy.forwarded.length >= 1);
  // A wrong password is named by the proxy's address only.
  const wrongCreds = authProxy.url.replace('http://', 'http://ann:nope@');
  storage = fs.mkdtempSync(path.join(tmp, 'storage-'));
  await assert.rejects(download({ proxy: wrongCreds, env: {} }), (e: HubError) => !e.message.includes('nope') && /HTTP 407/.test(e.message));
});

test('a proxy setting that is no URL is refused in words before any request', async () => {
  await assert.rejects(download({ proxy: 'http://[bad', env: {} }), (e: HubError) => e instanceof HubError && /not a valid URL/.test(e.message));
  assert.equal(hub.log.length, 0);
});
