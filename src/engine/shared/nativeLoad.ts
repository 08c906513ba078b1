/**
 * Why onnxruntime-node's native code did not load, in words a user can act on. The worker loads it lazily and
 * sends this back as a typed error (name `NativeLoadError`), so the editor shows the operating system's own
 * message, the file it names and what to do, instead of "the worker exited (code 1)".
 *
 * Pure: the OS message and the host are inputs, so every platform's wording has a test on any platform.
 */

export interface NativeHost {
  platform: string;
  arch: string;
  /** The Visual C++ runtime DLLs the package imports (dist/native.json), named in the Windows hint. */
  vcRuntimeDlls?: string[];
}

export interface NativeLoadFailure {
  /** The loader's message as the operating system gave it (first line on Windows, where the path follows). */
  osMessage: string;
  /** The file the message names, else the binding that was being loaded. */
  file: string;
  /** What to do about it. */
  hint: string;
}

export const NATIVE_LOAD_ERROR = 'NativeLoadError';

const TEAM_SERVER = 'or set "ghostline.backend" to a team server (llama.cpp, OpenAI-compatible or Ollama), which needs no native code';

/** Microsoft's permanent link to the latest supported Visual C++ Redistributable for Visual Studio 2015-2022. */
function vcRedistUrl(arch: string): string {
  return `https://aka.ms/vs/17/release/vc_redist.${arch === 'arm64' ? 'arm64' : 'x64'}.exe`;
}

interface Rule {
  test: (message: string, host: NativeHost) => boolean;
  hint: (host: NativeHost, file: string) => string;
}

/** First match wins: specific OS wordings before the generic ones. */
const RULES: Rule[] = [
  {
    // require() of the binding itself: this platform has no build in the package.
    test: (m) => /Cannot find module .*onnxruntime_binding\.node/.test(m),
    hint: (h) =>
      `Ghostline's local engine has no build for ${h.platform}-${h.arch}${h.platform === 'darwin' && h.arch === 'x64' ? ' (Intel Macs: only Apple silicon has one)' : ''}; ` +
      `install the package for this platform from the Marketplace, ${TEAM_SERVER}.`,
  },
  {
    // Windows error 1114: an older msvcp140.dll was loaded first (from PATH or already in the process).
    test: (m, h) => h.platform === 'win32' && /dynamic link library \(DLL\) initialization routine failed/i.test(m),
    hint: (h) =>
      `An older Visual C++ runtime was loaded first (another program's msvcp140.dll on PATH). Update the Microsoft Visual C++ Redistributable ` +
      `2015-2022 (${h.arch}) from ${vcRedistUrl(h.arch)}, remove older copies of msvcp140.dll from folders on PATH, and reload the window.`,
  },
  {
    test: (m, h) => h.platform === 'win32' && /not a valid Win32 application/i.test(m),
    hint: (h) => `The native file is damaged or for another architecture than ${h.arch}: reinstall Ghostline.`,
  },
  {
    // Any other Windows load failure: error 126 (a DLL the binding or onnxruntime.dll imports is not found), nearly
    // always the C++ runtime. Matched last among the Windows rules and by platform, not by wording: Windows words
    // it in the user's language ("The specified module could not be found.", "Das angegebene Modul ...").
    test: (_m, h) => h.platform === 'win32',
    hint: (h) =>
      `Install the Microsoft Visual C++ Redistributable for Visual Studio 2015-2022 (${h.arch}) from ${vcRedistUrl(h.arch)} and reload the window` +
      `${h.vcRuntimeDlls?.length ? ` (the engine imports ${h.vcRuntimeDlls.join(', ')} from it)` : ''}; ` +
      'if it is installed, the extension folder is incomplete: reinstall Ghostline.',
  },
  {
    test: (m, h) => h.platform === 'darwin' && /built for (newer )?macOS( version)?|minimum (macOS|OS) version/i.test(m),
    hint: () => `This macOS is older than the local engine needs (see the message); update macOS, ${TEAM_SERVER}.`,
  },
  {
    test: (m, h) => h.platform === 'darwin' && /incompatible architecture|mach-o file, but is an incompatible/i.test(m),
    hint: () => 'VS Code runs under Rosetta (its Intel build) on Apple silicon: install the Apple silicon build of VS Code.',
  },
  {
    test: (m, h) => h.platform === 'linux' && /GLIBC(XX)?_[\d.]+' not found/.test(m),
    hint: () =>
      `This Linux's C or C++ runtime (glibc, libstdc++) is older than the local engine needs (the version is in the message); ` +
      `use a newer distribution, ${TEAM_SERVER}.`,
  },
  {
    test: (m) => /invalid ELF header|file too short|wrong ELF class|not a mach-o file|unknown file type|slice is not valid|truncated|code signature/i.test(m),
    hint: () => 'A native file of the extension is damaged: reinstall Ghostline.',
  },
  {
    test: (m, h) => h.platform === 'linux' && /cannot open shared object file/.test(m),
    hint: (_h, file) =>
      /onnxruntime/.test(file)
        ? 'A native file of the extension is missing: reinstall Ghostline (an antivirus may have removed it).'
        : `The system library ${file} is missing: install it with your distribution's package manager (it comes with the C/C++ runtime).`,
  },
  {
    test: (m, h) => h.platform === 'darwin' && /Library not loaded/.test(m),
    hint: () => 'A native file of the extension is missing: reinstall Ghostline.',
  },
];

const FALLBACK_HINT = `Reinstall Ghostline; if it happens again, report the message above, ${TEAM_SERVER}.`;

/** The file an OS loader message names, or `fallback` when it names none. */
export function fileNamedBy(message: string, fallback: string): string {
  const patterns = [
    /Cannot find module '([^']+)'/, // Node's require
    /Library not loaded: (\S+)/, // macOS dyld, a dependency
    /dlopen\(([^,]+),/, // macOS dyld, the file itself
    /^([^\s:]+): (?:cannot open shared object file|invalid ELF header|file too short|wrong ELF class)/m, // glibc's ld.so
    /version `[^']+' not found \(required by ([^)]+)\)/, // glibc symbol versions
    /\r?\n(\\\\\?\\[^\r\n]+|[A-Za-z]:\\[^\r\n]+)/, // Windows: the path follows the message on the next line
  ];
  for (const re of patterns) {
    const m = re.exec(message);
    if (m?.[1]) return m[1].trim();
  }
  return fallback;
}

/** Explains a failed load of `binding` on `host`. */
export function explainNativeLoad(err: unknown, binding: string, host: NativeHost): NativeLoadFailure {
  const message = err instanceof Error ? err.message : String(err);
  const file = fileNamedBy(message, binding);
  const osMessage = message.split(/\r?\n/)[0]?.trim() || message;
  const rule = RULES.find((r) => r.test(message, host));
  return { osMessage, file, hint: rule ? rule.hint(host, file) : FALLBACK_HINT };
}

/** The one-paragraph message of a NativeLoadError. */
export function nativeLoadMessage(f: NativeLoadFailure): string {
  return `the local engine's native library did not load: ${f.osMessage} (file: ${f.file}). ${f.hint}`;
}
