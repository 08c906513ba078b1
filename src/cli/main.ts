import * as fs from 'node:fs';
import * as path from 'node:path';
import { EngineClient } from '../engine/host/client';
import { resolveDecodeOptions, type DecodeOptions } from '../engine/shared/decodeOptions';
import { defaultModelDir } from '../engine/host/defaultModel';
import { errorMessage } from '../engine/shared/errors';
import { DEVICE_SETTINGS, describeDevice, type DeviceSetting } from '../engine/shared/device';
import { userCacheDir } from '../platform/userCacheDir';
import { DECODE_TABLE, kebabCase } from '../engine/shared/decodeTable';
import { checkKnown, num, one, parseArgs, type ParsedArgs } from './args';
import { convertCommand } from './convertCommand';
import { nextEditCommand } from './nextEditCommand';
import { promptCommand } from './promptCommand';
import { toResponse } from './response';
import { localBackend, serveStdio } from './serveStdio';
import { SERVER_VALUES, serverBackend } from './serverBackend';

/** Where `auto` remembers its verdicts, in the user's cache folder. */
const VERDICTS_FILE = 'device-verdicts.json';

const USAGE = `ghostline: local code completion engine (headless)

  ghostline generate [--model DIR] (--prompt TEXT | --prompt-file F) [--max-new-tokens N]
                     [--temperature T] [--top-k K] [--top-p P] [--min-p P] [--repetition-penalty R]
                     [--repetition-window N] [--copy-bias B] [--num-beams B] [--num-return-sequences N] [--seed S] [--stop STR]...
                     [--max-lines N] [--time-budget-ms MS] [--partial-line-ms MS] [--speculative-tokens N] [--[no-]ignore-eos]
                     [--[no-]token-healing] [--[no-]stop-on-loop] [--[no-]stop-on-special-tokens] [--threads N]
                     [--device auto|cpu|gpu] [--json]
  ghostline serve-stdio [--model DIR] [--threads N] [--device auto|cpu|gpu]
  ghostline serve-stdio --backend llama.cpp|openai|ollama --server-url URL [--server-model NAME]
                     [--server-fim auto|qwen2.5-coder|starcoder|deepseek-coder|codellama|codegemma] [--server-timeout-ms N]
                     [--server-context TOKENS] [--model DIR]   (API key: GHOSTLINE_SERVER_KEY in the environment)
      connected as the editor connects: probed format, context and tokenizer (compared with --model's)
      one JSON request per line on stdin, one JSON response per line on stdout
  ghostline prompt --workspace DIR --file PATH --line L --character C [--model DIR]
                   [--sources imports,similar|none] [--json]
      the prompt Ghostline would send at that position (lines and characters from 0), with the repository
      context found without an editor; --json: {"prompt": ..., "context": [{"source", "path", "text"}]}
  ghostline next-edit --model DIR --file PATH --history HISTORY.json [--offset N] [--workspace DIR]
                      [--threads N] [--device auto|cpu|gpu] [--json] [--prompt-only]
      the edit a next-edit model (Sweep next-edit 0.5B/1.5B) proposes after the edits in HISTORY.json, a JSON
      array of {"offset", "removedText", "insertedText"} in order (offsets in the text before each edit; the
      last gives the file as it is); the cursor defaults to the end of the last edit. --prompt-only: the prompt
  ghostline convert --from CHECKPOINT_DIR --out MODEL_DIR [--quant q4|int8|fp32] [--block-size 32]
                    [--accuracy-level 4] [--head-bits 4|8] [--progress-json]
      a Hugging Face checkpoint (llama, qwen2, starcoder2; safetensors) -> a Ghostline model folder;
      --head-bits 8: with q4, the embedding and output head at 8 bits (closer logits, larger, slower decoding)

--model defaults to the model shipped in models/.
--device: where the model runs (default auto: the CPU and the GPU are timed once per model and machine and
the faster kept, remembered in ${path.join(userCacheDir(), VERDICTS_FILE)}); gpu falls back to the CPU with a note.`;

