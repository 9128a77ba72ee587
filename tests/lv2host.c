/*
 * lv2host.c — a minimal LV2 host for tests/test_daw.py and tests/test_lv2.py: what a DAW's generic
 * UI does with the stub's prompt parameter (and a host's MIDI with its midi_in), without a DAW.
 *
 *   lv2host URI SAVE_DIR OSC_PORT SLOT PROMPT
 *
 * Instantiates the plugin through lilv at 48 kHz with urid:map/unmap and a synchronous worker
 * (work() runs inside schedule_work, as a host without a worker thread may do), sets play = 1,
 * slot and osc_port, then, one 256-frame run() each:
 *   1. sends patch:Set <URI#prompt> "PROMPT" on the control port (the plugin's worker then
 *      sends /wb/play to 127.0.0.1:OSC_PORT);
 *   2. sends patch:Get and prints the patch:Set the plugin answers on notify as
 *      "notify prompt=<string>" (stdout);
 *   3. saves the plugin's state and port values with lilv into SAVE_DIR/state.ttl, as a host
 *      saves a session (jalv -l SAVE_DIR reopens it).
 * Exit status 0 on success; messages on stderr otherwise. Single-threaded.
 *
 *   lv2host --play URI OSC_PORT SLOT PROMPT BPM BEATS_PER_BAR SECONDS OUT [AT_S BPM2]
 *
 * A DAW's transport instead: rolls from bar 0, beat 0 at output frame 0, in real time (256-frame
 * run() calls paced on CLOCK_MONOTONIC), a time:Position on the control port every block (bpm,
 * bar, barBeat, beatsPerBar, speed, frame), the prompt typed at the first block and play = 1;
 * from AT_S seconds on the tempo is BPM2 (the beat stays continuous). The plugin's stereo output
 * is written to OUT as interleaved float32, so a test knows the host's bar lines on every frame.
 *
 *   lv2host --keys URI OSC_PORT SLOT
 *
 * MIDI into midi_in (tests/test_lv2.py), with a deferred worker: schedule_work only queues, and
 * the host runs the queue ("flush") when it chooses, as a worker thread that fell behind would.
 * One run() per step, play off:
 *   1. note on 60, flush                                    → /wb/keys SLOT 60
 *   2. note on 64, note on 67, note off 60 in three blocks, then flush: only the newest set
 *                                                           → /wb/keys SLOT 64 67
 *   3. garbage (empty and short events, data bytes without status, a 2000-byte sysex, note-ons
 *      with a bad data byte, MIDI bytes in an atom that is not a midi:MidiEvent), flush: nothing;
 *      then note on 72, flush                               → /wb/keys SLOT 64 67 72
 *   4. note on 76 (queued), note off 76 while the queue refuses, note on 76 again, flush: the
 *      set queued first was replaced, so the last one must go → /wb/keys SLOT 64 67 72 76
 *   5. CC 123 on channel 1, flush                           → /wb/keys SLOT
 * Prints "keys done" on success; the test checks what arrived on OSC_PORT.
 */
#include <math.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lilv/lilv.h>
#include <lv2/atom/atom.h>
#include <lv2/atom/forge.h>
#include <lv2/atom/util.h>
#include <lv2/midi/midi.h>
#include <lv2/patch/patch.h>
#include <lv2/state/state.h>
#include <lv2/time/time.h>
#include <lv2/urid/urid.h>
#include <lv2/worker/worker.h>

#define MAX_URIS 256
#define MAX_PORTS 32
#define ATOM_BYTES 8192
#define FRAMES 256

static char* uris[MAX_URIS];
static uint32_t n_uris;

static LV2_URID map_uri(LV2_URID_Map_Handle h, const char* uri)
{
    (void)h;
    for (uint32_t i = 0; i < n_uris; ++i)
        if (!strcmp(uris[i], uri)) return i + 1;
    if (n_uris == MAX_URIS) return 0;
    uris[n_uris] = strdup(uri);
    return ++n_uris;
}

static const char* unmap_uri(LV2_URID_Unmap_Handle h, LV2_URID urid)
{
    (void)h;
    return urid >= 1 && urid <= n_uris ? uris[urid - 1] : NULL;
}

static LilvInstance* instance;
static const LV2_Worker_Interface* worker;

