// The browser end-to-end step of next edit, as a user with a next-edit server sees it. No next-edit model can be
// shipped, so a small HTTP server speaks llama.cpp's streaming /completion and answers as a trained model would:
// the window it is shown, with the rename the user just made carried to the next use. Ghostline reaches it through
// `ghostline.nextEdit.serverUrl`, the real product path. The user renames a parameter; the proposal appears two
// lines down (screenshot for the README), Tab jumps, Tab applies, and the file on disk has both changes.
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { openFile, pollFile, runCommand, sleep } = require('./ui');

/** @typedef {import('playwright-core').Page} Page */

const FILE = 'next_edit_e2e.py';
const TEXT = 'def area(width, height):\n    """The area of a rectangle."""\n    return width * height\n\n\nprint(area(3, 4))\n';

/**
 * A stand-in for `llama-server -m sweep-next-edit.gguf`: POST /completion with `stream: true` gets SSE payloads
 * `{content, stop}`. It rewrites the prompt's `current/` window the way the user's last edit asks (height -> depth).
 * @returns {Promise<{ url: string, requests: () => number, close: () => Promise<void> }>}
 */
function startNextEditServer() {
  let requests = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.url !== '/completion') {
        res.writeHead(404).end();
        return;
      }
      requests++;
      const prompt = String(JSON.parse(body).prompt ?? '');
      const m = /<\|file_sep\|>current\/[^\n]*\n([\s\S]*?)\n?<\|file_sep\|>updated\//.exec(prompt);
      const window = m ? m[1] : '';
      const answer = `${window.replace(/width \* height/g, 'width * depth')}\n<|file_sep|>`;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const line of answer.split(/(?<=\n)/)) res.write(`data: ${JSON.stringify({ content: line, stop: false })}\n\n`);
      res.end(`data: ${JSON.stringify({ content: '', stop: true, stop_type: 'word', timings: { prompt_n: 1, predicted_n: 1 } })}\n\n`);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
      resolve({ url: `http://127.0.0.1:${port}`, requests: () => requests, close: () => new Promise((r) => server.close(() => r(undefined))) });
    });
  });
}

/**
 * @param {Page} page
 * @param {string} workspace
 * @param {{ requests: () => number }} stub
 * @param {(name: string) => void} mark
 * @param {string} screenshot
 */
async function nextEditInBrowser(page, workspace, stub, mark, screenshot) {
  const target = path.join(workspace, FILE);
  fs.writeFileSync(target, TEXT);
  // Inline suggestions off for this step, so that Tab is the next edit's (an inline suggestion would take it first).
  await runCommand(page, 'Ghostline: Toggle Inline Completions');
  await openFile(page, FILE);
  await page.keyboard.press('Control+Home');
  for (let i = 0; i < 'def area(width, '.length; i++) await page.keyboard.press('ArrowRight');
  await page.keyboard.press('Shift+Control+ArrowRight');
  const before = stub.requests();
  await page.keyboard.type('depth', { delay: 30 });
  mark('renamed height to depth in the signature');
  const end = Date.now() + 30_000;
  while (stub.requests() === before && Date.now() < end) await sleep(100);
  if (stub.requests() === before) throw new Error('Ghostline never asked the next-edit server');
  // The gutter arrow (a glyph-margin decoration) marks the proposal's line.
  await page.locator('.monaco-editor .cgmr').first().waitFor({ timeout: 15_000 });
  await sleep(300);
  await page.screenshot({ path: screenshot });
  mark('the proposed edit is shown two lines down, beside the text it changes');
  await page.keyboard.press('Tab');
  await sleep(300);
  await page.keyboard.press('Tab');
  await sleep(300);
  await page.keyboard.press('Control+S');
  const saved = await pollFile(target, (t) => t.includes('return width * depth'), 15_000);
  if (!saved) throw new Error(`the next edit was not applied and saved: ${fs.readFileSync(target, 'utf8')}`);
  if (!saved.startsWith('def area(width, depth):')) throw new Error(`the user's own edit is not on disk: ${saved}`);
  if (saved.includes('height')) throw new Error(`a stale "height" is left: ${saved}`);
  mark('Tab jumped to it, Tab applied it, and the file on disk has both changes');
  await runCommand(page, 'Ghostline: Toggle Inline Completions');
}

module.exports = { nextEditInBrowser, startNextEditServer };
