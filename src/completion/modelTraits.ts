import type { ModelInfo } from '../engine/shared/types';
import type { ModelTraits } from './types';
import { readCalibration } from './gate/readCalibration';

/** What the pipeline needs of a loaded model: its context, measured characters per token, and its calibration. */
export function modelTraits(info: ModelInfo, log?: (line: string) => void): ModelTraits {
  const cal = readCalibration(info.dir);
  if (cal.problem) log?.(cal.problem);
  return { contextTokens: info.contextLength, charsPerToken: info.charsPerToken, calibration: cal.calibration, calibrationSource: cal.source };
}
