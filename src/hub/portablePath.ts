import { foldsCase } from '../platform/pathInside';

/**
 * Repo paths that hubClient.repoPathProblem accepts but that Windows (and a case-insensitive macOS disk)
 * would write somewhere else than the path says. Refused on every platform, so a model folder downloaded on
 * Linux behaves the same when the user's settings sync to Windows, and a test on Linux covers Windows:
 * - a reserved device name as a segment (`CON`, `nul.onnx`, `COM1.json`): opening it opens the device;
 * - a segment ending in "." or " ": Windows strips it, so `onnx./m.onnx` is written as `onnx/m.onnx`;
 * - `<>:"|?*`: not allowed in Windows names, and `file:stream` writes an NTFS alternate data stream.
 * Backslashes, drive letters (`C:\x`, `C:x`), UNC paths (`\\srv\share`, `//srv/share`) and `..` are
 * already refused by repoPathProblem. No `vscode` import.
 */

const RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(\..*)?$/i;

/** Why `p` (already accepted by repoPathProblem) is not a portable file path, or undefined. */
export function portablePathProblem(p: string): string | undefined {
  for (const seg of p.split('/')) {
    if (/[<>:"|?*]/.test(seg)) return `"${seg}" has a character Windows does not allow in a file name (<>:"|?*)`;
    if (/[. ]$/.test(seg)) return `"${seg}" ends with "." or a space, which Windows drops`;
    if (RESERVED.test(seg)) return `"${seg}" is a device name on Windows`;
  }
  return undefined;
}

/**
 * Two repo paths that are one file where names ignore case (`Model.onnx`, `model.onnx`): the second download
 * would overwrite the first on Windows and macOS. Returns the first such pair.
 */
export function caseCollision(paths: readonly string[], platform: NodeJS.Platform = process.platform): [string, string] | undefined {
  // Checked on every platform by default would refuse repos Linux can download; only where it happens.
  if (!foldsCase(platform)) return undefined;
  const seen = new Map<string, string>();
  for (const p of paths) {
    const k = p.toLowerCase();
    const other = seen.get(k);
    if (other !== undefined && other !== p) return [other, p];
    seen.set(k, p);
  }
  return undefined;
}
