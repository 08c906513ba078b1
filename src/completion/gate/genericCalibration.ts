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
  mean: [-0.80211, -1.957723, -0.676489, -0.659713, 2.318314, 2.909357, 0.199929, 0.114566, 0.546645, 0.266776, 0, 0.07365, 0.016367, 1.866642],
  scale: [0.512268, 0.889499, 0.724374, 0.433502, 1.001286, 0.875293, 0.500605, 0.318498, 0.49782, 0.442274, 1, 0.2612, 0.126881, 1.379793],
  weights: [0.762764, 0.705293, -0.030629, 0.703603, -1.233586, -0.474577, -0.251184, -0.598941, 0.202505, -0.444042, 0, 0.275863, -0.245267, -0.321597],
  bias: -4.12155,
  fitted: {
    date: '2026-12-03',
    data: ['external', 'heldout'],
    samples: 611,
    positive_rate: 0.1129,
    l2: 4,
    model_data_from: 'ghostline-code-small',
    by: 'npm run calibrate',
  },
};
