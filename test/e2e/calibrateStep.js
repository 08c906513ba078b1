// The browser end-to-end step of "Ghostline: Calibrate for This Workspace", as a user runs it: a workspace
// with real code (held-out files of the eval set, code the bundled model never saw), the command from the
// palette with its defaults, the progress notification, and the report opened as a Markdown preview with its
// plot. On disk, the report names the model and the plot is an SVG.
const fs = require('node:fs');
const path = require('node:path');
const { runCommand, sleep } = require('./ui');

/** @typedef {import('playwright-core').Page} Page */

const FOLDER = 'calibration-sample';
const FILES = 40;
const TIMEOUT_MS = 240_000;

/**
 * @param {Page} page
 * @param {string} workspace
 * @param {string} root the repository (for the eval set)
 * @param {(name: string) => void} mark
 * @param {string} screenshot where the report is captured
 */
async function calibrateInBrowser(page, workspace, root, mark, screenshot) {
  const dir = path.join(workspace, FOLDER);
  fs.mkdirSync(dir, { recursive: true });
  const lines = fs
    .readFileSync(path.join(root, 'tools', 'model', 'eval', 'heldout.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .slice(0, FILES);
  lines.forEach((line, i) => {
    const ex = JSON.parse(line);
    fs.writeFileSync(path.join(dir, `${i}_${path.basename(ex.path)}`), ex.prefix + ex.suffix);
  });
  await runCommand(page, 'Ghostline: Calibrate for This Workspace');
  mark(`Calibrate for This Workspace run on ${FILES} files of real code`);
  const progress = page.locator('.notifications-toasts .notification-list-item-message', { hasText: /calibrating/i }).first();
  await progress.waitFor({ state: 'visible', timeout: 30_000 });
  mark('the progress notification is shown');
  const tab = page.locator('.tab[aria-label*="ghostline-calibration-report"]').first();
  const warning = page.locator('.notifications-toasts .notification-list-item-message', { hasText: /could not calibrate/i }).first();
  for (const end = Date.now() + TIMEOUT_MS; ; await sleep(500)) {
    if (await tab.isVisible().catch(() => false)) break;
    if (await warning.isVisible().catch(() => false)) throw new Error(`calibration failed: ${await warning.textContent()}`);
    if (Date.now() > end) throw new Error(`no calibration report after ${TIMEOUT_MS / 1000} s`);
  }
  // The preview renders in a webview (an iframe in an iframe): its heading is the report's.
  const heading = page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame').locator('h1', { hasText: 'Ghostline calibration' });
  await heading.waitFor({ state: 'visible', timeout: 30_000 });
  await page.screenshot({ path: screenshot });
  mark('the report opened as a Markdown preview');
  const reports = path.join(workspace, '..', 'user-data', 'User', 'globalStorage', 'ghostline.ghostline', 'calibrations', 'reports');
  const found = fs.existsSync(reports) ? fs.readdirSync(reports).map((d) => path.join(reports, d)) : [];
  const md = found.map((d) => path.join(d, 'ghostline-calibration-report.md')).find((f) => fs.existsSync(f));
  if (!md) throw new Error(`no report on disk under ${reports}`);
  const text = fs.readFileSync(md, 'utf8');
  if (!/^# Ghostline calibration: /.test(text) || !/\| this workspace's/.test(text)) throw new Error(`the report lacks its numbers:\n${text.slice(0, 400)}`);
  const svg = fs.readFileSync(path.join(path.dirname(md), 'curve.svg'), 'utf8');
  if (!svg.startsWith('<svg') || (svg.match(/<path /g) ?? []).length !== 4) throw new Error('the plot is not the four curves');
  fs.rmSync(dir, { recursive: true, force: true });
}

module.exports = { calibrateInBrowser };
