/** Sliding-window speed meter for download progress (bytes/s over the last few seconds). */
export class SpeedMeter {
  private samples: { t: number; bytes: number }[] = [];
  constructor(private readonly windowMs = 5000) {}
  add(bytesTotal: number, now = Date.now()): void {
    const last = this.samples[this.samples.length - 1];
    if (last && now - last.t < 50) {
      last.bytes = Math.max(last.bytes, bytesTotal);
      if (this.samples.length > 1) return;
    }
    this.samples.push({ t: now, bytes: bytesTotal });
    while (this.samples.length > 2 && now - this.samples[0].t > this.windowMs) this.samples.shift();
  }
  /** Resets after a jump in bytes that is not transfer (a truncated part, a skipped file). */
  reset(bytesTotal: number): void {
    this.samples = [{ t: Date.now(), bytes: bytesTotal }];
  }
  speed(): number {
    if (this.samples.length < 2) return 0;
    const a = this.samples[0];
    const b = this.samples[this.samples.length - 1];
    const dt = (b.t - a.t) / 1000;
    return dt > 0 ? Math.max(0, (b.bytes - a.bytes) / dt) : 0;
  }
}
