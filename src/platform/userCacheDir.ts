import * as os from 'node:os';
import * as path from 'node:path';

/**
 * Ghostline's folder for what the CLI remembers between runs (the device verdicts), where each platform keeps
 * caches: %LOCALAPPDATA% on Windows, ~/Library/Caches on macOS, $XDG_CACHE_HOME or ~/.cache elsewhere. The
 * editor uses its global storage instead.
 */
export function userCacheDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform, home = os.homedir()): string {
  if (platform === 'win32') return path.win32.join(env.LOCALAPPDATA || path.win32.join(home, 'AppData', 'Local'), 'ghostline');
  if (platform === 'darwin') return path.posix.join(home, 'Library', 'Caches', 'ghostline');
  const xdg = env.XDG_CACHE_HOME;
  // The XDG spec ignores a relative path.
  return path.posix.join(xdg && path.posix.isAbsolute(xdg) ? xdg : path.posix.join(home, '.cache'), 'ghostline');
}
