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
  mean: [-0.755876, -1.782811, -0.542674, -0.630183, 2.107469, 2.759444, 0.159399, 0.07716, 0.540123, 0.266975, 0, 0.078704, 0.016975, 1.842405],
  scale: [0.504606, 0.941758, 0.639529, 0.423654, 0.926495, 0.945661, 0.479941, 0.266846, 0.498388, 0.442379, 1, 0.269276, 0.129179, 1.372964],
  weights: [0.990882, 0.73148, -0.217359, 0.462874, -1.177908, -0.373846, -0.114328, -0.547752, -0.02178, -0.633539, 0, -0.212776, 0.009073, -0.426918],
  bias: -3.549478,
  fitted: {
    date: '2026-12-04',
    data: ['external', 'heldout'],
    samples: 648,
    positive_rate: 0.1512,
    l2: 4,
    model_data_from: 'ghostline-code-small',
    by: 'npm run calibrate',
  },
};
