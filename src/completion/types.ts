/** Read-only access to a document's lines, so a 10 MB file is never copied whole per keystroke. */
export interface TextSource {
  readonly lineCount: number;
  lineAt(line: number): string;
}

export interface CursorPosition {
  line: number;
  character: number;
}

/** Everything the pipeline needs to know about one completion request. */
export interface CompletionRequest {
  doc: TextSource;
  cursor: CursorPosition;
  languageId: string;
  /** Workspace-relative path, shown to models that understand file separators. */
  path: string;
  /** Explicit trigger (Alt+\ or the command): the user wants alternatives. */
  explicit: boolean;
}

/** A snapshot of text around the cursor. */
export interface DocumentContext {
  /** Lines above the cursor line (each ending in '\n'), from a block-snapped start. */
  prefix: string;
  /** The cursor line up to the cursor. */
  linePrefix: string;
  /** The cursor line after the cursor. */
  lineSuffix: string;
  /** Lines below the cursor line (starting with '\n'), up to a block-snapped end. */
  suffix: string;
  /** The next non-empty lines below the cursor line (for the repeat filter). */
  nextLines: string[];
  /** Indentation of the cursor line (or of the line above, if it is empty). */
  indent: string;
  prefixStartLine: number;
  /** The nearest non-blank line of the prefix window ('' when it has none). */
  lineAbove: string;
}

export interface ExtraChunk {
  path: string;
  text: string;
}
