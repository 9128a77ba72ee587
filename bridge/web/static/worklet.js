// AudioWorklet: plays audio pushed through the port (interleaved s16le stereo PCM as an ArrayBuffer,
// or {l, r} Float32Arrays from WebCodecs) from a jitter buffer.
// It starts once `startFrames` are buffered, zero-fills (and counts) a shortfall, and never blocks.
class PcmPlayer extends AudioWorkletProcessor {
  constructor() {
    super();
    this.cap = 48000 * 4;                 // 4 s of stereo frames
    this.l = new Float32Array(this.cap);
    this.r = new Float32Array(this.cap);
    this.w = 0; this.rd = 0;              // frames ever written / read
    this.started = false;
    this.startFrames = 2880;              // 60 ms
    this.underruns = 0;
    this.port.onmessage = (e) => {
      if (e.data === "reset") { this.w = this.rd = 0; this.started = false; return; }
      if (e.data.l) {                     // decoded by WebCodecs: {l, r} Float32Arrays
        const l = e.data.l, r = e.data.r || e.data.l;
        for (let i = 0; i < l.length; i++) {
          if (this.w - this.rd >= this.cap) break;
          const p = this.w % this.cap;
          this.l[p] = l[i]; this.r[p] = r[i];
          this.w++;
        }
        return;
      }
      const s = new Int16Array(e.data);
      const n = s.length >> 1;
      for (let i = 0; i < n; i++) {
        if (this.w - this.rd >= this.cap) break;   // full: drop the rest
        const p = this.w % this.cap;
        this.l[p] = s[2 * i] / 32768; this.r[p] = s[2 * i + 1] / 32768;
        this.w++;
      }
    };
  }
  process(inputs, outputs) {
    const out = outputs[0];
    const L = out[0], R = out[1] || out[0];
    const n = L.length;
    const avail = this.w - this.rd;
    if (!this.started && avail >= this.startFrames) this.started = true;
    let k = this.started ? Math.min(n, avail) : 0;
    for (let i = 0; i < k; i++) {
      const p = (this.rd + i) % this.cap;
      L[i] = this.l[p]; R[i] = this.r[p];
    }
    for (let i = k; i < n; i++) { L[i] = 0; R[i] = 0; }
    this.rd += k;
    if (this.started && k < n) { this.underruns += n - k; if (avail === 0) this.started = false; }
    return true;
  }
}
registerProcessor("pcm-player", PcmPlayer);
