// wavebridge web page: live slot status over /v1/status/ws, per-slot play/stop, a private stream
// played in the browser (PCM over /v1/stream into an AudioWorklet, metered by an AnalyserNode), a
// scrolling piano roll of every playing slot (/v1/slots/{slot}/roll), and chords from a USB keyboard
// through Web MIDI (or typed) to a slot (/v1/slots/{slot}/chord).
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
  syncRolls(msg.slots);
  syncMidiSlots(msg.slots);
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
  if (state.ws && state.ws.readyState <= 1) { state.ws.onclose = null; state.ws.onmessage = null; state.ws.close(); }
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

// ------------------------------------------------------------------ piano roll
// One canvas per playing slot. The roll JSON is polled ~4×/s; between polls the playhead moves on
// at the slot's tempo (while its reader plays), so the notes scroll smoothly past the red line.
const ROLL_AHEAD_S = 8, ROLL_BEHIND_S = 4, ROLL_POLL_MS = 250;
const PART_COLOURS = ["#4fc3f7", "#ffb74d", "#81c784", "#ba68c8", "#f06292", "#e4d33a", "#4db6ac", "#a1887f",
                      "#7986cb", "#dce775", "#ff8a65", "#90a4ae"];
const rolls = new Map();          // slot id → { el, canvas, head, data, t, busy, status }
window.__wbRoll = {};             // slot id → what the last frame drew (for tests, too)

function syncRolls(slots) {
  const want = new Set();
  for (const s of slots) if (s.state === "playing") want.add(String(s.slot));
  for (const id of want) if (!rolls.has(id)) {
    const el = document.createElement("div");
    el.className = "roll"; el.dataset.slot = id;
    el.innerHTML = `<div class="rhead"><span class="rslot"></span><span class="rbar"></span>
      <span class="rchord"></span><span class="rkey"></span><span class="rbpm"></span></div><canvas height="180"></canvas>`;
    el.querySelector(".rslot").textContent = "slot " + id;
    $("rolls").appendChild(el);
    rolls.set(id, { el, canvas: el.querySelector("canvas"), data: null, t: 0, busy: false, status: 0 });
  }
  for (const [id, r] of rolls) if (!want.has(id)) { r.el.remove(); rolls.delete(id); delete window.__wbRoll[id]; }
}

async function pollRoll(id, r) {
  if (r.busy) return;
  r.busy = true;
  try {
    // idle=ok: "not playing (yet)" is a 200 with playing: false (a 409 would be a console error)
    const q = `?ahead=${ROLL_AHEAD_S}&behind=${ROLL_BEHIND_S}&idle=ok`;
    const resp = await fetch(`/v1/slots/${encodeURIComponent(id)}/roll${q}`, { headers: authHeaders(), cache: "no-store" });
    r.status = resp.status;
    const j = resp.ok ? await resp.json() : null;
    if (j && j.playing) { r.data = j; r.t = performance.now(); }
    else if (!j) r.data = null;
    else r.status = 409;                               // not playing yet / changing: keep what we had
  } catch (e) { /* server away: the status socket says so */ }
  finally { r.busy = false; }
}
setInterval(() => { for (const [id, r] of rolls) pollRoll(id, r); }, ROLL_POLL_MS);

