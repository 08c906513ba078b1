/**
 * Whether a piece of prompt context holds the declaration of `name`: a line that declares it (a function,
 * class, interface, type, enum, variable, Python def/class/assignment, or a class member: method or field).
 * A use of the name (a call, an argument) does not count. Independent of how Ghostline found it.
 */
export function holdsDeclaration(text: string, name: string): boolean {
  const n = name.replace(/[$]/g, '\\$');
  const patterns = [
    // function f / class C / interface I / type T / enum E / const|let|var x / def f / namespace N
    new RegExp(`(^|[\\s(])(function\\*?|class|interface|type|enum|const|let|var|def|namespace|module)\\s+${n}\\b`, 'm'),
    // a member or field at a line's start: name(...) / name: T / name = ... / async name( / get name( / static name
    new RegExp(`^\\s*(?:(?:export|default|public|protected|readonly|static|async|abstract|declare|override|get|set)\\s+)*\\*?${n}\\s*[?!]?\\s*[(<:=]`, 'm'),
    // Python module-level assignment with a type: NAME: T = ...
    new RegExp(`^${n}\\s*(:[^=\\n]*)?=`, 'm'),
  ];
  return patterns.some((p) => p.test(text));
}
