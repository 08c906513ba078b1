import * as fs from 'node:fs';
import { EngineClient } from '../engine/host/client';
import type { DecodeOptions } from '../engine/shared/decodeOptions';
import { defaultModelDir } from '../engine/host/defaultModel';
import { errorMessage } from '../engine/shared/errors';
import { checkKnown, num, one, parseArgs, type ParsedArgs } from './args';
import { convertCommand } from './convertCommand';
import { toResponse } from './response';
import { serveStdio } from './serveStdio';

const USAGE = `ghostline: local code completion engine (headless)

  ghostline generate [--model DIR] (--prompt TEXT | --prompt-file F) [--max-new-tokens N]
                     [--temperature T] [--top-k K] [--top-p P] [--min-p P] [--repetition-penalty R]
                     [--num-beams B] [--num-return-sequences N] [--seed S] [--stop STR]...
                     [--max-lines N] [--time-budget-ms MS] [--speculative-tokens N] [--ignore-eos] [--token-healing]
                     [--threads N] [--json]
  ghostline serve-stdio [--model DIR] [--threads N]
      one JSON request per line on stdin, one JSON response per line on stdout
  ghostline convert --from CHECKPOINT_DIR --out MODEL_DIR [--quant q4|int8|fp32] [--block-size 32]
                    [--accuracy-level 4] [--progress-json]
      a Hugging Face checkpoint (llama, qwen2, starcoder2; safetensors) -> a Ghostline model folder

--model defaults to the model shipped in models/.`;

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv, ['json', 'help', 'ignore-eos', 'token-healing', 'progress-json']);
  if (args.flags.has('help') || !args.command) {
    process.stdout.write(USAGE + '\n');
    return args.command ? 0 : 2;
  }
  if (args.command === 'convert') return convertCommand(args);
  if (args.command === 'generate') checkKnown(args, 'generate', GENERATE_VALUES, ['json', 'ignore-eos', 'token-healing']);
  else if (args.command === 'serve-stdio') checkKnown(args, 'serve-stdio', ['model', 'threads']);
  else throw new Error(`unknown command "${args.command}"\n\n${USAGE}`);
  const client = new EngineClient();
  try {
    const threads = num(args, 'threads');
    await client.load(one(args, 'model') ?? defaultModelDir(), { threads });
    if (args.command === 'generate') return await generate(client, args);
    await serveStdio(client, process.stdin, process.stdout);
    return 0;
  } finally {
    await client.dispose();
  }
}

const GENERATE_VALUES = [
  'model',
  'prompt',
  'prompt-file',
  'max-new-tokens',
  'temperature',
  'top-k',
  'top-p',
  'min-p',
  'repetition-penalty',
  'num-beams',
  'num-return-sequences',
  'seed',
  'stop',
  'max-lines',
  'time-budget-ms',
  'speculative-tokens',
  'threads',
];

async function generate(client: EngineClient, args: ParsedArgs): Promise<number> {
  const promptFile = one(args, 'prompt-file');
  const prompt = one(args, 'prompt') ?? (promptFile !== undefined ? fs.readFileSync(promptFile, 'utf8') : undefined);
  if (prompt === undefined) throw new Error('generate needs --prompt or --prompt-file');
  const options: Partial<DecodeOptions> = {
    maxNewTokens: num(args, 'max-new-tokens'),
    temperature: num(args, 'temperature'),
    topK: num(args, 'top-k'),
    topP: num(args, 'top-p'),
    minP: num(args, 'min-p'),
    repetitionPenalty: num(args, 'repetition-penalty'),
    numBeams: num(args, 'num-beams'),
    numReturnSequences: num(args, 'num-return-sequences'),
    seed: num(args, 'seed'),
    maxLines: num(args, 'max-lines'),
    timeBudgetMs: num(args, 'time-budget-ms'),
    stop: args.values.get('stop'),
    speculativeTokens: num(args, 'speculative-tokens'),
    ignoreEos: args.flags.has('ignore-eos') || undefined,
    tokenHealing: args.flags.has('token-healing') || undefined,
  };
  const json = args.flags.has('json');
  const ac = new AbortController();
  process.once('SIGINT', () => ac.abort());
  const result = await client.generate(prompt, options, {
    signal: ac.signal,
    onText: json ? undefined : (delta) => process.stdout.write(delta),
  });
  for (const notice of result.notices ?? []) process.stderr.write(`ghostline: note: ${notice}\n`);
  if (json) process.stdout.write(JSON.stringify(toResponse(null, result)) + '\n');
  else {
    if (result.sequences.length > 1) {
      result.sequences.slice(1).forEach((s, i) => process.stdout.write(`\n--- alternative ${i + 2} ---\n${s.text}`));
    }
    process.stdout.write('\n');
  }
  return result.finishReason === 'error' ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`ghostline: ${errorMessage(err)}\n`);
    process.exit(1);
  },
);
