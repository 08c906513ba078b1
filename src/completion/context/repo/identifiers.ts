/** Words that are syntax, not names: they make unrelated code look alike. */
const KEYWORDS = new Set(
  (
    'and as assert async await break case catch class const continue def default del delete do elif else enum except export extends ' +
    'false finally for from function global if implements import in instanceof interface is lambda let new none nonlocal not null or ' +
    'pass private protected public raise readonly return self static super switch this throw true try type typeof undefined var void ' +
    'while with yield string number boolean any unknown never object print len str int float bool list dict tuple set'
  ).split(' '),
);

const IDENTIFIER = /[A-Za-z_$][A-Za-z0-9_$]*/g;

/** The distinct identifiers of `text` that carry meaning: 3+ characters, not keywords or common builtins. */
export function identifierSet(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(IDENTIFIER)) {
    const id = m[0];
    if (id.length >= 3 && !KEYWORDS.has(id.toLowerCase())) out.add(id);
  }
  return out;
}

/** Jaccard similarity of two sets (0 when both are empty: nothing in common to go on). */
export function jaccardOf(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let inter = 0;
  for (const x of small) if (large.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}
