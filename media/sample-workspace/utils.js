// Try: start a new function below, for example `function debounce(fn, ms) {`.

function clamp(value, min, max) {
  return Math.min(Math.max(value, min), max);
}

function range(start, end, step = 1) {
  const out = [];
  for (let i = start; i < end; i += step) {
    out.push(i);
  }
  return out;
}

module.exports = { clamp, range };
