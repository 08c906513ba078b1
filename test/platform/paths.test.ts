import assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { isOnnxFileInside } from '../../src/engine/model/modelFolder';
import { checkpointDir, convertingDir, isCheckpointFolder } from '../../src/hub/checkpointStore';
import { repoPathProblem } from '../../src/hub/repoRef';
import { isModelFolder } from '../../src/hub/installedModels';
import { safeJoin } from '../../src/hub/localFiles';
import { caseCollision, portablePathProblem } from '../../src/hub/portablePath';
import { expandHome } from '../../src/platform/expandHome';
import { foldsCase, isInside, samePath } from '../../src/platform/pathInside';

/**
 * Windows and macOS path rules, run on Linux through path.win32 / path.posix (docs/platforms.md): separators,
 * drive letters, UNC shares, drive and share roots, and file systems that ignore case.
 */

const { win32, posix } = path;

test('isInside: Windows drive letters, case, roots and UNC shares', () => {
  assert.ok(isInside('C:\\Models\\X', 'c:\\models\\x\\onnx\\m.onnx', { path: win32 }), 'NTFS ignores case, drive letter included');
  assert.ok(isInside('c:\\Users\\me\\storage', 'C:\\Users\\me\\storage\\checkpoints\\a--b', { path: win32 }));
  assert.ok(isInside('C:\\Models\\X', 'C:/Models/X/onnx/m.onnx', { path: win32 }), 'forward slashes are separators too');
  assert.ok(!isInside('C:\\Models\\X', 'C:\\Models\\X', { path: win32 }), 'the folder itself is not inside');
  assert.ok(!isInside('C:\\Models\\X', 'C:\\Models\\X\\', { path: win32 }));
  assert.ok(!isInside('C:\\Models\\X', 'C:\\Models\\XY\\m.onnx', { path: win32 }), 'a sibling sharing the prefix');
  assert.ok(!isInside('C:\\Models\\X', 'D:\\Models\\X\\m.onnx', { path: win32 }), 'another drive');
  assert.ok(!isInside('C:\\Models\\X', 'C:\\Models\\X\\..\\Y\\m.onnx', { path: win32 }));
  assert.ok(isInside('C:\\', 'C:\\m.onnx', { path: win32 }), 'a drive root (already ends with \\)');
  assert.ok(isInside('\\\\srv\\share\\models', '\\\\SRV\\Share\\models\\x\\m.onnx', { path: win32 }), 'UNC, case ignored');
  assert.ok(!isInside('\\\\srv\\share\\models', '\\\\srv\\other\\models\\m.onnx', { path: win32 }), 'another share');
  assert.ok(!isInside('\\\\srv\\share\\models', 'C:\\models\\m.onnx', { path: win32 }));
  assert.ok(!isInside('C:\\Models\\X', 'c:\\models\\x\\m.onnx', { path: win32, caseInsensitive: false }), 'with case, as asked');
});

test('isInside: posix is case-sensitive on Linux, not on a default macOS disk', () => {
  assert.ok(isInside('/models/x', '/models/x/onnx/m.onnx', { path: posix }));
  assert.ok(isInside('/', '/m.onnx', { path: posix }), 'the root');
  assert.ok(!isInside('/models/x', '/models/xy/m.onnx', { path: posix }));
  assert.ok(!isInside('/Models/X', '/models/x/onnx/m.onnx', { path: posix, caseInsensitive: false }), 'Linux');
  assert.ok(isInside('/Users/me/Models/X', '/users/me/models/x/onnx/m.onnx', { path: posix, caseInsensitive: true }), 'macOS (APFS)');
  assert.ok(foldsCase('win32') && foldsCase('darwin') && !foldsCase('linux'));
});

test('samePath folds case where the platform does', () => {
  assert.ok(samePath('C:\\Storage\\models\\a--b', 'c:\\storage\\MODELS\\a--b\\', { path: win32 }));
  assert.ok(!samePath('C:\\Storage\\models\\a--b', 'D:\\Storage\\models\\a--b', { path: win32 }));
  assert.ok(!samePath('/s/models/A--b', '/s/models/a--b', { path: posix, caseInsensitive: false }));
  assert.ok(samePath('/s/models/A--b', '/s/models/a--b/', { path: posix, caseInsensitive: true }));
});

test("the downloader's repo path check refuses Windows forms on every platform", () => {
  for (const bad of ['..\\x', 'a\\..\\..\\x', 'C:\\x', 'C:x', 'c:/x', '\\\\srv\\share\\x', '//srv/share/x', '\\\\?\\C:\\x', '/x']) {
    assert.ok(repoPathProblem(bad) !== undefined, bad);
  }
  for (const bad of ['onnx./m.onnx', 'a /b', 'CON', 'aux.json', 'onnx/COM1.onnx', 'lpt9', 'ab:c', 'a/b?c', 'a|b', 'con.tar.gz']) {
    assert.ok(repoPathProblem(bad) === undefined && portablePathProblem(bad) !== undefined, bad);
  }
  for (const ok of ['onnx/model_q4.onnx', 'config.json', 'model-00001-of-00002.safetensors', 'console.json', 'a.b/c', 'com.json']) {
    assert.equal(repoPathProblem(ok) ?? portablePathProblem(ok), undefined, ok);
  }
});

