import type { Node } from '@vscode/tree-sitter-wasm';
import { type BlockCut, blockCut } from '../syntax/blockCut';
import { openTail } from '../syntax/bracketScan';
import { grammarFor } from '../syntax/languages';
import type { SyntaxRefiner, SyntaxWindow } from '../syntax/syntaxRefiner';
import type { SyntaxProbe } from './rules/ruleContext';

/**
 * Parses here may take this long: the inline pipeline's 50 ms protects keystroke latency, but a result
 * that took seconds to generate is worth a slower parse, and a timeout would let it through uncut (under
 * load the evaluation saw results run past their function that way).
 */
const PARSE_TIMEOUT_MS = 1000;

/** After a top-level declaration's end, what may stay on its line: separators and a comment. */
const REST_OF_LINE = /^[\s;,]*(?:(?:\/\/|#|\/\*).*)?$/;

/**
 * The rules' view of tree-sitter at one insertion point (`w`: the prompt window, cursor at the insertion).
 * Inside a block, the block holding the result's first code ends it (blockCut, as for inline suggestions);
 * at the top level (a comment or a blank line between declarations), the first declaration it writes does.
 * Null when the language has no grammar or it has not loaded: the rules then pass the text through.
 */
export function syntaxProbe(refiner: SyntaxRefiner | null, w: SyntaxWindow): SyntaxProbe | null {
  if (!refiner?.isReady(w.languageId)) return null;
  return {
    blockEnd: (text) =>
      refiner.inspect(
        text,
        w,
        (root, insStart, blocks) => blockCut(root, text, insStart, blocks) ?? topLevelCut(root, text, insStart, blocks),
        PARSE_TIMEOUT_MS,
      ),
    addsErrors: (text) => refiner.addsErrors(text, w, PARSE_TIMEOUT_MS),
    leavesOpen: (text) => {
      const lexical = grammarFor(w.languageId)?.lexical;
      if (!lexical) return false;
      const tail = openTail(text, lexical);
      return tail.closers.length > 0 || tail.inside !== null;
    },
  };
}

/** The cut after the first top-level declaration the result writes, when no block holds its first code. */
function topLevelCut(root: Node, text: string, insStart: number, blocks: ReadonlySet<string>): BlockCut | null {
  const lead = text.search(/\S/);
  if (lead < 0) return null;
  const p = insStart + lead;
  for (let n = root.descendantForIndex(p); n; n = n.parent) if (blocks.has(n.type) && n.startIndex <= p && p < n.endIndex) return null;
  const insEnd = insStart + text.length;
  for (const child of root.children) {
    if (!child || child.endIndex <= p || child.type.includes('comment')) continue;
    // The first one that reaches past the result's first code: a statement the result continues (the
    // cursor line's) ends it as well as a declaration it writes.
    const end = child.endIndex;
    if (end >= insEnd) return null;
    let cut = end - insStart;
    const nl = text.indexOf('\n', cut);
    const lineEnd = nl < 0 ? text.length : nl;
    if (REST_OF_LINE.test(text.slice(cut, lineEnd))) cut = lineEnd;
    return cut >= text.trimEnd().length ? null : { keep: cut, open: null };
  }
  return null;
}
