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
  mean: [-0.725264, -1.725173, -0.433026, -0.666713, 2.121378, 2.687582, 0.00709, 0.260406, 0.370331, 0.216649, 0.273212, 0.054429, 0.21238, 2.043899],
  scale: [0.492662, 0.906, 0.586468, 0.4286, 0.968469, 0.938568, 0.091741, 0.438856, 0.482893, 0.411961, 0.445609, 0.226862, 0.408992, 1.3463],
  weights: [0.526627, 0.54739, -0.272565, 0.890723, -1.087255, -0.399655, -0.119253, 0.377462, 0.021413, -0.489726, -0.630275, -0.150795, 0.280961, -0.370516],
  bias: -3.080381,
  fitted: {
    date: '2026-12-05',
    data: ['after-cursor', 'external', 'heldout'],
    samples: 937,
    positive_rate: 0.1515,
    l2: 4,
    model_data_from: 'ghostline-code-small',
    by: 'npm run calibrate',
  },
};
