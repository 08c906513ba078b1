/**
 * `npm run gen:calibration` generates two files from one fit: the default model's ghostline-calibration.json and the
 * generic calibration in src/completion/gate/genericCalibration.ts (committed source, so it is checked here).
 * A run that wrote one and not the other, or an edit by hand, leaves them describing different fits.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { GENERIC_CALIBRATION } from '../../../src/completion/gate/genericCalibration';
import { defaultModelDir } from '../../../src/engine/host/defaultModel';
import { ROOT } from '../../helpers';

test('the committed generic calibration comes from the same fit as the default model calibration', () => {
  const own = JSON.parse(fs.readFileSync(path.join(defaultModelDir(ROOT), 'ghostline-calibration.json'), 'utf8'));
  const generic = GENERIC_CALIBRATION as typeof GENERIC_CALIBRATION & { fitted: Record<string, unknown> };
  for (const key of ['date', 'data', 'samples', 'positive_rate', 'l2']) {
    assert.deepEqual(generic.fitted[key], own.fitted[key], `fitted.${key}: npm run gen:calibration writes both files`);
  }
  assert.equal(generic.fitted.model_data_from, own.model);
  // The generic calibration is the model's features without the language terms, in the same order.
  assert.deepEqual(
    generic.features,
    (own.features as string[]).filter((f) => !f.startsWith('lang_')),
  );
  for (const list of [generic.mean, generic.scale, generic.weights]) assert.equal(list.length, generic.features.length);
});
