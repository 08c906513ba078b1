import type { Generator } from '../../src/completion/generator';
import { promptText } from '../../src/engine/shared/prompt';
import type { Engine } from '../../src/engine/worker/engine';

/**
 * A Generator over the real engine that records what each request sent and prefilled and what was warmed aside;
 * `aside: false` hides prefillAside (a backend that keeps one prompt cache, as a server's slot).
 */
export function recordingEngine(engine: Engine, aside = true) {
  const prompts: string[] = [];
  const prefilled: number[] = [];
  const warmed: string[] = [];
  const g: Generator = {
    generate: async (prompt, options, hooks) => {
      prompts.push(promptText(prompt));
      const r = await engine.generate(prompt, options, hooks);
      prefilled.push(r.stats.prefillTokens);
      return r;
    },
    ...(aside
      ? {
          prefillAside: (prompt, hooks) => {
            warmed.push(promptText(prompt));
            return engine.prefillAside(prompt, hooks);
          },
        }
      : {}),
  };
  return { g, prompts, prefilled, warmed };
}