test('repo paths that differ only in case are one file on Windows and macOS', () => {
  const files = ['config.json', 'onnx/Model.onnx', 'onnx/model.onnx'];
  assert.deepEqual(caseCollision(files, 'win32'), ['onnx/Model.onnx', 'onnx/model.onnx']);
  assert.deepEqual(caseCollision(files, 'darwin'), ['onnx/Model.onnx', 'onnx/model.onnx']);
  assert.equal(caseCollision(files, 'linux'), undefined);
  assert.equal(caseCollision(['a', 'a', 'b'], 'win32'), undefined, 'the same path twice is not a collision');
});

test('safeJoin with path.win32 and path.posix', () => {
  assert.equal(safeJoin('C:\\Models\\X', 'onnx/m.onnx', win32), 'C:\\Models\\X\\onnx\\m.onnx');
  assert.equal(safeJoin('c:\\models\\x', 'onnx/m.onnx', win32), 'c:\\models\\x\\onnx\\m.onnx');
  assert.equal(safeJoin('\\\\srv\\share\\m', 'config.json', win32), '\\\\srv\\share\\m\\config.json');
  assert.equal(safeJoin('C:\\', 'config.json', win32), 'C:\\config.json', 'a drive root');
  // The second guard, for paths that would get past repoPathProblem: each leaves the folder on Windows.
  for (const bad of ['..\\x', 'C:\\x', 'D:x', '\\\\srv\\share\\x', '\\x', 'a\\..\\..\\x', '.']) {
    assert.throws(() => safeJoin('C:\\Models\\X', bad, win32), /Refusing the file path/, bad);
  }
  assert.equal(safeJoin('/models/x', 'onnx/m.onnx', posix), '/models/x/onnx/m.onnx');
  for (const bad of ['../x', '/x', 'a/../../x']) assert.throws(() => safeJoin('/models/x', bad, posix), /Refusing the file path/, bad);
});

test('ghostline.modelFile must stay inside the model folder, the same rule on every platform', () => {
  const dir = 'C:\\Models\\X';
  for (const ok of ['model_q4.onnx', 'onnx/model_q4.onnx', 'onnx\\model_q4.onnx', 'ONNX\\Model_Q4.onnx']) {
    assert.ok(isOnnxFileInside(dir, ok, win32), ok);
  }
  const bad = ['..\\x.onnx', '../x.onnx', 'onnx\\..\\..\\x.onnx', 'C:\\Models\\X\\onnx\\m.onnx', 'c:\\models\\x\\onnx\\m.onnx', 'C:x.onnx'];
  bad.push('\\\\srv\\share\\x.onnx', '//srv/share/x.onnx', '\\x.onnx', '/x.onnx', '', '.');
  for (const b of bad) {
    assert.ok(!isOnnxFileInside(dir, b, win32), `win32 ${b}`);
    assert.ok(!isOnnxFileInside('/models/x', b, posix), `posix ${b}`);
  }
  assert.ok(isOnnxFileInside('/models/x', 'onnx/model_q4.onnx', posix));
});

test('the checkpoint store and the models folder with Windows paths', () => {
  // VS Code's globalStorageUri.fsPath has a lowercase drive letter; a path from elsewhere may not.
  const storage = 'c:\\Users\\me\\AppData\\Roaming\\Code\\User\\globalStorage\\ghostline.ghostline';
  assert.equal(checkpointDir(storage, 'Qwen/Coder', win32), `${storage}\\checkpoints\\Qwen--Coder`);
  assert.equal(convertingDir(storage, 'Qwen/Coder', win32), `${storage}\\converting\\Qwen--Coder`);
  const upper = `C:${checkpointDir(storage, 'Qwen/Coder', win32).slice(2)}`;
  assert.ok(isCheckpointFolder(storage, upper, win32), 'the drive letter case does not matter');
  assert.ok(isCheckpointFolder(storage, upper.toUpperCase(), win32));
  assert.ok(!isCheckpointFolder(storage, `${storage}\\checkpoints`, win32), 'the root itself is never removed');
  assert.ok(!isCheckpointFolder(storage, `${storage}\\checkpoints\\..\\models\\a--b`, win32));
  assert.ok(!isCheckpointFolder(storage, 'D:\\checkpoints\\a--b', win32));
  assert.ok(isModelFolder(storage, `C:${storage.slice(2)}\\MODELS\\a--b`, win32));
  assert.ok(!isModelFolder(storage, `${storage}\\checkpoints\\a--b`, win32));
  assert.ok(isCheckpointFolder('/s', '/s/checkpoints/a--b', posix));
  assert.ok(!isCheckpointFolder('/s', '/S/checkpoints/a--b', posix) || process.platform === 'darwin');
});

test('~ in ghostline.modelPath is the home folder, with either separator on Windows', () => {
  const home = 'C:\\Users\\me';
  assert.equal(expandHome('~\\models\\x', home, win32), 'C:\\Users\\me\\models\\x');
  assert.equal(expandHome('~/models/x', home, win32), 'C:\\Users\\me\\models\\x');
  assert.equal(expandHome('~', home, win32), 'C:\\Users\\me');
  assert.equal(expandHome('D:\\m\\~x', home, win32), 'D:\\m\\~x');
  assert.equal(expandHome('~/m', '/home/me', posix), '/home/me/m');
  assert.equal(expandHome('/m', '/home/me', posix), '/m');
  assert.equal(expandHome('~other/m', '/home/me', posix), posix.resolve('~other/m'), '~user is not expanded');
});
