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
  mean: [-0.792056, -2.029661, -0.763193, -0.631987, 2.454343, 3.0572, 0.263934, 0.116798, 0.502625, 0.314961, 0, 0.080052, 0.019685, 1.709849],
  scale: [0.51123, 0.864759, 0.795119, 0.417464, 1.073495, 0.992191, 0.570733, 0.321179, 0.499993, 0.4645, 1, 0.271374, 0.138916, 1.397207],
  weights: [0.72311, 0.720912, -0.043884, 0.627162, -1.250836, -0.59839, -0.319105, -0.60842, 0.190523, -0.479549, 0, 0.291017, -0.302899, -0.307363],
  bias: -4.487293,
  fitted: {
    date: '2026-12-03',
    data: ['external', 'heldout'],
    samples: 762,
    positive_rate: 0.0945,
    l2: 4,
    model_data_from: 'ghostline-code-small',
    by: 'npm run calibrate',
  },
};
