import * as fs from 'node:fs';
import * as path from 'node:path';

/** The folder of the package (the one whose package.json is named "ghostline"), found from a file inside it. */
export function packageRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (fs.existsSync(pkg)) {
      try {
        if (JSON.parse(fs.readFileSync(pkg, 'utf8')).name === 'ghostline') return dir;
      } catch {
        // not ours; keep walking up
      }
    }
    if (path.dirname(dir) === dir) throw new Error(`cannot find the ghostline package above ${from}`);
  }
}

/** The model shipped in models/: the folder named by package.json "ghostline.defaultModel". */
export function defaultModelDir(root: string = packageRoot()): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { ghostline?: { defaultModel?: string } };
  const name = pkg.ghostline?.defaultModel;
  if (!name) throw new Error('package.json has no ghostline.defaultModel');
  return path.join(root, 'models', name);
}