static LV2_Worker_Status respond(LV2_Worker_Respond_Handle h, uint32_t size, const void* data)
{
    (void)h;
    return worker->work_response(lilv_instance_get_handle(instance), size, data);
}

/* --keys: a deferred worker */
#define QUEUE_MAX 64
static int deferred, refusing;
static uint32_t queue_size[QUEUE_MAX];
static uint8_t queue_data[QUEUE_MAX][4096];
static int queued;

static LV2_Worker_Status schedule(LV2_Worker_Schedule_Handle h, uint32_t size, const void* data)
{
    (void)h;
    if (!deferred) return worker->work(lilv_instance_get_handle(instance), respond, NULL, size, data);
    if (refusing || queued == QUEUE_MAX || size > sizeof queue_data[0]) return LV2_WORKER_ERR_NO_SPACE;
    memcpy(queue_data[queued], data, size);
    queue_size[queued++] = size;
    return LV2_WORKER_SUCCESS;
}

static void flush(void)
{
    for (int i = 0; i < queued; ++i)
        worker->work(lilv_instance_get_handle(instance), respond, NULL, queue_size[i], queue_data[i]);
    queued = 0;
}

/* Close the control input's object and sequence, hand the notify output over as an empty chunk
 * of the buffer's capacity (as hosts do), and run one block. */
static void run_block(LV2_Atom_Forge* forge, LV2_Atom_Forge_Frame* obj, LV2_Atom_Forge_Frame* seq,
                      void* notify_buf, LV2_URID atom_Chunk)
{
    lv2_atom_forge_pop(forge, obj);
    lv2_atom_forge_pop(forge, seq);
    LV2_Atom* notify = (LV2_Atom*)notify_buf;
    notify->type = atom_Chunk;
    notify->size = ATOM_BYTES - sizeof(LV2_Atom);
    lilv_instance_run(instance, FRAMES);
}

static const LilvPlugin* plugin;
static float controls[MAX_PORTS];

static const void* port_value(const char* symbol, void* user, uint32_t* size, uint32_t* type)
{
    LV2_URID_Map* map = user;
    for (uint32_t i = 0; i < lilv_plugin_get_num_ports(plugin); ++i) {
        const LilvPort* p = lilv_plugin_get_port_by_index(plugin, i);
        if (!strcmp(lilv_node_as_string(lilv_port_get_symbol(plugin, p)), symbol)) {
            *size = sizeof(float);
            *type = map->map(map->handle, LV2_ATOM__Float);
            return &controls[i];
        }
    }
    *size = *type = 0;
    return NULL;
}

static uint8_t* keys_notify;   /* --keys: the notify output, handed over empty each block */
static LV2_URID keys_chunk;

/* --keys: one block whose midi_in holds `n` raw events (sizes in `sizes`, bytes back to back);
 * `types[i]` 0: midi:MidiEvent, else that URID. */
static void midi_block(uint8_t* buf, LV2_URID seq_type, LV2_URID midi_type, int n, const uint32_t* sizes,
                       const uint8_t* bytes, const LV2_URID* types)
{
    LV2_Atom_Sequence* seq = (LV2_Atom_Sequence*)buf;
    seq->atom.type = seq_type;
    seq->atom.size = sizeof(LV2_Atom_Sequence_Body);
    seq->body.unit = seq->body.pad = 0;
    for (int i = 0; i < n; ++i) {
        uint8_t ev_buf[sizeof(LV2_Atom_Event) + 2048];
        LV2_Atom_Event* ev = (LV2_Atom_Event*)ev_buf;
        ev->time.frames = i;
        ev->body.type = types && types[i] ? types[i] : midi_type;
        ev->body.size = sizes[i];
        memcpy(ev_buf + sizeof(LV2_Atom_Event), bytes, sizes[i]);
        bytes += sizes[i];
        if (!lv2_atom_sequence_append_event(seq, ATOM_BYTES - sizeof(LV2_Atom), ev)) {
            fprintf(stderr, "midi_in buffer full\n");
            exit(1);
        }
    }
    LV2_Atom* notify = (LV2_Atom*)keys_notify;
    notify->type = keys_chunk;
    notify->size = ATOM_BYTES - sizeof(LV2_Atom);
    lilv_instance_run(instance, FRAMES);
}

