import * as os from 'node:os';
import * as path from 'node:path';
import type { PathModule } from './pathInside';

/**
 * `~`, `~/x` and, on Windows, `~\x` in a setting (ghostline.modelPath) to the user's home folder, then resolved.
 * os.homedir() rather than $HOME: Windows usually has no HOME (it has USERPROFILE), so `~` stayed literal and
 * the model folder was looked up under the current directory. `~user/x` is left as it is. No `vscode` import.
 */
export function expandHome(p: string, home: string = os.homedir(), pathMod: PathModule = path): string {
  const sep = pathMod.sep === '\\' ? /^~(?=$|[\\/])/ : /^~(?=$|\/)/;
  return pathMod.resolve(p.replace(sep, () => home));
}
