// Written by `npm run calibrate`: the gate for models without their own ghostline-calibration.json.
// Model-agnostic features only (the model's token log-probabilities and the cursor's shape), fitted on the default model.
import type { Calibration } from './calibration';

export const GENERIC_CALIBRATION: Calibration = {
  version: 1,
  model: 'generic',
  features: [
    'first_line_mean_logprob',
    'first_line_min_logprob',
    'first_token_logprob',
    'mean_logprob',
    'first_line_tokens',
    'first_line_chars',
    'lines',
    'cut_by_filters',
    'cursor_in_word',
    'line_blank',
    'code_after_cursor',
    'opener_above',
    'opener_on_line',
    'line_chars_typed',
  ],
  mean: [-0.781376, -2.045589, -0.85872, -0.629785, 2.486728, 3.073992, 0.200241, 0.119948, 0.501956, 0.318123, 0, 0.082138, 0.019557, 1.702693],
  scale: [0.522135, 0.879635, 0.882342, 0.428816, 1.102006, 1.020338, 0.51177, 0.324901, 0.499996, 0.465747, 1, 0.274575, 0.138471, 1.398492],
  weights: [0.686169, 0.833811, -0.316568, 0.651399, -1.032813, -0.741464, -0.281842, -0.644265, 0.232108, -0.553436, 0, -0.144484, -0.275353, -0.220544],
  bias: -4.704041,
  fitted: {
    date: '2026-12-03',
    data: ['external', 'heldout'],
    samples: 767,
    positive_rate: 0.0939,
    l2: 4,
    model_data_from: 'ghostline-code-small',
    by: 'npm run calibrate',
  },
};