static void keys_block(uint8_t* buf, LV2_URID seq_type, LV2_URID midi_type, uint8_t status, uint8_t d1, uint8_t d2)
{
    const uint8_t m[3] = { status, d1, d2 };
    const uint32_t size = 3;
    midi_block(buf, seq_type, midi_type, 1, &size, m, NULL);
}

/* --keys: steps 1..5 of the header, on midi_in `in`. */
static void play_keys(uint8_t* in, uint8_t* notify, LV2_URID atom_Sequence, LV2_URID atom_Chunk,
                      LV2_URID atom_String)
{
    const LV2_URID midi = map_uri(NULL, LV2_MIDI__MidiEvent);
    keys_notify = notify;
    keys_chunk = atom_Chunk;
    keys_block(in, atom_Sequence, midi, 0x90, 60, 100);                    /* 1 */
    flush();
    keys_block(in, atom_Sequence, midi, 0x90, 64, 100);                    /* 2 */
    keys_block(in, atom_Sequence, midi, 0x90, 67, 100);
    keys_block(in, atom_Sequence, midi, 0x80, 60, 0);
    flush();
    static uint8_t garbage[4096];                                          /* 3 */
    uint32_t sizes[16];
    LV2_URID types[16] = { 0 };
    int n = 0;
    uint32_t len = 0;
#define EV(...)                                                                \
    do {                                                                       \
        const uint8_t b_[] = { __VA_ARGS__ };                                  \
        memcpy(garbage + len, b_, sizeof b_);                                  \
        len += sizes[n++] = sizeof b_;                                         \
    } while (0)
    sizes[n++] = 0;                                                        /* empty */
    EV(0x90);
    EV(0x90, 61);
    EV(0x3C, 0x40, 0x3E);                                                  /* running status */
    EV(0x91, 0x80, 0x40);
    EV(0x92, 62, 0xC0);
    EV(0xB0, 123);
    EV(0xF7);
    EV(0xFF, 0x90, 63);
    garbage[len] = 0xF0;                                                   /* 2000-byte sysex */
    memset(garbage + len + 1, 0x55, 1998);
    garbage[len + 1999] = 0xF7;
    len += sizes[n++] = 2000;
    EV(0x90, 65, 100);                                                     /* not a MidiEvent */
    types[n - 1] = atom_String;
#undef EV
    midi_block(in, atom_Sequence, midi, n, sizes, garbage, types);
    flush();
    keys_block(in, atom_Sequence, midi, 0x90, 72, 100);
    flush();
    keys_block(in, atom_Sequence, midi, 0x90, 76, 100);                    /* 4 */
    refusing = 1;
    keys_block(in, atom_Sequence, midi, 0x80, 76, 0);
    refusing = 0;
    keys_block(in, atom_Sequence, midi, 0x90, 76, 100);
    flush();
    keys_block(in, atom_Sequence, midi, 0xB0, 123, 0);                     /* 5 */
    flush();
}

