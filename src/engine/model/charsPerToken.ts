import type { TextTokenizer } from './tokenizer';

/**
 * Typical source code in the languages people complete most (Python, TypeScript, Go, Rust, C): the text
 * each model's tokenizer is measured on, so prompts can be sized in characters without the tokenizer.
 */
const SAMPLE = `import os
from typing import Optional


class Cache:
    """A small LRU cache with a size limit."""

    def __init__(self, capacity: int = 128) -> None:
        self.capacity = capacity
        self.items: dict[str, bytes] = {}

    def get(self, key: str) -> Optional[bytes]:
        value = self.items.pop(key, None)
        if value is not None:
            self.items[key] = value
        return value


export function debounce<T extends (...args: unknown[]) => void>(fn: T, ms: number): T {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return ((...args: unknown[]) => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  }) as T;
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	fmt.Fprintf(w, "hello, %s\\n", r.URL.Path[1:])
}

fn parse_line(line: &str) -> Result<(String, u32), ParseError> {
    let mut parts = line.splitn(2, '=');
    let key = parts.next().ok_or(ParseError::Empty)?.trim().to_string();
    let value = parts.next().ok_or(ParseError::NoValue)?.trim().parse::<u32>()?;
    Ok((key, value))
}

static int count_words(const char *s) {
    int n = 0, in_word = 0;
    for (; *s; s++) {
        if (isspace((unsigned char)*s)) in_word = 0;
        else if (!in_word) { in_word = 1; n++; }
    }
    return n;
}
`;

/** Characters per token of this tokenizer on typical code (clamped to a sane range for hostile tokenizers). */
export function measureCharsPerToken(tokenizer: Pick<TextTokenizer, 'encodeLiteral'>): number {
  const n = tokenizer.encodeLiteral(SAMPLE).length;
  return n > 0 ? Math.min(8, Math.max(1, SAMPLE.length / n)) : 1;
}
