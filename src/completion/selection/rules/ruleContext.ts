import type { FinishReason } from '../../../engine/shared/types';
import type { BlockCut } from '../../syntax/blockCut';

/** What tree-sitter says about a result inserted at the insertion point (see syntaxProbe.ts). */
export interface SyntaxProbe {
  /** Where the block (or top-level declaration) that holds the result's first code ends, or null: keep it whole. */
  blockEnd(text: string): BlockCut | null;
  /** Whether inserting `text` adds parse errors the document did not have; null: not parsed. */
  addsErrors(text: string): boolean | null;
  /** Whether `text` leaves a bracket, string or comment of its own open at its end (its lexer, no parse). */
  leavesOpen(text: string): boolean;
}

/** What the rules of Generate from Selection know about the place the result goes. */
export interface GenerateRuleContext {
  /** The document above the insertion point, as far as the prompt window reaches (for repeated blocks). */
  above: string;
  /** The document after the insertion point, as far as the prompt window reaches. */
  below: string;
  /** Indentation of the line the insertion point is on. */
  indent: string;
  /** Why the generation ended ('length', 'time': a limit, so the last line may be unfinished). */
  finishReason?: FinishReason;
  /** Tree-sitter for the document's language; null: no grammar (the syntax rules pass the text through). */
  syntax: SyntaxProbe | null;
  /** Keep a result that adds parse errors (the user asked for it). */
  keepParseErrors: boolean;
}

/** A rule returns the (possibly cut) result, or null to drop it. Each one is a small pure function. */
export type GenerateRule = (text: string, ctx: GenerateRuleContext) => string | null;
