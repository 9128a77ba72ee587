// wavebridge web page: live slot status over /v1/status/ws, per-slot play/stop, and a private
// stream played in the browser (PCM over /v1/stream into an AudioWorklet, metered by an AnalyserNode).
"use strict";
const $ = (id) => document.getElementById(id);
// this install's page token (served in the page, to this origin only): it makes the page the local
// admin on a server that needs no key — sent as X-Wavebridge-Token, and as ?token= on WebSockets
const TOKEN = (document.querySelector('meta[name="wavebridge-token"]') || {}).content || "";
function authHeaders(extra) {
  const h = Object.assign({}, extra || {});
  if (TOKEN) h["X-Wavebridge-Token"] = TOKEN;
  if (state.key) h["Authorization"] = "Bearer " + state.key;
  return h;
}
const state = { key: "", rows: new Map(), statusWs: null, ws: null, ctx: null, node: null, analyser: null,
                wsReady: null, pendingPlay: null };
window.wbLevel = -120;          // the page's own analyser: peak dBFS of what it plays (for tests, too)
window.wbPeakMax = -120;
window.wbEvents = [];

function log(msg) {
  const el = $("log");
  el.textContent = (new Date().toISOString().slice(11, 23) + " " + msg + "\n" + el.textContent).slice(0, 4000);
}

// ------------------------------------------------------------------ key
function loadKey() {
  const m = location.hash.match(/key=([^&]+)/);
  state.key = m ? decodeURIComponent(m[1]) : (localStorage.getItem("wavebridge.key") || "");
  $("key").value = state.key;
  $("key").addEventListener("change", applyKey);
  $("keyform").addEventListener("submit", (e) => { e.preventDefault(); applyKey(); });   // Enter: no reload
}
function applyKey() {
  const key = $("key").value.trim();
  if (key === state.key) return;      // Enter fires both change and submit: reconnect once
  state.key = key;
  localStorage.setItem("wavebridge.key", state.key);
  connectStatus(true);
}
function wsUrl(path, params) {
  const u = new URL(path, location.href);
  u.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  for (const [k, v] of Object.entries(params || {})) u.searchParams.set(k, v);
  if (state.key) u.searchParams.set("key", state.key);
  if (TOKEN) u.searchParams.set("token", TOKEN);
  return u.toString();
}
async function api(method, path, body) {
  const headers = authHeaders({ "Content-Type": "application/json" });
  const r = await fetch(path, { method, headers, body: JSON.stringify(body || {}) });
  const j = await r.json().catch(() => ({}));
  if (!r.ok) log(`${method} ${path}: ${r.status} ${j.message || ""}`);
  return j;
}

// ------------------------------------------------------------------ slots
function dbToPct(db) { return Math.max(0, Math.min(100, (db + 60) / 60 * 100)); }

function rowFor(s) {
  const id = String(s.slot);
  let r = state.rows.get(id);
  if (r) return r;
  const tr = document.createElement("tr");
  tr.dataset.slot = id;
  tr.innerHTML = `<td class="name"></td><td class="state"></td><td class="prompt"></td><td class="buf"></td>
    <td><div class="meter"><div></div></div></td><td class="ctl"></td>`;
  tr.querySelector(".name").textContent = id;
  if (s.private) {
    tr.querySelector(".name").insertAdjacentHTML("beforeend", ' <span class="badge">web</span>');
  } else {
    const ctl = tr.querySelector(".ctl");
    const inp = document.createElement("input");
    inp.type = "text"; inp.placeholder = "prompt"; inp.className = "sprompt"; inp.style.width = "16rem";
    const play = document.createElement("button"); play.textContent = "Play"; play.className = "splay";
    const stop = document.createElement("button"); stop.textContent = "Stop"; stop.className = "sstop";
    play.onclick = () => inp.value.trim() && api("POST", `/v1/slots/${encodeURIComponent(id)}/play`, { prompt: inp.value.trim() });
    stop.onclick = () => api("POST", `/v1/slots/${encodeURIComponent(id)}/stop`, { fade_s: 0.2 });
    ctl.append(inp, play, stop);
  }
  $("slots").querySelector("tbody").appendChild(tr);
  r = { tr };
  state.rows.set(id, r);
  return r;
}

function renderStatus(msg) {
  const seen = new Set();
  for (const s of msg.slots) {
    const { tr } = rowFor(s);
    seen.add(String(s.slot));
    const st = tr.querySelector(".state");
    st.textContent = s.state; st.className = "state state-" + s.state;
    const p = tr.querySelector(".prompt"); p.textContent = s.prompt; p.title = s.prompt;
    tr.querySelector(".buf").textContent = s.buffered_s.toFixed(2) + " s";
    tr.querySelector(".meter > div").style.width = dbToPct(s.level_db) + "%";
    tr.dataset.level = s.level_db;
  }
  for (const [id, r] of state.rows) if (!seen.has(id)) { r.tr.remove(); state.rows.delete(id); }
}

