import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { type Calibration, parseCalibration } from '../completion/gate/calibration';
import type { WorkspaceCalibrationReport } from '../completion/calibrate/fitWorkspace';
import { renameWhenFree } from '../platform/folderSwap';

/**
 * Calibrations fitted by "Calibrate for This Workspace", one per model (a local model folder and file, or a
 * server's URL and model name), in the extension's global storage: a model folder may not be writable (the
 * bundled one, a shared cache), and the fit belongs to this user's code, not to the model's files.
 */
export class CalibrationStore {
  private readonly loaded = new Map<string, Calibration | null>();

  constructor(private readonly dir: string) {}

  private file(key: string): string {
    return path.join(this.dir, `${createHash('sha256').update(key).digest('hex').slice(0, 24)}.json`);
  }

  /** The model's own calibration, if one was fitted (read once; a broken file counts as none). */
  get(key: string): Calibration | undefined {
    if (!this.loaded.has(key)) {
      let cal: Calibration | null = null;
      try {
        const saved = JSON.parse(fs.readFileSync(this.file(key), 'utf8')) as { key?: string; calibration?: unknown };
        if (saved.key === key) cal = parseCalibration(saved.calibration);
      } catch {
        // none yet, or unreadable: the model keeps the calibration it had
      }
      this.loaded.set(key, cal);
    }
    return this.loaded.get(key) ?? undefined;
  }

  /** Saves a fit and its report; the model uses it from its next suggestion on. Returns the report's folder. */
  async save(key: string, calibration: Calibration, report: WorkspaceCalibrationReport): Promise<string> {
    fs.mkdirSync(this.dir, { recursive: true });
    const file = this.file(key);
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify({ key, calibration, report }, null, 2)}\n`);
    // Another window's worker may be reading it (Windows refuses the rename meanwhile): retried, then named.
    await renameWhenFree(tmp, file, `save the calibration ${file}`, { hint: 'Another VS Code window may be reading it; run the calibration again.' }).catch(
      (e) => {
        fs.rmSync(tmp, { force: true });
        throw e;
      },
    );
    this.loaded.set(key, calibration);
    return this.reportFolder(key);
  }

  /** The folder of a model's calibration reports (created), also for a fit that was not kept. */
  reportFolder(key: string): string {
    const reports = path.join(this.dir, 'reports', path.basename(this.file(key), '.json'));
    fs.mkdirSync(reports, { recursive: true });
    return reports;
  }

  /** Forgets a model's fit (it goes back to its folder's or the generic calibration). */
  remove(key: string): void {
    fs.rmSync(this.file(key), { force: true });
    this.loaded.set(key, null);
  }
}
