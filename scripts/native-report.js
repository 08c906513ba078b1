#!/usr/bin/env node
// node scripts/native-report.js --target <target> [--vsix FILE]
// What a target's native files need from the machine, read from their headers (scripts/native-facts.js): the
// machine, the libraries they link, the minimum macOS, the newest glibc, the Visual C++ runtime DLLs, the
// signatures on Windows. From the .vsix when given (and then its full package check), else from node_modules.
// A step of .github/workflows/ci.yml on each runner; runs for every target on any machine.
const fs = require('node:fs');
const path = require('node:path');
const { readFacts, requirementsOf } = require('./native-facts');
const { checkVsix, openZip } = require('./vsix-check');
const { nativeDir, targetOf } = require('./vsix-targets');

/** @param {string[]} argv */
function parseArgs(argv) {
  /** @type {{ target: string | null, vsix: string | null }} */
  const o = { target: null, vsix: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--target') o.target = argv[++i] ?? null;
    else if (argv[i] === '--vsix') o.vsix = path.resolve(argv[++i] ?? '');
    else throw new Error(`unknown option ${argv[i]} (--target T, --vsix FILE)`);
  }
  if (!o.target) throw new Error('--target is required');
  targetOf(o.target);
  return { target: o.target, vsix: o.vsix };
}

/**
 * The binding's and the library's bytes, from the package or from node_modules.
 * @param {string} target
 * @param {string | null} vsix
 */
async function nativeFiles(target, vsix) {
  const t = targetOf(target);
  const names = [t.binding, t.runtime];
  if (!vsix) return names.map((n) => ({ name: n, bytes: fs.readFileSync(path.join(__dirname, '..', nativeDir(t), n)) }));
  const zip = await openZip(vsix);
  try {
    return await Promise.all(names.map(async (n) => ({ name: n, bytes: await zip.read(`extension/${nativeDir(t)}/${n}`) })));
  } finally {
    zip.close();
  }
}

async function main() {
  const { target, vsix } = parseArgs(process.argv.slice(2));
  const files = await nativeFiles(target, vsix);
  const facts = files.map((f) => ({ name: f.name, ...readFacts(f.bytes) }));
  for (const f of facts) console.log(JSON.stringify(f, null, 2));
  console.log(`requirements: ${JSON.stringify({ target, ...requirementsOf(facts[0], facts[1]) })}`);
  if (!vsix) return 0;
  const problems = await checkVsix(vsix, target);
  console.log(problems.length === 0 ? `${path.basename(vsix)}: checked` : `${path.basename(vsix)}: WRONG\n  ${problems.join('\n  ')}`);
  return problems.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`native-report: ${err instanceof Error ? err.message : err}`);
    process.exit(1);
  },
);
