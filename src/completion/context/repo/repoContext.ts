import { LRUCache } from 'lru-cache';
import type { ContextSnippet, ContextSource } from './snippet';

/** Where the cursor is, for a gather: cheap to build on every cursor move (the text is read only when needed). */
export interface GatherAt {
  path: string;
  languageId: string;
  /** Length of the document in characters (providers skip huge files without reading them). */
  length: number;
  text(): string;
  line: number;
}

/** One source of repository context. Pure: it reads the workspace through what it was built with. */
export interface ContextProvider {
  readonly source: ContextSource;
  /** Tells apart two providers of one source (their results are kept side by side); default: the source. */
  readonly id?: string;
  /** Its result is reused while this is the same (what the snippets depend on: the line's block, the file's imports). */
  key(at: GatherAt): string;
  /** `shown`: what this provider last found for the file (for any key), so a ranking can hold what it showed. */
  gather(at: GatherAt, signal: AbortSignal, shown: readonly ContextSnippet[]): Promise<ContextSnippet[]>;
  /**
   * Nothing found is not an answer to keep: ask again (at most once per RETRY_MS). A language server that is
   * still loading its project answers "no definition" before it answers right.
   */
  readonly retryWhenEmpty?: boolean;
  /** The snippets found for the file's earlier keys stay after the fresh ones (see KeepEarlier). */
  readonly keepEarlier?: KeepEarlier;
}

/**
 * A source whose key changes line by line (what the cursor line uses) keeps, per file, what it found for earlier
 * lines: the context's bytes then change only when something new comes, not each time the cursor moves, and each
 * change costs the model a reading of the file's window after it.
 */
export interface KeepEarlier {
  /** Snippets kept per file, fresh and earlier ones together (the fresh ones first). */
  max: number;
  /** An earlier snippet's score is at most this (a fresh one ranks above it). */
  score: number;
}

export interface RepoContextOptions {
  /** Whether a source is on (settings), asked at each gather and each read. */
  enabled: (source: ContextSource) => boolean;
  /** A gather that runs longer is aborted; the snippets it found by then are kept. Default 250 ms. */
  deadlineMs?: number;
  log?: (line: string) => void;
  now?: () => number;
}

interface SourceState {
  source: ContextSource;
  key: string;
  snippets: ContextSnippet[];
  /**
   * False when the gather was cut at its deadline or failed: the same key is asked again (a language server
   * still starting answers later), at most once per RETRY_MS, and keeps its snippets meanwhile.
   */
  settled: boolean;
  at: number;
  /** Files changed since their snippets were read: asked again at the next refresh, and not kept as earlier ones. */
  changed?: Set<string>;
}

/** How soon a gather that timed out or failed is tried again for the same key. */
const RETRY_MS = 1000;

/** Timings of the gathers (Show Stats, bench): milliseconds per gather, the latest 512. */
export interface GatherStats {
  gathers: number;
  failures: number;
  timeouts: number;
  durationsMs: number[];
}

const DEFAULT_DEADLINE_MS = 250;

/**
 * Gathers repository context ahead of time and hands it to prompts without waiting. `refresh` is called on
 * cursor moves, edits and editor switches; it starts each enabled provider whose key changed, with a deadline,
 * and stores what it returns per file. `snippets` (called while building a prompt) only reads what is stored:
 * a keystroke never waits on a provider, and a slow or failing provider costs nothing but its own snippets.
 */
export class RepoContext {
  private readonly byPath = new LRUCache<string, Map<string, SourceState>>({ max: 64 });
  private readonly running = new Map<string, Promise<void>>();
  private readonly loggedFailures = new Set<string>();
  readonly stats: GatherStats = { gathers: 0, failures: 0, timeouts: 0, durationsMs: [] };

  constructor(
    private readonly providers: readonly ContextProvider[],
    private readonly opts: RepoContextOptions,
  ) {}

