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
  mean: [-0.757818, -1.784282, -0.541776, -0.633504, 2.108319, 2.760039, 0.207525, 0.074883, 0.546022, 0.26053, 0, 0.078003, 0.015601, 1.8582],
  scale: [0.505659, 0.940907, 0.639263, 0.424619, 0.928042, 0.950543, 0.518994, 0.263202, 0.497877, 0.438924, 1, 0.268176, 0.123924, 1.368299],
  weights: [0.93325, 0.697438, -0.24973, 0.537149, -1.150456, -0.39213, -0.02392, -0.54649, -0.015429, -0.705039, 0, -0.175656, -0.053565, -0.416185],
  bias: -3.524953,
  fitted: {
    date: '2026-12-04',
    data: ['external', 'heldout'],
    samples: 641,
    positive_rate: 0.1498,
    l2: 4,
    model_data_from: 'ghostline-code-small',
    by: 'npm run calibrate',
  },
};
