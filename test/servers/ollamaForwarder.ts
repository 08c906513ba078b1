import { bodyOf, stubServer } from './stubServers';

/**
 * An Ollama stand-in in front of a real llama-server (no real Ollama can run here): /api/generate in Ollama's
 * shape (docs.ollama.com/api: `raw`, `suffix`, `options`, `logprobs`, NDJSON lines) forwarded to llama-server's
 * /completion as text, which is what Ollama's runner does with a GGUF (its llama.cpp tokenizes the prompt,
 * special tokens parsed). `suffix` is built into a prompt with the model's FIM markers, as a FIM template
 * (`.Prompt`/`.Suffix`) would; /api/show lists the insert capability.
 */
export function ollamaForwarder(llamaUrl: string, fim: { prefix: string; suffix: string; middle: string }, contextTokens: number) {
  return stubServer(async (req, res) => {
    const body = bodyOf(req) ?? {};
    if (req.url === '/api/show') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ capabilities: ['completion', 'insert'], model_info: { 'llama.context_length': contextTokens }, parameters: '' }));
      return;
    }
    if (req.url !== '/api/generate') {
      res.writeHead(404);
      res.end('404 page not found');
      return;
    }
    const o = (body.options ?? {}) as Record<string, unknown>;
    const text = String(body.prompt ?? '');
    const prompt = body.suffix !== undefined && !body.raw ? `${fim.prefix}${text}${fim.suffix}${String(body.suffix)}${fim.middle}` : text;
    // The client's disconnect (a stop rule fired, a cancel) ends the upstream request, as Ollama stops its runner.
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const upstream = await fetch(`${llamaUrl}/completion`, {
      signal: abort.signal,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        prompt,
        // Ollama's default is -1 (until the context fills); a stand-in bounds it, so a request it forgets cannot run on.
        n_predict: o.num_predict ?? 128,
        temperature: o.temperature,
        top_k: o.top_k,
        top_p: o.top_p,
        min_p: o.min_p,
        repeat_penalty: o.repeat_penalty,
        seed: o.seed,
        stop: o.stop ?? [],
        n_probs: body.logprobs ? 1 : 0,
        cache_prompt: true,
        stream: body.stream !== false,
      }),
    });
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    try {
      await relay(upstream, body, res);
    } catch {
      // the client went away: the upstream request was aborted with it
    }
    res.end();
  });
}

async function relay(upstream: Response, body: Record<string, unknown>, res: import('node:http').ServerResponse): Promise<void> {
  const decoder = new TextDecoder();
  let pending = '';
  for await (const bytes of upstream.body as unknown as AsyncIterable<Uint8Array>) {
    pending += decoder.decode(bytes, { stream: true });
    let nl = pending.indexOf('\n');
    for (; nl >= 0; nl = pending.indexOf('\n')) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (!line.startsWith('data: ')) continue;
      const p = JSON.parse(line.slice(6)) as Record<string, unknown>;
      const probs = (p.completion_probabilities ?? []) as { token: string; logprob: number }[];
      const out: Record<string, unknown> = { model: body.model, response: p.content ?? '', done: p.stop === true };
      if (body.logprobs) out.logprobs = probs.map((e) => ({ token: e.token, logprob: e.logprob }));
      if (p.stop === true) {
        const t = (p.timings ?? {}) as Record<string, number>;
        Object.assign(out, {
          done_reason: p.stop_type === 'limit' ? 'length' : 'stop',
          prompt_eval_count: t.prompt_n,
          eval_count: t.predicted_n,
          prompt_eval_duration: (t.prompt_ms ?? 0) * 1e6,
          eval_duration: (t.predicted_ms ?? 0) * 1e6,
        });
      }
      res.write(`${JSON.stringify(out)}\n`);
    }
  }
}
