/** A file of the user's workspace, as read for calibration. */
export interface WorkspaceFile {
  /** Workspace-relative path (what the prompt shows the model). */
  path: string;
  languageId: string;
  text: string;
}

/** A cursor position in a workspace file, and what the user wrote there: the rest of the line. */
export interface CalibrationPosition {
  file: WorkspaceFile;
  offset: number;
  expected: string;
  kind: 'mid-line' | 'line-start';
}

/** Lines longer than this are not sampled (minified or generated code says nothing about typing). */
const MAX_LINE = 200;
/** Positions per file at most, so one big file does not stand for the workspace. */
const PER_FILE = 12;

/** A small seeded generator (mulberry32): the same workspace gives the same positions. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Up to `count` positions where a user types, in proportion to the files' code lines (at most PER_FILE per
 * file): 70% inside a line (after a word or symbol boundary, the rest of the line to come) and 30% at the
 * start of a line's code (after its indentation), as the eval sets are cut. A line qualifies when its rest
 * has code worth suggesting (3+ non-space characters) and is not a comment.
 */
export function pickPositions(files: readonly WorkspaceFile[], count: number, seed = 1): CalibrationPosition[] {
  const rand = seededRandom(seed);
  const candidates: { file: WorkspaceFile; start: number; line: string }[][] = files.map((file) => {
    const out: { file: WorkspaceFile; start: number; line: string }[] = [];
    let start = 0;
    for (const line of file.text.split('\n')) {
      const code = line.trim();
      if (code.length >= 4 && line.length <= MAX_LINE && !/^(?:#|\/\/|\/\*|\*|--|"""|''')/.test(code)) out.push({ file, start, line });
      start += line.length + 1;
    }
    return out;
  });
  const total = candidates.reduce((n, c) => n + c.length, 0);
  if (total === 0) return [];
  const positions: CalibrationPosition[] = [];
  for (const lines of candidates) {
    // A quarter more than the share: some picks are dropped (too little left of the line).
    const share = Math.min(PER_FILE, lines.length, Math.max(1, Math.ceil((1.25 * count * lines.length) / total)));
    const chosen = new Set<number>();
    for (let tries = 0; chosen.size < share && tries < share * 4; tries++) chosen.add(Math.floor(rand() * lines.length));
    for (const i of [...chosen].sort((a, b) => a - b)) {
      const { file, start, line } = lines[i];
      const indent = line.length - line.trimStart().length;
      const end = line.trimEnd().length;
      let cut = indent;
      let kind: CalibrationPosition['kind'] = 'line-start';
      if (rand() < 0.7) {
        // After a boundary inside the line: between a word and what follows, never mid-word.
        const bounds: number[] = [];
        for (let k = indent + 1; k < end - 2; k++) if (/\w/.test(line[k - 1]) !== /\w/.test(line[k]) || line[k - 1] === ' ') bounds.push(k);
        if (bounds.length > 0) {
          cut = bounds[Math.floor(rand() * bounds.length)];
          kind = 'mid-line';
        }
      }
      const expected = line.slice(cut).trimEnd();
      if (expected.trim().length < 3) continue;
      positions.push({ file, offset: start + cut, expected, kind });
    }
  }
  // Interleave files so that a cancelled run still covers many of them.
  for (let i = positions.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [positions[i], positions[j]] = [positions[j], positions[i]];
  }
  return positions.slice(0, count);
}

/** The file as the user had it when they reached the position: the rest of its line not yet written. */
export function textBeforeTyping(p: CalibrationPosition): string {
  const text = p.file.text;
  const lineEnd = text.indexOf('\n', p.offset);
  const end = lineEnd < 0 ? text.length : text[lineEnd - 1] === '\r' ? lineEnd - 1 : lineEnd;
  return text.slice(0, p.offset) + text.slice(end);
}
