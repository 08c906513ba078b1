/** How the bracket scanner (bracketScan.ts) skips strings and comments of a language. Rough on purpose. */
export interface Lexical {
  /** Starts of line comments. */
  lineComments: readonly string[];
  /** Block comment delimiters, if any. */
  blockComment?: readonly [string, string];
  /** String delimiters, longest first. `multiline`: the string may span lines; `raw`: no backslash escapes. */
  strings: ReadonlyArray<{ open: string; close: string; multiline: boolean; raw?: boolean; template?: boolean }>;
  /** `'` opens a string only when it reads as a character literal ('a', '\n', '\u{1F600}'); else it is skipped (Rust lifetimes, C++ digit separators). */
  charLiterals: boolean;
  /** `/` may open a regular expression literal (JavaScript, TypeScript): its brackets and quotes are not code. */
  regex?: boolean;
}

/** A grammar Ghostline knows: its key in grammars.json and the node types that are blocks for the cut. */
export interface GrammarSpec {
  grammar: 'python' | 'typescript' | 'tsx' | 'javascript' | 'go' | 'rust' | 'java' | 'c' | 'cpp';
  /**
   * Node types of statement-level blocks: a suggestion is cut where the innermost one that holds its first
   * character ends. Expression brackets (argument lists, literals) are deliberately not blocks.
   */
  blocks: ReadonlySet<string>;
  lexical: Lexical;
}

const C_COMMENTS = { lineComments: ['//'], blockComment: ['/*', '*/'] } as const;
const DQ = { open: '"', close: '"', multiline: false } as const;
const SQ = { open: "'", close: "'", multiline: false } as const;

const JS_LEXICAL: Lexical = {
  ...C_COMMENTS,
  strings: [DQ, SQ, { open: '`', close: '`', multiline: true, template: true }],
  charLiterals: false,
  regex: true,
};
const JS_BLOCKS = new Set(['statement_block', 'class_body', 'switch_body', 'enum_body', 'interface_body']);
const C_LEXICAL: Lexical = { ...C_COMMENTS, strings: [DQ], charLiterals: true };

const SPECS: Record<GrammarSpec['grammar'], GrammarSpec> = {
  python: {
    grammar: 'python',
    blocks: new Set(['block']),
    lexical: {
      lineComments: ['#'],
      strings: [{ open: '"""', close: '"""', multiline: true }, { open: "'''", close: "'''", multiline: true }, DQ, SQ],
      charLiterals: false,
    },
  },
  typescript: { grammar: 'typescript', blocks: JS_BLOCKS, lexical: JS_LEXICAL },
  tsx: { grammar: 'tsx', blocks: JS_BLOCKS, lexical: JS_LEXICAL },
  javascript: { grammar: 'javascript', blocks: JS_BLOCKS, lexical: JS_LEXICAL },
  go: {
    grammar: 'go',
    blocks: new Set(['block', 'field_declaration_list', 'interface_type', 'expression_switch_statement', 'type_switch_statement', 'select_statement']),
    lexical: { ...C_COMMENTS, strings: [DQ, { open: '`', close: '`', multiline: true, raw: true }], charLiterals: true },
  },
  rust: {
    grammar: 'rust',
    blocks: new Set(['block', 'declaration_list', 'field_declaration_list', 'enum_variant_list', 'match_block']),
    lexical: { ...C_COMMENTS, strings: [{ open: '"', close: '"', multiline: true }], charLiterals: true },
  },
  java: {
    grammar: 'java',
    blocks: new Set(['block', 'class_body', 'interface_body', 'enum_body', 'switch_block', 'constructor_body', 'annotation_type_body', 'module_body']),
    lexical: { ...C_COMMENTS, strings: [{ open: '"""', close: '"""', multiline: true }, DQ], charLiterals: true },
  },
  c: { grammar: 'c', blocks: new Set(['compound_statement', 'field_declaration_list', 'enumerator_list', 'declaration_list']), lexical: C_LEXICAL },
  cpp: { grammar: 'cpp', blocks: new Set(['compound_statement', 'field_declaration_list', 'enumerator_list', 'declaration_list']), lexical: C_LEXICAL },
};

/** VS Code language ids with a grammar. */
const BY_LANGUAGE_ID: Record<string, GrammarSpec> = {
  python: SPECS.python,
  typescript: SPECS.typescript,
  typescriptreact: SPECS.tsx,
  javascript: SPECS.javascript,
  javascriptreact: SPECS.javascript,
  go: SPECS.go,
  rust: SPECS.rust,
  java: SPECS.java,
  c: SPECS.c,
  cpp: SPECS.cpp,
};

/** The grammar for a VS Code language id, or undefined when Ghostline has none. */
export function grammarFor(languageId: string): GrammarSpec | undefined {
  return Object.hasOwn(BY_LANGUAGE_ID, languageId) ? BY_LANGUAGE_ID[languageId] : undefined;
}

export const SUPPORTED_LANGUAGE_IDS: readonly string[] = Object.keys(BY_LANGUAGE_ID);
