// Written by `npm run gen:calibration`: the gate for models without their own ghostline-calibration.json.
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
  mean: [-0.725671, -1.721349, -0.431414, -0.667311, 2.119269, 2.688684, 0.007731, 0.258166, 0.373024, 0.214963, 0.270811, 0.053741, 0.211802, 2.044162],
  scale: [0.49179, 0.903668, 0.584568, 0.428089, 0.965377, 0.937428, 0.093841, 0.437626, 0.483608, 0.410797, 0.444379, 0.225505, 0.408585, 1.341581],
  weights: [0.529262, 0.529367, -0.285018, 0.912672, -1.084992, -0.420311, -0.15912, 0.373554, 0.008515, -0.47373, -0.626048, -0.144768, 0.280228, -0.348481],
  bias: -3.107853,
  fitted: {
    date: '2026-12-05',
    data: ['after-cursor', 'external', 'heldout'],
    samples: 949,
    positive_rate: 0.1496,
    l2: 4,
    model_data_from: 'ghostline-code-small',
    by: 'npm run gen:calibration',
  },
};