async function main(argv: string[]): Promise<number> {
  const args = parseArgs(argv, ['json', 'help', 'progress-json', 'prompt-only', ...OPTION_FLAGS]);
  if (args.flags.has('help') || !args.command) {
    process.stdout.write(`${USAGE}\n`);
    return args.command ? 0 : 2;
  }
  if (args.command === 'convert') return convertCommand(args);
  if (args.command === 'prompt') return promptCommand(args);
  if (args.command === 'next-edit') return nextEditCommand(args, () => deviceArg(args), path.join(userCacheDir(), VERDICTS_FILE));
  if (args.command === 'generate') checkKnown(args, 'generate', GENERATE_VALUES, ['json', ...OPTION_FLAGS]);
  else if (args.command === 'serve-stdio') checkKnown(args, 'serve-stdio', ['model', 'threads', 'device', ...SERVER_VALUES]);
  else throw new Error(`unknown command "${args.command}"\n\n${USAGE}`);
  const backend = one(args, 'backend');
  if (args.command === 'serve-stdio' && backend && backend !== 'local') {
    await serveStdio(await serverBackend(args, backend), process.stdin, process.stdout);
    return 0;
  }
  const client = new EngineClient();
  try {
    const threads = num(args, 'threads');
    const device = deviceArg(args);
    const info = await client.load(one(args, 'model') ?? defaultModelDir(), {
      threads,
      device,
      deviceVerdictFile: path.join(userCacheDir(), VERDICTS_FILE),
    });
    process.stderr.write(`ghostline: note: runs on the ${describeDevice(info.device)}\n`);
    if (args.command === 'generate') return await generate(client, args);
    await serveStdio(localBackend(client), process.stdin, process.stdout);
    return 0;
  } finally {
    await client.dispose();
  }
}

/** CLI flags of the decode options, from the one table: `--max-new-tokens N`, `--stop S` (repeatable), `--ignore-eos` / `--no-ignore-eos`. */
const OPTION_VALUES = DECODE_TABLE.filter((r) => r.type !== 'boolean').map((r) => kebabCase(r.key));
const OPTION_FLAGS = DECODE_TABLE.filter((r) => r.type === 'boolean').flatMap((r) => [kebabCase(r.key), `no-${kebabCase(r.key)}`]);
const GENERATE_VALUES = ['model', 'prompt', 'prompt-file', 'threads', 'device', ...OPTION_VALUES];

function deviceArg(args: ParsedArgs): DeviceSetting {
  const v = one(args, 'device') ?? 'auto';
  if (!(DEVICE_SETTINGS as readonly string[]).includes(v)) throw new Error(`--device must be one of ${DEVICE_SETTINGS.join(', ')}, got "${v}"`);
  return v as DeviceSetting;
}

function decodeOptionsFromArgs(args: ParsedArgs): Partial<DecodeOptions> {
  const out: Record<string, unknown> = {};
  for (const row of DECODE_TABLE) {
    const flag = kebabCase(row.key);
    if (row.type === 'string[]') out[row.key] = args.values.get(flag);
    else if (row.type !== 'boolean') out[row.key] = num(args, flag);
    else if (args.flags.has(flag) || args.flags.has(`no-${flag}`)) {
      if (args.flags.has(flag) && args.flags.has(`no-${flag}`)) throw new Error(`--${flag} and --no-${flag} contradict each other`);
      out[row.key] = args.flags.has(flag);
    }
  }
  // Checked here so that errors name the flags (--top-p, not topP).
  resolveDecodeOptions(out as Partial<DecodeOptions>, (k) => `--${kebabCase(k)}`);
  return out as Partial<DecodeOptions>;
}

async function generate(client: EngineClient, args: ParsedArgs): Promise<number> {
  const promptFile = one(args, 'prompt-file');
  const prompt = one(args, 'prompt') ?? (promptFile !== undefined ? fs.readFileSync(promptFile, 'utf8') : undefined);
  if (prompt === undefined) throw new Error('generate needs --prompt or --prompt-file');
  const options = decodeOptionsFromArgs(args);
  const json = args.flags.has('json');
  const ac = new AbortController();
  process.once('SIGINT', () => ac.abort());
  const result = await client.generate(prompt, options, {
    signal: ac.signal,
    onText: json ? undefined : (delta) => process.stdout.write(delta),
  });
  for (const notice of result.notices ?? []) process.stderr.write(`ghostline: note: ${notice}\n`);
  if (json) process.stdout.write(`${JSON.stringify(toResponse(null, result))}\n`);
  else {
    if (result.sequences.length > 1) {
      for (const [i, s] of result.sequences.slice(1).entries()) process.stdout.write(`\n--- alternative ${i + 2} ---\n${s.text}`);
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
