/**
 * Calibrate for This Workspace, its pure parts: positions sampled from real files, the fit and its
 * cross-fitted report, the plot, and the generic calibration's bound on the gate.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { curveSvg, reportMarkdown } from '../../src/completion/calibrate/calibrationReport';
import { type CalibrationSample, fitWorkspace, MIN_SUGGESTED, tooFew } from '../../src/completion/calibrate/fitWorkspace';
import { pickPositions, textBeforeTyping, type WorkspaceFile } from '../../src/completion/calibrate/workspacePositions';
import { confidence } from '../../src/completion/gate/calibration';
import { FEATURE_NAMES, type FeatureName } from '../../src/completion/gate/features';
import { GENERIC_CALIBRATION } from '../../src/completion/gate/genericCalibration';
import { GENERIC_GATE_BOUND, gateThreshold } from '../../src/completion/gate/gateThreshold';
import { ROOT } from '../helpers';

/** Real files: this repository's own sources (TypeScript) and its Python tools. */
function realFiles(): WorkspaceFile[] {
  const pick = (dir: string, ext: string, languageId: string) =>
    fs
      .readdirSync(path.join(ROOT, dir))
      .filter((f) => f.endsWith(ext))
      .map((f) => ({ path: `${dir}/${f}`, languageId, text: fs.readFileSync(path.join(ROOT, dir, f), 'utf8') }));
  return [...pick('src/completion', '.ts', 'typescript'), ...pick('tools/model', '.py', 'python')];
}

test('positions: where the text is, the rest of the line is expected, mid-line and line starts, spread over files, deterministic', () => {
  const files = realFiles();
  const ps = pickPositions(files, 200, 7);
  assert.equal(ps.length, 200);
  for (const p of ps) {
    const lineEnd = p.file.text.indexOf('\n', p.offset);
    const rest = p.file.text.slice(p.offset, lineEnd < 0 ? undefined : lineEnd).trimEnd();
    assert.equal(p.expected, rest, `${p.file.path}@${p.offset}`);
    // What the model is asked at: the line ends at the cursor, the rest of the file as it is.
    const typing = textBeforeTyping(p);
    assert.equal(typing.slice(0, p.offset), p.file.text.slice(0, p.offset));
    assert.equal(typing.slice(p.offset), p.file.text.slice(lineEnd < 0 ? p.file.text.length : lineEnd).replace(/^\r(?=\n)/, ''));
    assert.ok(p.expected.trim().length >= 3);
    const lineStart = p.file.text.lastIndexOf('\n', p.offset - 1) + 1;
    const before = p.file.text.slice(lineStart, p.offset);
    if (p.kind === 'line-start') assert.equal(before.trim(), '', 'a line start is after the indentation');
    else
      assert.ok(
        before.trim() !== '' && !(/\w$/.test(before) && /^\w/.test(p.expected)),
        `mid-word cut ${JSON.stringify(before)}|${JSON.stringify(p.expected)}`,
      );
  }
  const kinds = ps.filter((p) => p.kind === 'mid-line').length / ps.length;
  assert.ok(kinds > 0.5 && kinds < 0.9, `mid-line share ${kinds}`);
  const perFile = new Map<string, number>();
  for (const p of ps) perFile.set(p.file.path, (perFile.get(p.file.path) ?? 0) + 1);
  assert.ok(perFile.size >= 20, `${perFile.size} files`);
  assert.ok(Math.max(...perFile.values()) <= 12);
  assert.deepEqual(
    pickPositions(files, 200, 7).map((p) => p.offset),
    ps.map((p) => p.offset),
  );
  assert.deepEqual(pickPositions([{ path: 'a.py', languageId: 'python', text: '# only a comment\n\n' }], 10), []);
});

/** Samples whose features say how sure the model was, and whose truth follows that (with noise), in 30 files. */
function samples(n: number, seed = 3): CalibrationSample[] {
  let s = seed;
  const rand = () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
  return Array.from({ length: n }, (_, i) => {
    const sure = rand();
    const features = Object.fromEntries(FEATURE_NAMES.map((f) => [f, rand()])) as Record<FeatureName, number>;
    features.first_line_mean_logprob = Math.log(0.05 + 0.95 * sure);
    features.mean_logprob = features.first_line_mean_logprob;
    // One language in the whole workspace: constant features (their mean off by rounding) must not break the fit.
    features.lang_js_ts = 1;
    features.lang_python = 0;
    features.line_chars_typed = 0.1;
    return { path: `f${i % 30}.py`, features: i % 9 === 0 ? null : features, exact: rand() < sure * sure };
  });
}