function connectStatus(restart) {
  if (state.statusWs && restart) { state.statusWs.onclose = null; state.statusWs.close(); }
  const ws = new WebSocket(wsUrl("/v1/status/ws"));
  state.statusWs = ws;
  ws.onopen = () => { $("conn").textContent = "live"; $("conn").className = "pill on"; };
  ws.onmessage = (e) => { const m = JSON.parse(e.data); if (m.type === "status") renderStatus(m); };
  ws.onclose = async () => {
    $("conn").textContent = "disconnected"; $("conn").className = "pill off";
    try {           // a locked server refuses the upgrade: say so instead of retrying silently
      const r = await fetch("/v1/status", { headers: authHeaders() });
      if (r.status === 401 || r.status === 403) {
        $("conn").textContent = state.key ? "key refused" : "API key needed";
        return;     // retried when the key field changes
      }
    } catch (e) { /* server away: retry below */ }
    setTimeout(() => connectStatus(false), 1000);
  };
}

// ------------------------------------------------------------------ listening
async function ensureAudio() {
  if (state.ctx) { if (state.ctx.state !== "running") await state.ctx.resume(); return; }
  const ctx = new AudioContext({ sampleRate: 48000, latencyHint: "interactive" });
  await ctx.audioWorklet.addModule("/web/worklet.js");
  const node = new AudioWorkletNode(ctx, "pcm-player", { numberOfInputs: 0, outputChannelCount: [2] });
  const analyser = ctx.createAnalyser();
  analyser.fftSize = 2048;
  node.connect(analyser);
  analyser.connect(ctx.destination);
  Object.assign(state, { ctx, node, analyser });
  const buf = new Float32Array(analyser.fftSize);
  setInterval(() => {
    analyser.getFloatTimeDomainData(buf);
    let peak = 0;
    for (let i = 0; i < buf.length; i++) { const a = Math.abs(buf[i]); if (a > peak) peak = a; }
    const db = 20 * Math.log10(Math.max(peak, 1e-6));
    window.wbLevel = db;
    if (db > window.wbPeakMax) window.wbPeakMax = db;
    $("llevel").textContent = db.toFixed(1) + " dBFS";
    $("llevel").dataset.level = db.toFixed(1);
    $("lmeter").style.width = dbToPct(db) + "%";
  }, 50);
  if (ctx.state !== "running") await ctx.resume();
}

function opusDecoder() {
  // WebCodecs: one EncodedAudioChunk per 20 ms Opus packet; decoded planes go to the worklet
  let ts = 0;
  const dec = new AudioDecoder({
    output: (ad) => {
      const l = new Float32Array(ad.numberOfFrames), r = new Float32Array(ad.numberOfFrames);
      ad.copyTo(l, { planeIndex: 0, format: "f32-planar" });
      if (ad.numberOfChannels > 1) ad.copyTo(r, { planeIndex: 1, format: "f32-planar" }); else r.set(l);
      ad.close();
      state.node && state.node.port.postMessage({ l, r }, [l.buffer, r.buffer]);
    },
    error: (e) => log("AudioDecoder: " + e.message),
  });
  dec.configure({ codec: "opus", sampleRate: 48000, numberOfChannels: 2 });
  return (buf) => {
    dec.decode(new EncodedAudioChunk({ type: "key", timestamp: ts, data: buf }));
    ts += 20000;
  };
}

function openStream() {
  const fmt = $("ltransport").value;
  if (state.ws && state.ws.readyState <= 1 && state.wsFormat === fmt) return state.wsReady;
  if (state.ws && state.ws.readyState <= 1) { state.ws.onclose = null; state.ws.close(); }
  if (fmt === "opus_packets" && !("AudioDecoder" in window)) {
    log("this browser has no WebCodecs AudioDecoder: using PCM");
    $("ltransport").value = "pcm_s16le";
    return openStream();
  }
  const ws = new WebSocket(wsUrl("/v1/stream", { format: fmt }));
  ws.binaryType = "arraybuffer";
  state.ws = ws;
  state.wsFormat = fmt;
  const decode = fmt === "opus_packets" ? opusDecoder() : null;
  state.wsReady = new Promise((resolve, reject) => {
    ws.onmessage = (e) => {
      if (typeof e.data !== "string") {
        if (decode) decode(e.data);
        else if (state.node) state.node.port.postMessage(e.data, [e.data]);
        return;
      }
      const m = JSON.parse(e.data);
      window.wbEvents.push(m);
      if (m.type === "ready") resolve(ws);
      if (m.type === "first_audio") $("lstate").textContent = `playing (first audio ${m.ms} ms)`;
      if (m.type === "done") $("lstate").textContent = m.reason;
      if (m.type === "error") $("lstate").textContent = "error: " + m.message;
      log(e.data);
    };
    ws.onerror = () => reject(new Error("stream failed"));
    ws.onclose = (e) => { $("lstate").textContent = "closed " + (e.reason || e.code); reject(new Error("closed")); };
  });
  return state.wsReady;
}

async function listenPlay(prompt) {
  await ensureAudio();
  const ws = await openStream();
  ws.send(JSON.stringify({ type: "play", prompt: prompt || $("lprompt").value }));
  $("lstate").textContent = "starting…";
}
function listenStop() {
  if (state.ws && state.ws.readyState === 1) state.ws.send(JSON.stringify({ type: "stop", fade_s: 0.2 }));
}

window.wb = { play: listenPlay, stop: listenStop, level: () => window.wbLevel, state };

loadKey();
connectStatus(false);
$("lplay").onclick = () => listenPlay().catch((e) => log("listen: " + e.message));
$("lstop").onclick = listenStop;
