-- Ardour 7 (ardour7-lua, headless, on its own dummy backend) driving the wavebridge LV2 stub, for
-- tests/test_ardour.py. What it does comes from the environment:
--   WB_MODE     "new": make a session, put the stub on a MIDI track, set its controls; "load":
--               open the saved session
--   WB_SESSION  the session's folder; WB_SECONDS how long to roll
--   WB_CONTROLS (new) "Name=value;…" (the ports' lv2:name) set on the stub before it is added to the track (so the
--               plugin never runs with its default OSC port: the test's own sink gets everything)
--   WB_BPM, WB_METER (new) the session's tempo and meter ("3/4")
-- Each take, a second track ("bounce") records the stub's track output, as a user bounces a
-- soft synth live. It prints lines the test parses:
--   SCAN <category>|<is_instrument>        how Ardour's plugin scan lists the stub
--   CTL <name>=<value>                     every control port, after the take
--   RECORDING true|false                   whether Ardour records the bounce once rolling
--   TAKE <rolled frames>                   the transport's run
local mode = os.getenv("WB_MODE")
local dir = os.getenv("WB_SESSION")
local secs = tonumber(os.getenv("WB_SECONDS") or "4")
local URI = "urn:wavebridge:stub"

-- Ardour's own dummy backend (no audio device; a clock that runs in real time), 48 kHz,
-- 256-frame periods. Not JACK: with Ardour on a JACK2 server here, the server read corrupt
-- requests from Ardour's client ("CheckSize error"), dropped it, and the transport never rolled
-- in 7 of 36 runs. The stub in a JACK graph is tests/test_lv2.py's (jalv).
local be = AudioEngine:set_backend("None (Dummy)", "", "")
assert(be, "no dummy backend")
assert(be:set_device_name("Silence") == 0, "no Silence device")
assert(be:set_sample_rate(48000) == 0 and be:set_buffer_size(256) == 0, "48 kHz / 256 refused")

-- the stub's control ports, by lv2:name: control index (what LuaAPI's param calls take)
local function controls(proc)
  local pl = proc:to_insert():plugin(0)
  local out, seen, k = {}, {}, 0
  while true do
    local port = pl:nth_parameter(k, true)
    if type(port) == "table" then port = port[1] end
    if seen[port] then break end
    seen[port] = true
    out[pl:parameter_label(port)] = k
    k = k + 1
  end
  return out
end

local function print_controls(proc)
  for name, k in pairs(controls(proc)) do
    print("CTL " .. name .. "=" .. ARDOUR.LuaAPI.get_processor_param(proc, k))
  end
end

local function take(s, src)
  local rec = s:route_by_name("bounce"):to_track()
  rec:input():disconnect_all(nil)
  for c = 0, 1 do
    rec:input():audio(c):connect(src:output():audio(c):name())
  end
  -- a route that has just started processing fades in (Ardour's declick: about 3000 frames on a
  -- new session's first take); roll once that is over, as a user would
  ARDOUR.LuaAPI.usleep(500000)
  rec:rec_enable_control():set_value(1, PBD.GroupControlDisposition.NoGroup)
  s:maybe_enable_record(false)
  -- a roll asked for while the session is still settling is dropped: ask until it rolls
  local t0 = s:transport_sample()
  for _ = 1, 50 do
    if s:transport_rolling() then break end
    s:request_roll(ARDOUR.TransportRequestSource.TRS_UI)
    ARDOUR.LuaAPI.usleep(100000)
  end
  assert(s:transport_rolling(), "the transport does not roll")
  print("RECORDING " .. tostring(s:actively_recording()))
  for _ = 1, secs * 10 do ARDOUR.LuaAPI.usleep(100000) end
  s:request_stop(false, false, ARDOUR.TransportRequestSource.TRS_UI)
  ARDOUR.LuaAPI.usleep(800000)                  -- the stop (and the stub's last datagrams) go out
  print("TAKE " .. (s:transport_sample() - t0))
end

local s
if mode == "new" then
  s = create_session(dir, "wb", 48000)
  assert(s, "could not create the session")
  local num, den = string.match(os.getenv("WB_METER") or "4/4", "(%d+)/(%d+)")
  local bpm = tonumber(os.getenv("WB_BPM") or "120")
  local tm = Temporal.TempoMap.write_copy()
  tm:set_tempo(Temporal.Tempo(bpm, bpm, 4), Temporal.timepos_t(0))
  tm:set_meter(Temporal.Meter(tonumber(num), tonumber(den)), Temporal.timepos_t(0))
  Temporal.TempoMap.update(tm)
  local info
  for pi in ARDOUR.LuaAPI.list_plugins():iter() do
    if pi.unique_id == URI then info = pi end
  end
  assert(info, "Ardour's plugin scan did not find " .. URI)
  print("SCAN " .. info.category .. "|" .. tostring(info:is_instrument()))
  local midi, audio = ARDOUR.DataType("midi"), ARDOUR.DataType("audio")
  local t = s:new_midi_track(ARDOUR.ChanCount(midi, 1), ARDOUR.ChanCount(audio, 2), true, ARDOUR.PluginInfo(),
    nil, nil, 1, "wavebridge", ARDOUR.PresentationInfo.max_order, ARDOUR.TrackMode.Normal, true, true):front()
  -- each change to the session's routes settles before the next: on a loaded machine, adding the
  -- plugin while the new track's ports were still being set up registered its output twice
  -- ("Port already exists: wavebridge/audio_out 1") and Ardour aborted
  ARDOUR.LuaAPI.usleep(500000)
  local proc = ARDOUR.LuaAPI.new_plugin(s, URI, ARDOUR.PluginType.LV2, "")
  assert(not proc:isnil(), "could not instantiate " .. URI)
  local ctl = controls(proc)
  for name, v in string.gmatch(os.getenv("WB_CONTROLS") or "", "([^=;]+)=([-%d.]+)") do
    assert(ctl[name], "no control " .. name)
    ARDOUR.LuaAPI.set_processor_param(proc, ctl[name], tonumber(v))
  end
  assert(t:add_processor_by_index(proc, 0, nil, true) == 0, "could not add the stub to the track")
  ARDOUR.LuaAPI.usleep(500000)
  s:new_audio_track(2, 2, nil, 1, "bounce", ARDOUR.PresentationInfo.max_order, ARDOUR.TrackMode.Normal, true)
  take(s, t)
  print_controls(proc)
  s:save_state("", false, false, false, false, false)
else
  s = load_session(dir, "wb")
  assert(s, "could not load the session")
  local t = s:route_by_name("wavebridge")
  assert(not t:isnil(), "the session has no wavebridge track")
  local proc = t:nth_plugin(0)
  assert(not proc:isnil() and proc:display_name() == "wavebridge stub", "the stub is not on its track")
  take(s, t)
  print_controls(proc)
end
close_session()
print("DONE")