test('the fit: too few samples is an error that says why; enough gives a calibration that ranks the right ones higher', () => {
  assert.match(tooFew(samples(MIN_SUGGESTED - 5)) ?? '', /at least 40 suggestions/);
  const all = samples(400);
  const { calibration, report } = fitWorkspace(all, 'my-model', 0.1, { calibration: GENERIC_CALIBRATION, source: 'generic' });
  assert.equal(calibration.model, 'my-model');
  assert.equal(report.positions, 400);
  assert.equal(report.suggested, all.filter((x) => x.features).length);
  assert.equal(report.files, 30);
  const scored = all.filter((x) => x.features);
  const mean = (ys: CalibrationSample[]) => ys.reduce((t, x) => t + confidence(calibration, x.features!), 0) / ys.length;
  assert.ok(
    scored.every((x) => Number.isFinite(confidence(calibration, x.features!))),
    'every confidence a number',
  );
  assert.ok(mean(scored.filter((x) => x.exact)) > mean(scored.filter((x) => !x.exact)) + 0.2);
  // The curve: shown falls as the threshold rises; precision at the threshold in use is cross-fitted.
  for (let i = 1; i < report.curve.own.length; i++) assert.ok(report.curve.own[i].shown <= report.curve.own[i - 1].shown);
  assert.ok(report.own.precision > report.right / report.suggested, 'the gate at 0.1 is more precise than showing all');
  assert.equal(report.threshold, 0.1);
});

test('the report: markdown with the numbers and the plot, an SVG with four curves and the threshold', () => {
  const { report } = fitWorkspace(samples(300), 'my-model', 0.1, { calibration: GENERIC_CALIBRATION, source: 'generic' });
  const md = reportMarkdown(report, 'curve.svg');
  assert.match(md, /^# Ghostline calibration: my-model/);
  assert.match(md, /!\[precision and shown against the threshold\]\(curve\.svg\)/);
  assert.ok(md.includes(`${(100 * report.own.precision).toFixed(1)}%`));
  const svg = curveSvg(report.curve, 0.1);
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.equal((svg.match(/<path /g) ?? []).length, 4);
  assert.ok(!svg.includes('NaN'));
});

test("the generic calibration holds back only below its bound; a model's own uses minConfidence as set", () => {
  assert.equal(gateThreshold(GENERIC_CALIBRATION, 0.1), GENERIC_GATE_BOUND);
  assert.equal(gateThreshold(GENERIC_CALIBRATION, 0.01), 0.01);
  assert.equal(gateThreshold({ ...GENERIC_CALIBRATION, model: 'ghostline-code-small' }, 0.1), 0.1);
  assert.equal(gateThreshold(undefined, 0.3), 0.3);
});

test('Calibrate for This Workspace keeps the better fit at the threshold in use, and says which and why', async () => {
  const { keepBetterFit } = await import('../../src/completion/calibrate/fitWorkspace');
  // The case a user met: the workspace fit showed more at a lower precision, and was adopted.
  const worse = keepBetterFit({ shown: 0.325, precision: 0.292 }, { shown: 0.27, precision: 0.333, source: 'the bundled calibration' });
  assert.equal(worse.inUse, 'before');
  assert.match(worse.why, /less precise.*29\.2% against 33\.3%.*keeps the bundled calibration/);
  const better = keepBetterFit({ shown: 0.2, precision: 0.4 }, { shown: 0.27, precision: 0.333, source: 'generic' });
  assert.equal(better.inUse, 'own');
  assert.equal(keepBetterFit({ shown: 0.3, precision: 0.331 }, { shown: 0.27, precision: 0.333, source: 'generic' }).inUse, 'own', 'within the tolerance');
  assert.equal(keepBetterFit({ shown: 0, precision: 0 }, { shown: 0, precision: 0, source: 'generic' }).inUse, 'before', 'a fit that shows nothing');
});
