// What the browser end-to-end steps share: waiting, reading files, opening a file and running a command in
// code-server's workbench through its own UI (Playwright on headless Chromium).
const fs = require('node:fs');

/** @typedef {import('playwright-core').Page} Page */

/** @param {number} ms */
function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * @param {string} file
 * @param {(text: string) => boolean} predicate
 * @param {number} timeoutMs
 * @returns {Promise<string | null>} the file's text once predicate holds; null after timeoutMs
 */
async function pollFile(file, predicate, timeoutMs) {
  const end = Date.now() + timeoutMs;
  let text = '';
  for (;;) {
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      text = '';
    }
    if (predicate(text)) return text;
    if (Date.now() > end) return null;
    await sleep(100);
  }
}

/** @param {string} s */
function nbsp(s) {
  return s.replace(/\u00a0/g, ' ');
}

/**
 * @param {Page} page
 * @param {string} name
 */
async function openFile(page, name) {
  const row = page.locator(`.explorer-folders-view .monaco-list-row[aria-label="${name}"]`);
  try {
    await row.waitFor({ timeout: 15_000 });
    await row.dblclick();
  } catch {
    // Fall back to Quick Open.
    await page.keyboard.press('Control+P');
    await page.keyboard.type(name);
    await sleep(500);
    await page.keyboard.press('Enter');
  }
  await page.locator(`.tab[aria-label*="${name}"], .tab[data-resource-name="${name}"]`).first().waitFor({ timeout: 15_000 });
  await page
    .locator('.editor-instance .monaco-editor textarea, .editor-instance .monaco-editor .native-edit-context')
    .first()
    .waitFor({ state: 'attached', timeout: 15_000 });
}

/**
 * Runs a command from the command palette (F1), by its title as the palette shows it.
 * @param {Page} page
 * @param {string} title e.g. "Ghostline: Show Stats"
 */
async function runCommand(page, title) {
  await page.keyboard.press('F1');
  await page.keyboard.type(title);
  await sleep(500);
  await page.keyboard.press('Enter');
}

module.exports = { nbsp, openFile, pollFile, runCommand, sleep };
