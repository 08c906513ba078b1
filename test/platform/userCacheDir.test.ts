import assert from 'node:assert/strict';
import { test } from 'node:test';
import { userCacheDir } from '../../src/platform/userCacheDir';

test("each platform's cache folder; a relative XDG_CACHE_HOME is ignored, as the spec says", () => {
  assert.equal(userCacheDir({ LOCALAPPDATA: 'C:\\Users\\a\\AppData\\Local' }, 'win32', 'C:\\Users\\a'), 'C:\\Users\\a\\AppData\\Local\\ghostline');
  assert.equal(userCacheDir({}, 'win32', 'C:\\Users\\a'), 'C:\\Users\\a\\AppData\\Local\\ghostline');
  assert.equal(userCacheDir({ XDG_CACHE_HOME: '/x' }, 'darwin', '/Users/a'), '/Users/a/Library/Caches/ghostline');
  assert.equal(userCacheDir({ XDG_CACHE_HOME: '/x/cache' }, 'linux', '/home/a'), '/x/cache/ghostline');
  assert.equal(userCacheDir({ XDG_CACHE_HOME: 'rel' }, 'linux', '/home/a'), '/home/a/.cache/ghostline');
  assert.equal(userCacheDir({}, 'linux', '/home/a'), '/home/a/.cache/ghostline');
});