int main(int argc, char** argv)
{
    const int play_mode = argc > 1 && !strcmp(argv[1], "--play");
    const int keys_mode = argc > 1 && !strcmp(argv[1], "--keys");
    if (keys_mode) {
        if (argc != 5) {
            fprintf(stderr, "usage: lv2host --keys URI OSC_PORT SLOT\n");
            return 2;
        }
        deferred = 1;
    } else if (play_mode) {
        if (argc != 10 && argc != 12) {
            fprintf(stderr, "usage: lv2host --play URI OSC_PORT SLOT PROMPT BPM BEATS_PER_BAR SECONDS OUT [AT_S BPM2]\n");
            return 2;
        }
    } else if (argc != 6) {
        fprintf(stderr, "usage: lv2host URI SAVE_DIR OSC_PORT SLOT PROMPT\n");
        return 2;
    }
    if (keys_mode) {
        static char* args[6];   /* as the session mode's: URI, (no SAVE_DIR), OSC_PORT, SLOT, no prompt */
        args[0] = argv[0], args[1] = argv[2], args[2] = NULL, args[3] = argv[3], args[4] = argv[4], args[5] = "";
        argv = args;
    }
    const char* uri = play_mode ? argv[2] : argv[1];
    const char* dir = play_mode ? NULL : argv[2];   /* only the session mode saves */
    char** pa = play_mode ? argv + 3 : NULL;        /* OSC_PORT SLOT PROMPT BPM BPB SECONDS OUT ... */
    const char* osc_port = play_mode ? pa[0] : argv[3];
    const char* slot_arg = play_mode ? pa[1] : argv[4];
    const char* prompt = play_mode ? pa[2] : argv[5];
    LilvWorld* world = lilv_world_new();
    lilv_world_load_all(world);
    LilvNode* uri_node = lilv_new_uri(world, uri);
    plugin = lilv_plugins_get_by_uri(lilv_world_get_all_plugins(world), uri_node);
    if (!plugin) {
        fprintf(stderr, "plugin %s not found (LV2_PATH?)\n", uri);
        return 1;
    }
    LV2_URID_Map map = { NULL, map_uri };
    LV2_URID_Unmap unmap = { NULL, unmap_uri };
    LV2_Worker_Schedule sched = { NULL, schedule };
    const LV2_Feature f_map = { LV2_URID__map, &map }, f_unmap = { LV2_URID__unmap, &unmap },
                      f_sched = { LV2_WORKER__schedule, &sched };
    const LV2_Feature* features[] = { &f_map, &f_unmap, &f_sched, NULL };
    instance = lilv_plugin_instantiate(plugin, 48000.0, features);
    if (!instance) {
        fprintf(stderr, "instantiate failed\n");
        return 1;
    }
    worker = lilv_instance_get_extension_data(instance, LV2_WORKER__interface);
    if (!worker) {
        fprintf(stderr, "no worker interface\n");
        return 1;
    }

    /* ports: control inputs at their defaults (then ours), audio and control outputs to scratch */
    const uint32_t n_ports = lilv_plugin_get_num_ports(plugin);
    if (n_ports > MAX_PORTS) return 1;
    float mins[MAX_PORTS], maxs[MAX_PORTS], defs[MAX_PORTS];
    lilv_plugin_get_port_ranges_float(plugin, mins, maxs, defs);
    static float audio[MAX_PORTS][FRAMES];
    static uint8_t atoms[MAX_PORTS][ATOM_BYTES] __attribute__((aligned(8)));
    LilvNode* atom_port = lilv_new_uri(world, LV2_ATOM__AtomPort);
    LilvNode* audio_port = lilv_new_uri(world, LILV_URI_AUDIO_PORT);
    LilvNode* input = lilv_new_uri(world, LILV_URI_INPUT_PORT);
    int control_in = -1, notify_out = -1, midi_in = -1;
    for (uint32_t i = 0; i < n_ports; ++i) {
        const LilvPort* p = lilv_plugin_get_port_by_index(plugin, i);
        const char* sym = lilv_node_as_string(lilv_port_get_symbol(plugin, p));
        controls[i] = defs[i] == defs[i] ? defs[i] : 0.0f;
        if (!strcmp(sym, "play")) controls[i] = keys_mode ? 0.0f : 1.0f;
        if (!strcmp(sym, "osc_port")) controls[i] = (float)atoi(osc_port);
        if (!strcmp(sym, "slot")) controls[i] = (float)atoi(slot_arg);
        if (lilv_port_is_a(plugin, p, atom_port)) {
            if (!strcmp(sym, "midi_in")) midi_in = (int)i;
            else if (lilv_port_is_a(plugin, p, input)) control_in = (int)i;
            else notify_out = (int)i;
            LV2_Atom_Sequence* empty = (LV2_Atom_Sequence*)atoms[i];   /* until a block fills it */
            empty->atom.size = sizeof(LV2_Atom_Sequence_Body);
            lilv_instance_connect_port(instance, i, atoms[i]);
        } else if (lilv_port_is_a(plugin, p, audio_port)) {
            lilv_instance_connect_port(instance, i, audio[i]);
        } else {
            lilv_instance_connect_port(instance, i, &controls[i]);
        }
    }
    if (control_in < 0 || notify_out < 0 || (keys_mode && midi_in < 0)) {
        fprintf(stderr, "no atom ports\n");
        return 1;
    }

    LV2_Atom_Forge forge;
    lv2_atom_forge_init(&forge, &map);
    const LV2_URID prompt_urid = map_uri(NULL, "urn:wavebridge:stub#prompt");
    const LV2_URID patch_Set = map_uri(NULL, LV2_PATCH__Set), patch_Get = map_uri(NULL, LV2_PATCH__Get);
    const LV2_URID patch_property = map_uri(NULL, LV2_PATCH__property);
    const LV2_URID patch_value = map_uri(NULL, LV2_PATCH__value);
    const LV2_URID atom_String = map_uri(NULL, LV2_ATOM__String);
    const LV2_URID atom_Chunk = map_uri(NULL, LV2_ATOM__Chunk);

    const LV2_URID atom_Sequence = map_uri(NULL, LV2_ATOM__Sequence);
    for (uint32_t i = 0; i < n_ports; ++i)
        if ((int)i == control_in || (int)i == midi_in) ((LV2_Atom*)atoms[i])->type = atom_Sequence;

    lilv_instance_activate(instance);
    if (keys_mode) {
        play_keys(atoms[midi_in], atoms[notify_out], atom_Sequence, atom_Chunk, atom_String);
        lilv_instance_deactivate(instance);
        lilv_instance_free(instance);
        lilv_world_free(world);
        printf("keys done\n");
        return 0;
    }
    if (play_mode) {
        const double bpm1 = atof(pa[3]), bpb = atof(pa[4]), seconds = atof(pa[5]);
        const double at_s = argc == 12 ? atof(pa[7]) : 1e30, bpm2 = argc == 12 ? atof(pa[8]) : bpm1;
        FILE* out = fopen(pa[6], "wb");
        if (!out || bpm1 <= 0 || bpm2 <= 0 || bpb <= 0 || seconds <= 0) {
            fprintf(stderr, "bad --play arguments\n");
            return 2;
        }
        const LV2_URID time_Position = map_uri(NULL, LV2_TIME__Position);
        const LV2_URID t_frame = map_uri(NULL, LV2_TIME__frame), t_speed = map_uri(NULL, LV2_TIME__speed);
        const LV2_URID t_bpm = map_uri(NULL, LV2_TIME__beatsPerMinute), t_bar = map_uri(NULL, LV2_TIME__bar);
        const LV2_URID t_bar_beat = map_uri(NULL, LV2_TIME__barBeat);
        const LV2_URID t_bpb = map_uri(NULL, LV2_TIME__beatsPerBar), t_unit = map_uri(NULL, LV2_TIME__beatUnit);
        int out_l = -1, out_r = -1;
        for (uint32_t i = 0; i < n_ports; ++i) {
            const char* sym = lilv_node_as_string(lilv_port_get_symbol(plugin, lilv_plugin_get_port_by_index(plugin, i)));
            if (!strcmp(sym, "out_l")) out_l = (int)i;
            if (!strcmp(sym, "out_r")) out_r = (int)i;
        }
        if (out_l < 0 || out_r < 0) {
            fprintf(stderr, "no out_l/out_r\n");
            return 1;
        }
        const long blocks = (long)(seconds * 48000.0 / FRAMES);
        const double change = at_s * 48000.0;     /* frame of the tempo change */
        struct timespec next;
        clock_gettime(CLOCK_MONOTONIC, &next);
        static float inter[2 * FRAMES];
        for (long k = 0; k < blocks; ++k) {
            const long f = k * FRAMES;
            /* the host's beat at frame f: bpm1 until `change`, then bpm2, continuous */
            const double beat = f < change ? f * bpm1 / (60.0 * 48000.0)
                                           : (change * bpm1 + (f - change) * bpm2) / (60.0 * 48000.0);
            const double bpm = f < change ? bpm1 : bpm2;
            const double bar = floor(beat / bpb);
            LV2_Atom_Forge_Frame seq, obj;
            lv2_atom_forge_set_buffer(&forge, atoms[control_in], ATOM_BYTES);
            lv2_atom_forge_sequence_head(&forge, &seq, 0);
            if (k == 0) {
                lv2_atom_forge_frame_time(&forge, 0);
                lv2_atom_forge_object(&forge, &obj, 0, patch_Set);
                lv2_atom_forge_key(&forge, patch_property);
                lv2_atom_forge_urid(&forge, prompt_urid);
                lv2_atom_forge_key(&forge, patch_value);
                lv2_atom_forge_string(&forge, prompt, (uint32_t)strlen(prompt));
                lv2_atom_forge_pop(&forge, &obj);
            }
            lv2_atom_forge_frame_time(&forge, 0);
            lv2_atom_forge_object(&forge, &obj, 0, time_Position);
            lv2_atom_forge_key(&forge, t_frame);
            lv2_atom_forge_long(&forge, f);
            lv2_atom_forge_key(&forge, t_speed);
            lv2_atom_forge_float(&forge, 1.0f);
            lv2_atom_forge_key(&forge, t_bpm);
            lv2_atom_forge_float(&forge, (float)bpm);
            lv2_atom_forge_key(&forge, t_bar);
            lv2_atom_forge_long(&forge, (int64_t)bar);
            lv2_atom_forge_key(&forge, t_bar_beat);
            lv2_atom_forge_float(&forge, (float)(beat - bar * bpb));
            lv2_atom_forge_key(&forge, t_bpb);
            lv2_atom_forge_float(&forge, (float)bpb);
            lv2_atom_forge_key(&forge, t_unit);
            lv2_atom_forge_int(&forge, 4);
            run_block(&forge, &obj, &seq, atoms[notify_out], atom_Chunk);
            for (int i = 0; i < FRAMES; ++i) {
                inter[2 * i] = audio[out_l][i];
                inter[2 * i + 1] = audio[out_r][i];
            }
            fwrite(inter, sizeof(float), 2 * FRAMES, out);
            next.tv_nsec += (long)(FRAMES * 1e9 / 48000.0);
            while (next.tv_nsec >= 1000000000L) {
                next.tv_nsec -= 1000000000L;
                ++next.tv_sec;
            }
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        }
        fclose(out);
        lilv_instance_deactivate(instance);
        lilv_instance_free(instance);
        lilv_world_free(world);
        return 0;
    }
    for (int step = 0; step < 2; ++step) {
        LV2_Atom_Forge_Frame seq, obj;
        lv2_atom_forge_set_buffer(&forge, atoms[control_in], ATOM_BYTES);
        lv2_atom_forge_sequence_head(&forge, &seq, 0);
        lv2_atom_forge_frame_time(&forge, 0);
        if (step == 0) {
            lv2_atom_forge_object(&forge, &obj, 0, patch_Set);
            lv2_atom_forge_key(&forge, patch_property);
            lv2_atom_forge_urid(&forge, prompt_urid);
            lv2_atom_forge_key(&forge, patch_value);
            lv2_atom_forge_string(&forge, prompt, (uint32_t)strlen(prompt));
        } else {
            lv2_atom_forge_object(&forge, &obj, 0, patch_Get);
        }
        run_block(&forge, &obj, &seq, atoms[notify_out], atom_Chunk);
        if (step == 1) {
            const LV2_Atom_Sequence* s = (const LV2_Atom_Sequence*)atoms[notify_out];
            int found = 0;
            LV2_ATOM_SEQUENCE_FOREACH (s, ev) {
                const LV2_Atom_Object* o = (const LV2_Atom_Object*)&ev->body;
                if (o->body.otype != patch_Set) continue;
                const LV2_Atom *prop = NULL, *val = NULL;
                lv2_atom_object_get(o, patch_property, &prop, patch_value, &val, 0);
                if (prop && ((const LV2_Atom_URID*)prop)->body == prompt_urid && val
                    && val->type == atom_String) {
                    printf("notify prompt=%s\n", (const char*)LV2_ATOM_BODY_CONST(val));
                    found = 1;
                }
            }
            if (!found) {
                fprintf(stderr, "no patch:Set of the prompt on notify\n");
                return 1;
            }
        }
    }

    LilvState* state = lilv_state_new_from_instance(plugin, instance, &map, NULL, NULL, NULL, dir,
                                                    port_value, &map,
                                                    LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE, features);
    if (!state || lilv_state_save(world, &map, &unmap, state, NULL, dir, "state.ttl") != 0) {
        fprintf(stderr, "saving the state failed\n");
        return 1;
    }
    printf("saved %s/state.ttl\n", dir);
    lilv_state_free(state);
    lilv_instance_deactivate(instance);
    lilv_instance_free(instance);
    lilv_node_free(atom_port);
    lilv_node_free(audio_port);
    lilv_node_free(input);
    lilv_node_free(uri_node);
    lilv_world_free(world);
    for (uint32_t i = 0; i < n_uris; ++i) free(uris[i]);
    return 0;
}