function drawRoll(id, r, now) {
  const c = r.canvas, d = r.data;
  const dpr = window.devicePixelRatio || 1;
  const W = Math.max(100, Math.round(c.clientWidth * dpr)), H = Math.round(180 * dpr);
  if (c.width !== W || c.height !== H) { c.width = W; c.height = H; }
  const g = c.getContext("2d");
  g.clearRect(0, 0, W, H);
  if (!d) {
    g.fillStyle = "#8893a0"; g.font = `${12 * dpr}px system-ui`;
    g.fillText(r.status === 409 ? "waiting for the first audio…" : "no roll", 10 * dpr, 20 * dpr);
    return;
  }
  const perS = d.bpm / 60;
  // between polls: on at the tempo while the reader plays (at most a second past the last answer)
  const dt = d.reader_alive ? Math.min((now - r.t) / 1000, 1.0) : 0;
  const beat = d.playhead_beat + dt * perS;
  const behind = ROLL_BEHIND_S * perS, ahead = ROLL_AHEAD_S * perS;
  const ppb = W / (behind + ahead), x0 = behind * ppb;
  const X = (b) => x0 + (b - beat) * ppb;
  const drums = d.notes.filter((n) => d.parts[n.part] && d.parts[n.part].is_drums);
  const tonal = d.notes.filter((n) => !(d.parts[n.part] && d.parts[n.part].is_drums));
  const lane = drums.length ? Math.round(28 * dpr) : 0;
  const top = Math.round(14 * dpr), bottom = H - lane;
  let lo = 127, hi = 0;
  for (const n of tonal) { if (n.pitch < lo) lo = n.pitch; if (n.pitch > hi) hi = n.pitch; }
  if (lo > hi) { lo = 48; hi = 72; }
  const span = Math.max(24, hi - lo + 4), mid = (lo + hi) / 2;
  lo = Math.floor(mid - span / 2); hi = lo + span;
  const rowH = (bottom - top) / (hi - lo + 1);
  const Y = (p) => bottom - (p - lo + 1) * rowH;
  // bars and beats
  const bpb = d.beats_per_bar || 4;
  g.font = `${10 * dpr}px system-ui`;
  for (let b = Math.ceil(beat - behind); b <= beat + ahead; b++) {
    const x = X(b), isBar = Math.abs(b / bpb - Math.round(b / bpb)) < 1e-6;
    g.fillStyle = isBar ? "#3a4656" : "#222a35";
    g.fillRect(Math.round(x), top, isBar ? dpr : 1, H - top);
    if (isBar && b >= 0) { g.fillStyle = "#8893a0"; g.fillText(String(Math.round(b / bpb) + 1), x + 3 * dpr, 10 * dpr); }
  }
  if (lane) { g.fillStyle = "#1b2028"; g.fillRect(0, bottom, W, lane); }
  const drawn = [];
  const left = beat - behind, right = beat + ahead;
  for (const n of d.notes) {
    const x = X(n.start_beat), w = Math.max(2 * dpr, n.dur_beats * ppb);
    if (x > W || x + w < 0) continue;
    const part = d.parts[n.part] || {};
    g.globalAlpha = 0.45 + 0.55 * (n.vel / 127);
    g.fillStyle = PART_COLOURS[n.part % PART_COLOURS.length];
    if (part.is_drums) {
      const y = bottom + 2 * dpr + ((n.pitch - 35) / 47) * (lane - 6 * dpr);
      g.fillRect(x, Math.max(bottom, Math.min(H - 4 * dpr, y)), 3 * dpr, 3 * dpr);
    } else {
      g.fillRect(x, Y(n.pitch), w, Math.max(2 * dpr, rowH - 1));
    }
    drawn.push({ part: n.part, start_beat: n.start_beat, dur_beats: n.dur_beats, pitch: n.pitch, vel: n.vel });
  }
  g.globalAlpha = 1;
  g.fillStyle = "#ff5252";
  g.fillRect(Math.round(x0) - dpr, 0, 2 * dpr, H);        // the playhead: what is heard now
  const bar = Math.floor(Math.max(beat, 0) / bpb) + 1;
  const h = r.el;
  h.querySelector(".rbar").textContent = "bar " + bar;
  h.querySelector(".rchord").textContent = d.chord ? "chord " + d.chord : "chord: composed";
  h.querySelector(".rkey").textContent = d.key;
  h.querySelector(".rbpm").textContent = d.bpm.toFixed(1) + " bpm";
  window.__wbRoll[id] = { playhead_beat: beat, polled_beat: d.playhead_beat, bar, chord: d.chord, key: d.key,
                          bpm: d.bpm, left, right, from_beat: d.from_beat, to_beat: d.to_beat, notes: drawn,
                          job: d.job, frames: ((window.__wbRoll[id] || {}).frames || 0) + 1 };
}

function drawRolls(now) {
  for (const [id, r] of rolls) {
    try { drawRoll(id, r, now); } catch (e) { log("roll " + id + ": " + e.message); }
  }
  requestAnimationFrame(drawRolls);
}
requestAnimationFrame(drawRolls);

// ------------------------------------------------------------------ chords: Web MIDI and typed
// Every MIDI input's note on/off (any channel) → the keys held → after 15 ms without another key
// (a chord's keys arrive a few ms apart) POST {"notes": [...]} to the selected slot; none held
// releases. A chord symbol typed here is POSTed as {"chord": ...}.
const midi = { access: null, asking: false, held: new Set(), timer: null, sent: null, devices: [], error: "" };
window.__wbMidi = { sent: [], held: () => [...midi.held].sort((a, b) => a - b) };

