// The browser end-to-end step of "Ghostline: Generate from Selection", as a user runs it: a method in the
// middle of a class, with code after it; its signature and docstring selected; the command from the palette;
// the result reviewed as a diff; Insert (or Regenerate while a try gives nothing worth inserting). On disk,
// the result must sit right after the docstring, stay inside the method, and leave the code after it as it was.
const fs = require('node:fs');
const path = require('node:path');
const { openFile, pollFile, runCommand, sleep } = require('./ui');

/** @typedef {import('playwright-core').Page} Page */

const FILE = 'ghost_e2e_inventory.py';
const HEAD =
  'class Inventory:\n    def __init__(self):\n        self.items = {}\n\n    def add(self, name, count=1):\n        """Add count of name to the inventory and return the new count."""\n';
const TAIL = '\n    def remove(self, name):\n        self.items.pop(name, None)\n\n\nstock = Inventory()\n';
/** 0-based line of `def add`: the selection is it and its docstring, as whole lines. */
const SIGNATURE_LINE = 4;
/** Tries (the first, then Regenerate: the next seed) before the step fails. */
const TRIES = 6;
const TRY_TIMEOUT_MS = 90_000;

/** @param {Page} page @param {string} label */
function button(page, label) {
  return page.locator('.notifications-toasts .notification-list-item .monaco-button', { hasText: new RegExp(`^${label}$`) }).first();
}

/**
 * @param {Page} page
 * @param {string} workspace
 * @param {(name: string) => void} mark
 * @param {string} screenshot where the review is captured
 */
async function generateInBrowser(page, workspace, mark, screenshot) {
  const target = path.join(workspace, FILE);
  const original = HEAD + TAIL;
  fs.writeFileSync(target, original);
  await openFile(page, FILE);
  await page.keyboard.press('Control+Home');
  for (let i = 0; i < SIGNATURE_LINE; i++) await page.keyboard.press('ArrowDown');
  await page.keyboard.press('Shift+ArrowDown');
  await page.keyboard.press('Shift+ArrowDown');
  await runCommand(page, 'Ghostline: Generate from Selection');
  mark(`${FILE}: the signature and docstring of add() selected, Generate from Selection run`);

  const errorToast = page.locator('.notifications-toasts .notification-list-item:has(.codicon-error) .notification-list-item-message');
  for (let tries = 1; ; ) {
    const end = Date.now() + TRY_TIMEOUT_MS;
    let outcome = '';
    while (!outcome) {
      const errors = (await errorToast.allInnerTexts().catch(() => [])).filter((t) => /ghostline/i.test(t));
      if (errors.length) throw new Error(`Generate from Selection showed an error: ${errors.map((e) => JSON.stringify(e)).join(', ')}`);
      if (
        await button(page, 'Insert')
          .isVisible()
          .catch(() => false)
      )
        outcome = 'insert';
      else if (
        await button(page, 'Regenerate')
          .isVisible()
          .catch(() => false)
      )
        outcome = 'regenerate';
      else if (Date.now() > end) throw new Error(`no review after ${TRY_TIMEOUT_MS / 1000} s (try ${tries})`);
      else await sleep(200);
    }
    if (outcome === 'insert') break;
    if (tries === TRIES) throw new Error(`${TRIES} tries gave nothing worth inserting`);
    tries++;
    await button(page, 'Regenerate').click();
    mark(`nothing worth inserting: Regenerate (try ${tries})`);
    await button(page, 'Regenerate')
      .waitFor({ state: 'detached', timeout: 10_000 })
      .catch(() => undefined);
  }
  // The review: the file against the file with the result, beside it, before anything is inserted.
  if (!(await page.locator('.monaco-diff-editor').first().isVisible())) throw new Error('the result is not shown as a diff before Insert');
  if (fs.readFileSync(target, 'utf8') !== original) throw new Error('the file changed before Insert');
  await page.screenshot({ path: screenshot });
  await button(page, 'Insert').click();
  await page.locator(`.tab[aria-label*="${FILE}"]`).first().click();
  await page.keyboard.press('Control+S');
  const saved = await pollFile(target, (t) => t !== original, 10_000);
  if (!saved) throw new Error('Insert changed nothing on disk');
  mark('the result was reviewed as a diff, inserted and saved');
  checkInsertion(saved);
  mark('the result ends where the method ends: after the docstring, inside add(), the code after it unchanged');
}

/** @param {string} saved the file after Insert */
function checkInsertion(saved) {
  const at = HEAD.length - 1; // the end of the docstring line: where the body goes
  if (!saved.startsWith(HEAD.slice(0, at))) throw new Error(`the code before the insertion changed:\n${saved}`);
  if (!saved.endsWith(TAIL)) throw new Error(`the code after the method changed or was swallowed:\n${saved}`);
  // The docstring line's own line break stays before TAIL (the blank line after the method).
  const inserted = saved.slice(at, saved.length - TAIL.length - 1);
  if (!inserted.startsWith('\n')) throw new Error(`not inserted after the docstring: ${JSON.stringify(inserted)}`);
  const lines = inserted.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) throw new Error('an empty result was inserted');
  // `def add` is indented 4: every line of its body is deeper.
  const outside = lines.find((l) => !/^ {5,}\S/.test(l));
  if (outside !== undefined) throw new Error(`a line of the result is outside the method: ${JSON.stringify(outside)} in ${JSON.stringify(inserted)}`);
  console.log(`[e2e] generated body:\n${inserted.replace(/^\n/, '').replace(/^/gm, '    ')}`);
}

module.exports = { generateInBrowser };