  /**
   * Starts the gathers this cursor position needs; the promise settles when they are done (tests, the CLI).
   * `deadlineMs` overrides the default deadline, and `force` asks every source again (Show Prompt, which the
   * user waits for).
   */
  refresh(at: GatherAt, deadlineMs = this.opts.deadlineMs ?? DEFAULT_DEADLINE_MS, force = false): Promise<void> {
    const now = this.opts.now ?? (() => performance.now());
    const started: Promise<void>[] = [];
    for (const p of this.providers) {
      if (!this.opts.enabled(p.source)) continue;
      let key: string;
      try {
        key = p.key(at);
      } catch {
        continue;
      }
      const runKey = `${at.path}\0${idOf(p)}`;
      const state = this.byPath.get(at.path)?.get(idOf(p));
      if (!force && state?.key === key && (state.settled || now() - state.at < RETRY_MS)) continue;
      const inFlight = this.running.get(`${runKey}\0${key}`);
      if (inFlight) {
        started.push(inFlight);
        continue;
      }
      const run = this.gather(p, at, key, deadlineMs).finally(() => this.running.delete(`${runKey}\0${key}`));
      this.running.set(`${runKey}\0${key}`, run);
      started.push(run);
    }
    return Promise.all(started).then(() => undefined);
  }

  /** The snippets stored for a file from the enabled sources (never waits). */
  snippets(path: string): ContextSnippet[] {
    const states = this.byPath.get(path);
    if (!states) return [];
    const out: ContextSnippet[] = [];
    for (const s of states.values()) if (this.opts.enabled(s.source)) out.push(...s.snippets);
    return out;
  }

  /**
   * A workspace file changed (saved, or changed on disk): every source holding snippets read from it is asked again at the next refresh
   * (same key or not), and the snippets kept from earlier lines that came from it are dropped then (a kept
   * definition would otherwise show an old signature until newer ones pushed it out).
   */
  changed(path: string): void {
    for (const states of this.byPath.values())
      for (const state of states.values()) {
        if (!state.snippets.some((s) => s.path === path)) continue;
        state.settled = false;
        state.at = Number.NEGATIVE_INFINITY;
        state.changed = new Set([...(state.changed ?? []), path]);
      }
  }

  /** Forgets a file's snippets (closed, or the workspace changed under it). */
  forget(path: string): void {
    this.byPath.delete(path);
  }

  private async gather(p: ContextProvider, at: GatherAt, key: string, deadlineMs: number): Promise<void> {
    const now = this.opts.now ?? (() => performance.now());
    const t0 = now();
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), deadlineMs);
    let snippets: ContextSnippet[] = [];
    let settled = false;
    const shown = this.byPath.get(at.path)?.get(idOf(p))?.snippets ?? [];
    try {
      snippets = await p.gather(at, ac.signal, shown);
      settled = !ac.signal.aborted && !(p.retryWhenEmpty && snippets.length === 0);
      if (ac.signal.aborted) this.stats.timeouts++;
    } catch (err) {
      this.stats.failures++;
      const msg = `context: ${p.source} failed for ${at.path}: ${err instanceof Error ? err.message : String(err)}`;
      if (!this.loggedFailures.has(p.source)) this.opts.log?.(msg);
      this.loggedFailures.add(p.source);
    } finally {
      clearTimeout(timer);
    }
    this.stats.gathers++;
    this.stats.durationsMs.push(now() - t0);
    if (this.stats.durationsMs.length > 512) this.stats.durationsMs.shift();
    const states = this.byPath.get(at.path) ?? new Map<string, SourceState>();
    const previous = states.get(idOf(p));
    // What the last gather found, less what came from files changed since.
    const earlier = (previous?.snippets ?? []).filter((s) => !previous?.changed?.has(s.path));
    // A cut or failed gather that found nothing keeps what the last one for this key found.
    const kept =
      !settled && snippets.length === 0 && previous?.key === key ? earlier : p.keepEarlier ? withEarlier(snippets, earlier, p.keepEarlier) : snippets;
    states.set(idOf(p), { source: p.source, key, snippets: kept, settled, at: now() });
    this.byPath.set(at.path, states);
  }
}

/** The fresh snippets, then the earlier ones they do not replace (the same declaration), scored at most `keep.score`. */
function withEarlier(fresh: readonly ContextSnippet[], earlier: readonly ContextSnippet[], keep: KeepEarlier): ContextSnippet[] {
  const identity = (s: ContextSnippet) => `${s.path}\0${s.names?.join(',') ?? `${s.line}`}`;
  const found = new Set(fresh.map(identity));
  const older = earlier.filter((s) => !found.has(identity(s))).map((s) => (s.score > keep.score ? { ...s, score: keep.score } : s));
  return [...fresh, ...older].slice(0, keep.max);
}

function idOf(p: ContextProvider): string {
  return p.id ?? p.source;
}
