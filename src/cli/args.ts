/** A small argv parser: `--name value`, `--flag`, repeatable options collected into arrays. */
export interface ParsedArgs {
  command: string | undefined;
  values: Map<string, string[]>;
  flags: Set<string>;
}

export function parseArgs(argv: string[], flagNames: readonly string[]): ParsedArgs {
  const values = new Map<string, string[]>();
  const flags = new Set<string>();
  let command: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq > 0 ? a.slice(2, eq) : a.slice(2);
      if (flagNames.includes(name)) {
        flags.add(name);
        continue;
      }
      const value = eq > 0 ? a.slice(eq + 1) : argv[++i];
      if (value === undefined) throw new Error(`--${name} needs a value`);
      values.set(name, [...(values.get(name) ?? []), value]);
    } else if (command === undefined) {
      command = a;
    } else {
      throw new Error(`unexpected argument "${a}"`);
    }
  }
  return { command, values, flags };
}

/** Rejects options a command does not know, as serve-stdio rejects unknown request fields: a typo must not be ignored. */
export function checkKnown(args: ParsedArgs, command: string, values: readonly string[], flags: readonly string[] = []): void {
  for (const name of args.values.keys()) {
    if (!values.includes(name)) throw new Error(`${command} does not take --${name}`);
  }
  for (const name of args.flags) if (!flags.includes(name) && name !== 'help') throw new Error(`${command} does not take --${name}`);
}

export function one(args: ParsedArgs, name: string): string | undefined {
  const v = args.values.get(name);
  if (v && v.length > 1) throw new Error(`--${name} given more than once`);
  return v?.[0];
}

export function num(args: ParsedArgs, name: string): number | undefined {
  const v = one(args, name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n)) throw new Error(`--${name} must be a number, got "${v}"`);
  return n;
}