function midiSlot() { return $("midislot").value; }
function showMidi() {
  const el = $("midi"), slot = midiSlot();
  let text;
  if (midi.error) text = "MIDI: " + midi.error;
  else if (!midi.access) text = midi.asking ? "MIDI: …" : "MIDI: click to connect";
  else if (!midi.devices.length) text = "MIDI: no device";
  else text = `MIDI: ${midi.devices.join(", ")} → ${slot ? "slot " + slot : "no slot"}`;
  el.textContent = text;
  el.className = "pill " + (midi.access && midi.devices.length && slot ? "on" : "off");
}

function syncMidiSlots(slots) {
  const sel = $("midislot"), ids = slots.map((s) => String(s.slot));
  const have = [...sel.options].map((o) => o.value);
  if (have.join("\n") !== ids.join("\n")) {
    const keep = sel.value;
    sel.innerHTML = "";
    for (const id of ids) { const o = document.createElement("option"); o.value = o.textContent = id; sel.appendChild(o); }
    if (ids.includes(keep)) sel.value = keep;
    showMidi();
  }
}

function bindMidiInputs() {
  midi.devices = [];
  for (const input of midi.access.inputs.values()) {
    input.onmidimessage = onMidiMessage;
    if (input.state !== "disconnected") midi.devices.push(input.name || input.id || "input");
  }
  showMidi();
}

function onMidiMessage(e) {
  const d = e.data;
  if (!d || d.length < 2) return;
  const st = d[0] & 0xf0;
  if (st === 0x90 && d.length > 2 && d[2] > 0) midi.held.add(d[1]);
  else if (st === 0x80 || st === 0x90) midi.held.delete(d[1]);
  else if (st === 0xb0 && (d[1] === 123 || d[1] === 120)) midi.held.clear();     // all notes / sound off
  else return;
  clearTimeout(midi.timer);
  midi.timer = setTimeout(sendKeys, 15);
}

async function sendKeys() {
  const slot = midiSlot();
  if (!slot) return;
  const notes = [...midi.held].sort((a, b) => a - b).slice(0, 16);
  const key = slot + ":" + notes.join(",");
  if (key === midi.sent) return;
  midi.sent = key;
  const j = await api("POST", `/v1/slots/${encodeURIComponent(slot)}/chord`, { notes });
  window.__wbMidi.sent.push({ slot, notes, reply: j });
}

async function setupMidi() {
  if (midi.access || midi.asking) return;
  if (!navigator.requestMIDIAccess) { midi.error = "not in this browser"; showMidi(); return; }
  midi.asking = true; midi.error = ""; showMidi();
  try {
    midi.access = await navigator.requestMIDIAccess({ sysex: false });
  } catch (e) { midi.error = "refused (" + (e.message || e.name || e) + ")"; return; }
  finally { midi.asking = false; showMidi(); }
  midi.access.onstatechange = bindMidiInputs;
  bindMidiInputs();
}

// Web MIDI asks the user: the page asks only when the MIDI button is clicked, or at load when this
// site was already allowed (no prompt then)
async function midiAllowed() {
  try { return (await navigator.permissions.query({ name: "midi" })).state === "granted"; }
  catch (e) { return false; }
}

function sendChord(sym) {
  const slot = midiSlot();
  if (slot) api("POST", `/v1/slots/${encodeURIComponent(slot)}/chord`, { chord: sym });
}

window.wb = { play: listenPlay, stop: listenStop, level: () => window.wbLevel, state };

loadKey();
connectStatus(false);
$("lplay").onclick = () => listenPlay().catch((e) => log("listen: " + e.message));
$("lstop").onclick = listenStop;
$("midislot").onchange = () => { midi.sent = null; showMidi(); };
$("chordset").onclick = () => sendChord($("chordsym").value.trim());
$("chordoff").onclick = () => sendChord("");
$("chordsym").addEventListener("keydown", (e) => { if (e.key === "Enter") sendChord($("chordsym").value.trim()); });
$("midi").onclick = setupMidi;
midiAllowed().then((yes) => (yes ? setupMidi() : showMidi()));
