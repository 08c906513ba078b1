import * as fs from 'node:fs';
import * as path from 'node:path';
import { CALIBRATION_FILE, parseCalibration, type Calibration } from './calibration';
import { GENERIC_CALIBRATION } from './genericCalibration';

/**
 * The model folder's calibration, or the generic one when it has none or a broken one (then `problem`
 * says why, for one log line: a bad file never stops suggestions).
 */
export function readCalibration(modelDir: string): { calibration: Calibration; source: string; problem?: string } {
  const file = path.join(modelDir, CALIBRATION_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return { calibration: GENERIC_CALIBRATION, source: 'generic (the model folder has no calibration)' };
  }
  try {
    return { calibration: parseCalibration(JSON.parse(text)), source: file };
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return { calibration: GENERIC_CALIBRATION, source: 'generic', problem: `${file} ignored: ${why}; using the generic calibration` };
  }
}
