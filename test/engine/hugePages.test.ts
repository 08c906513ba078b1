import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { after, test } from 'node:test';
import { EngineClient } from '../../src/engine/host/client';
import { defaultModelDir } from '../../src/engine/host/defaultModel';
import { HUGE_PAGE_TUNABLE, withHugePageMalloc } from '../../src/engine/host/hugePageMalloc';
import { WORKER } from '../helpers';

test('on Linux the worker environment asks glibc for huge pages, keeping the tunables already set', () => {
  assert.equal(withHugePageMalloc({}, 'linux').GLIBC_TUNABLES, `${HUGE_PAGE_TUNABLE}=1`);
  assert.equal(withHugePageMalloc({ GLIBC_TUNABLES: '' }, 'linux').GLIBC_TUNABLES, `${HUGE_PAGE_TUNABLE}=1`);
  assert.equal(
    withHugePageMalloc({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2', PATH: '/bin' }, 'linux').GLIBC_TUNABLES,
    `glibc.malloc.arena_max=2:${HUGE_PAGE_TUNABLE}=1`,
  );
  assert.equal(withHugePageMalloc({ PATH: '/bin' }, 'linux').PATH, '/bin', 'the rest of the environment is kept');
});

test("a user's own huge-page choice is kept, and other systems' environments are left alone", () => {
  const optOut = { GLIBC_TUNABLES: `glibc.malloc.arena_max=2:${HUGE_PAGE_TUNABLE}=0` };
  assert.deepEqual(withHugePageMalloc(optOut, 'linux'), optOut);
  // A tunable whose name merely starts the same is not the huge-page one.
  assert.equal(withHugePageMalloc({ GLIBC_TUNABLES: `${HUGE_PAGE_TUNABLE}x=3` }, 'linux').GLIBC_TUNABLES, `${HUGE_PAGE_TUNABLE}x=3:${HUGE_PAGE_TUNABLE}=1`);
  for (const platform of ['darwin', 'win32', 'freebsd'] as const) assert.deepEqual(withHugePageMalloc({ PATH: '/bin' }, platform), { PATH: '/bin' });
});

/** Whether this machine grants huge pages to a glibc process that asks: Linux, glibc >= 2.35, THP not `never`. */
function hugePagesAvailable(): boolean {
  if (process.platform !== 'linux') return false;
  const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
  const glibc = report.header?.glibcVersionRuntime;
  const [major, minor] = (glibc ?? '0.0').split('.').map(Number);
  if (major < 2 || (major === 2 && minor < 35)) return false;
  try {
    return !/\[never\]/.test(fs.readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8'));
  } catch {
    return false;
  }
}

const client = new EngineClient({ workerPath: WORKER });
after(async () => client.dispose());

test("the worker process holds the default model's weights on huge pages where the system grants them", async () => {
  await client.load(defaultModelDir(), { threads: 1 });
  const { hugePageBytes, rssBytes } = await client.workerStats();
  if (process.platform !== 'linux') return assert.equal(hugePageBytes, null);
  assert.ok(hugePageBytes !== null, 'Linux reports AnonHugePages');
  if (hugePagesAvailable()) {
    // The shipped model's weights are about 14 MB: most of them on 2 MB pages.
    assert.ok(hugePageBytes >= 8 * 2 ** 20, `${hugePageBytes} bytes on huge pages`);
    assert.ok(hugePageBytes < rssBytes);
  } else assert.equal(hugePageBytes, 0);
});
