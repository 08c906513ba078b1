/**
 * Line endings at the pipeline's two edges. Inside, text is LF only: the context is built from lines without
 * their endings (TextSource), and the filters and tree-sitter split and compare on "\n". Windows files are
 * often CRLF, and a model trained on them may write "\r\n" itself; left in, each line would end in a stray
 * "\r" that no line of the document has, so the repeat and overlap filters would stop matching. Out of the
 * pipeline, a multi-line suggestion takes the document's own ending, so what is shown and inserted is what a
 * CRLF file holds (VS Code also normalises an inserted edit, but its typed-through matching compares the
 * suggestion with the document text). No `vscode` import.
 */

/** Every line break VS Code recognises ("\r\n", a lone "\r", "\n"), as used by TextSource splitting. */
export const LINE_BREAK = /\r\n|\r|\n/;

/** `text` with "\r\n" and lone "\r" turned into "\n". */
export function toLf(text: string): string {
  return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
}

/** `text` with the document's line ending (`eol`) and no other. */
export function toEol(text: string, eol: '\n' | '\r\n'): string {
  return eol === '\n' ? toLf(text) : toLf(text).replace(/\n/g, eol);
}

/**
 * `original` with the LF-only `text` inserted at `offset`, in the document's line ending: what Generate from
 * Selection's review shows, so that it is byte for byte what Insert will write (a CRLF file reviewed with LF
 * lines in it would show line endings the insert never writes).
 */
export function withInsertion(original: string, offset: number, text: string, eol: '\n' | '\r\n'): string {
  return original.slice(0, offset) + toEol(text, eol) + original.slice(offset);
}
