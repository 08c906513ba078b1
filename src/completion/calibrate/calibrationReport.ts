import type { WorkspaceCalibrationReport } from './fitWorkspace';
import type { CurvePoint } from './keptMatch';

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/** Precision and shown against the threshold, for both calibrations: a self-contained SVG. */
export function curveSvg(curves: { own: CurvePoint[]; before: CurvePoint[] }, threshold: number): string {
  const w = 560;
  const h = 300;
  const m = { l: 48, r: 16, t: 28, b: 40 };
  const x = (t: number) => m.l + (t / 0.95) * (w - m.l - m.r);
  const y = (v: number) => h - m.b - v * (h - m.t - m.b);
  // Precision is drawn only where something is shown (it has no value past the last suggestion).
  const line = (pts: CurvePoint[], key: 'shown' | 'precision') =>
    pts
      .filter((p) => key === 'shown' || p.shown > 0)
      .map((p, i) => `${i ? 'L' : 'M'}${x(p.threshold).toFixed(1)},${y(p[key]).toFixed(1)}`)
      .join(' ');
  const series: [CurvePoint[], 'shown' | 'precision', string, string][] = [
    [curves.own, 'precision', '#1f77b4', ''],
    [curves.own, 'shown', '#ff7f0e', ''],
    [curves.before, 'precision', '#1f77b4', '4 3'],
    [curves.before, 'shown', '#ff7f0e', '4 3'],
  ];
  const grid = [0, 0.25, 0.5, 0.75, 1]
    .map(
      (v) =>
        `<line x1="${m.l}" x2="${w - m.r}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/><text x="${m.l - 6}" y="${y(v) + 4}" text-anchor="end">${v * 100}%</text>`,
    )
    .join('');
  const ticks = [0, 0.2, 0.4, 0.6, 0.8].map((t) => `<text x="${x(t)}" y="${h - m.b + 16}" text-anchor="middle">${t}</text>`).join('');
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" font-family="sans-serif" font-size="11" fill="#444">`,
    `<rect width="${w}" height="${h}" fill="#fff"/>${grid}${ticks}`,
    `<text x="${(m.l + w - m.r) / 2}" y="${h - 6}" text-anchor="middle">confidence threshold</text>`,
    `<line x1="${x(threshold)}" x2="${x(threshold)}" y1="${m.t}" y2="${h - m.b}" stroke="#2ca02c"/>`,
    ...series.map(
      ([pts, key, color, dash]) => `<path d="${line(pts, key)}" fill="none" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ''}/>`,
    ),
    `<text x="${w - m.r}" y="14" text-anchor="end">precision (blue), shown (orange); solid: this workspace's calibration, dashed: before</text>`,
    '</svg>',
  ].join('');
}

/** The report as Markdown, with the plot as an image file next to it (`plotFile`, relative). */
export function reportMarkdown(r: WorkspaceCalibrationReport, plotFile: string): string {
  const rows = r.curve.own
    .filter((_, i) => i % 2 === 0)
    .map((p, i) => {
      const b = r.curve.before[i * 2];
      return `| ${p.threshold.toFixed(2)} | ${pct(p.shown)} | ${pct(p.precision)} | ${pct(b.shown)} | ${pct(b.precision)} |`;
    });
  return [
    `# Ghostline calibration: ${r.model}`,
    '',
    `${r.date.slice(0, 16).replace('T', ' ')} UTC. ${r.positions} positions in ${r.files} files of this workspace; the model made ${r.suggested} suggestions, ${r.right} of them exactly the rest of the line. Nothing left this machine.`,
    '',
    `At the threshold in use (\`ghostline.inline.minConfidence\` = ${r.threshold}):`,
    '',
    '| calibration | shown | precision |',
    '| --- | --- | --- |',
    `| this workspace's (cross-fitted: each half of the files scored by a fit on the other) | ${pct(r.own.shown)} | ${pct(r.own.precision)} |`,
    `| before (${r.before.source}) | ${pct(r.before.shown)} | ${pct(r.before.precision)} |`,
    '',
    'Shown: suggestions the gate lets through, over all positions. Precision: of those, the ones that were exactly what was written.',
    r.inUse === 'own'
      ? `**In use: this workspace's calibration** (saved in Ghostline's global storage), because ${r.why}. Run the command again after changing models.`
      : `**In use: the calibration from before (${r.before.source})**, because ${r.why}. This workspace's fit was not saved.`,
    '',
    `![precision and shown against the threshold](${plotFile})`,
    '',
    '| threshold | shown | precision | shown before | precision before |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
  ].join('\n');
}
