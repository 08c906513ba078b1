import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { type FolderFs, moveFolderInto, removeFolder, renameWhenFree } from '../../src/platform/folderSwap';
import { FileInUseError, isLockError, retryWhileLocked } from '../../src/platform/lockRetry';

/**
 * Windows' file locks, simulated on Linux: a fake fs function fails with EPERM/EBUSY the way Windows does while
 * a program holds a file open (docs/platforms.md). Checked: brief retries, one clear message naming the folder,
 * and never half a folder.
 */

function errno(code: string, p = 'C:\\m'): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: operation not permitted, rename '${p}'`), { code, path: p });
}

const noSleep = () => {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
};

test('retryWhileLocked: EPERM and EBUSY on Windows are retried with a growing wait, then succeed', async () => {
  for (const code of ['EPERM', 'EBUSY', 'EACCES', 'ENOTEMPTY']) {
    const { waits, sleep } = noSleep();
    let calls = 0;
    const v = await retryWhileLocked(
      () => {
        if (++calls < 3) throw errno(code);
        return 'done';
      },
      { platform: 'win32', sleep },
    );
    assert.equal(v, 'done');
    assert.equal(calls, 3, code);
    assert.deepEqual(waits, [100, 200]);
  }
});

test('retryWhileLocked: gives up after the attempts with the last error; other errors at once', async () => {
  const { waits, sleep } = noSleep();
  let calls = 0;
  await assert.rejects(
    retryWhileLocked(
      () => {
        calls++;
        throw errno('EBUSY');
      },
      { platform: 'win32', attempts: 4, delayMs: 10, sleep },
    ),
    /EBUSY/,
  );
  assert.equal(calls, 4);
  assert.deepEqual(waits, [10, 20, 30]);
  for (const [code, platform] of [
    ['ENOENT', 'win32'],
    ['ENOSPC', 'win32'],
    ['EPERM', 'linux'], // a permission on Linux: waiting does not help
    ['EACCES', 'darwin'],
  ] as const) {
    let n = 0;
    await assert.rejects(
      retryWhileLocked(
        () => {
          n++;
          throw errno(code);
        },
        { platform, sleep },
      ),
      new RegExp(code),
    );
    assert.equal(n, 1, `${code} on ${platform}`);
  }
  assert.ok(isLockError(errno('EBUSY'), 'linux'), 'EBUSY is retried everywhere');
  assert.ok(!isLockError(new Error('x'), 'win32'));
});

/** An in-memory folder tree: path -> files, with a set of folders Windows keeps locked. */
function fakeFs(initial: Record<string, string[]>, locked: Set<string>, failRm = false): FolderFs & { tree: Map<string, string[]>; removed: string[] } {
  const tree = new Map(Object.entries(initial));
  const removed: string[] = [];
  return {
    tree,
    removed,
    existsSync: (p) => tree.has(p),
    renameSync: (from, to) => {
      if (locked.has(from)) throw errno('EPERM', from);
      if (!tree.has(from)) throw errno('ENOENT', from);
      tree.set(to, tree.get(from)!);
      tree.delete(from);
    },
    rmSync: (p) => {
      if (failRm) throw errno('EBUSY', p);
      removed.push(p);
      tree.delete(p);
    },
  };
}

const win = { platform: 'win32' as const, attempts: 3, delayMs: 0 };

test('removeFolder: a locked model folder stays whole, with one message naming it and what to do', async () => {
  const f = fakeFs({ 'C:\\models\\a--b': ['config.json', 'tokenizer.json', 'onnx/model_q4.onnx'] }, new Set(['C:\\models\\a--b']));
  await assert.rejects(removeFolder('C:\\models\\a--b', { ...win, fs: f }), (e: Error) => {
    assert.ok(e instanceof FileInUseError);
    assert.equal(e.file, 'C:\\models\\a--b');
    assert.match(e.message, /^cannot delete C:\\models\\a--b: a file in C:\\models\\a--b is open in another program \(EPERM\)\. Close the model in use/);
    assert.match(e.message, /or pick another output folder/);
    return true;
  });
  assert.deepEqual(f.tree.get('C:\\models\\a--b'), ['config.json', 'tokenizer.json', 'onnx/model_q4.onnx'], 'not a file deleted');
  assert.deepEqual(f.removed, []);
});

test('removeFolder: once renamed aside, a copy that stays locked is left with a log line, not an error', async () => {
  const f = fakeFs({ 'C:\\models\\a--b': ['config.json'] }, new Set(), true);
  const logs: string[] = [];
  await removeFolder('C:\\models\\a--b', { ...win, fs: f, log: (m) => logs.push(m) });
  assert.ok(!f.tree.has('C:\\models\\a--b'), 'the model is gone from where models are listed');
  const left = [...f.tree.keys()];
  assert.equal(left.length, 1);
  assert.match(left[0], /^C:\\models\\a--b\.tmp-old-/);
  assert.match(logs[0], /could not delete .*\.tmp-old-.*can be deleted by hand/);
});

test('moveFolderInto: a locked destination is kept as it was, the new folder is left for the caller', async () => {
  const f = fakeFs({ 'C:\\conv\\model': ['new'], 'C:\\models\\a--b': ['old'] }, new Set(['C:\\models\\a--b']));
  await assert.rejects(moveFolderInto('C:\\conv\\model', 'C:\\models\\a--b', { ...win, fs: f }), /cannot replace C:\\models\\a--b: .*Close the model in use/);
  assert.deepEqual(f.tree.get('C:\\models\\a--b'), ['old']);
  assert.deepEqual(f.tree.get('C:\\conv\\model'), ['new']);
});

test('moveFolderInto: when the new folder cannot be moved in, the old one is put back', async () => {
  const f = fakeFs({ 'C:\\conv\\model': ['new'], 'C:\\models\\a--b': ['old'] }, new Set(['C:\\conv\\model']));
  await assert.rejects(moveFolderInto('C:\\conv\\model', 'C:\\models\\a--b', { ...win, fs: f }), /cannot rename C:\\conv\\model to C:\\models\\a--b/);
  assert.deepEqual(f.tree.get('C:\\models\\a--b'), ['old']);
  assert.deepEqual([...f.tree.keys()].sort(), ['C:\\conv\\model', 'C:\\models\\a--b']);
});

test('moveFolderInto: a lock that clears within the retries is not an error', async () => {
  const locked = new Set(['C:\\conv\\model']);
  const f = fakeFs({ 'C:\\conv\\model': ['new'], 'C:\\models\\a--b': ['old'] }, locked);
  let waits = 0;
  const sleep = async () => {
    if (++waits === 2) locked.clear(); // the virus scan is done
  };
  await moveFolderInto('C:\\conv\\model', 'C:\\models\\a--b', { platform: 'win32', sleep, fs: f });
  assert.deepEqual(f.tree.get('C:\\models\\a--b'), ['new']);
  assert.deepEqual([...f.tree.keys()], ['C:\\models\\a--b'], 'the old folder deleted');
});

test('moveFolderInto and removeFolder on the real file system', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ghostline-swap-'));
  const from = path.join(root, 'new');
  const to = path.join(root, 'models', 'a--b');
  fs.mkdirSync(path.join(from, 'onnx'), { recursive: true });
  fs.writeFileSync(path.join(from, 'onnx', 'm.onnx'), 'new');
  fs.mkdirSync(to, { recursive: true });
  fs.writeFileSync(path.join(to, 'old.onnx'), 'old');
  await moveFolderInto(from, to);
  assert.deepEqual(fs.readdirSync(to).sort(), ['onnx']);
  assert.deepEqual(fs.readdirSync(path.dirname(to)), ['a--b']);
  await removeFolder(to);
  await removeFolder(to); // already gone: nothing to do
  assert.deepEqual(fs.readdirSync(path.dirname(to)), []);
  fs.rmSync(root, { recursive: true, force: true });
});

test('renameWhenFree: a finished download held by a scan for a moment is moved; one held for good is named', async () => {
  let refusals = 2;
  const renamed: string[] = [];
  const scanned: FolderFs = {
    renameSync: (from, to) => {
      if (refusals-- > 0) throw errno('EBUSY', from);
      renamed.push(`${from} -> ${to}`);
    },
    rmSync: () => undefined,
    existsSync: () => true,
  };
  await renameWhenFree('C:\\m\\model.onnx.part', 'C:\\m\\model.onnx', 'move the finished download', { ...win, fs: scanned });
  assert.deepEqual(renamed, ['C:\\m\\model.onnx.part -> C:\\m\\model.onnx']);
  const heldForGood: FolderFs = {
    ...scanned,
    renameSync: (from) => {
      throw errno('EPERM', from);
    },
  };
  await assert.rejects(
    renameWhenFree('C:\\m\\model.onnx.part', 'C:\\m\\model.onnx', 'move the finished download', { ...win, fs: heldForGood, hint: 'Try again in a moment.' }),
    (e: unknown) =>
      e instanceof FileInUseError &&
      /cannot move the finished download: a file in C:\\m\\model\.onnx\.part is open in another program \(EPERM\)\. Try again in a moment\./.test(e.message),
  );
});
