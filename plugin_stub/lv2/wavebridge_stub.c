/*
 * wavebridge_stub.c — LV2 plugin <urn:wavebridge:stub>: plays one wavebridge slot's
 * shared-memory ring (ring protocol v1, docs/ring-protocol.md; its layout and read path are in
 * wb_ring.h) into a DAW, and drives the daemon's job for that slot from inside the DAW: the
 * prompt, play, seed, quantize and gain live in the plugin, and the host's tempo and transport
 * are forwarded to the daemon over OSC.
 *
 * Ports: 0 slot (control in, 1..64), 1 out_l, 2 out_r (audio out),
 *        3 buffered_ms, 4 underruns (control out; underruns = the ring's underrun_frames),
 *        5 control (atom in: patch:Set / patch:Get of the prompt, time:Position from the host),
 *        6 notify (atom out: patch:Set of the prompt, answering patch:Get and after changes),
 *        7 play (toggle), 8 seed, 9 quantize (0 off, 1 beat, 2 bar), 10 sync (toggle: follow
 *        the host's tempo and transport when it sends them), 11 gain, 12 osc_port,
 *        13 midi_in (atom in: midi:MidiEvent; the keys held become the slot's chord).
 * Parameter: <urn:wavebridge:stub#prompt> (patch:writable, atom:String), saved with the LV2
 * state extension; the control ports' values are saved by the host in the same state.
 *
 * What is sent (UDP to 127.0.0.1:osc_port, see docs/osc.md):
 *   play on (and a prompt set), prompt/seed/slot change while on  → /wb/play i slot, s prompt,
 *        f 0, i seed, s quantize (preceded by /wb/transport when the host has a transport)
 *   play off, or host transport stops while following it         → /wb/stop i slot, f 0.05
 *   gain change (and before each play)                          → /wb/param i slot, s gain, f v
 *   host position changed, and every 250 ms while rolling        → /wb/transport i slot, f speed,
 *        f bpm, f beats_per_bar, i bar, f bar_beat, h read_index, h host_frame
 *   the set of MIDI keys held on midi_in changed                  → /wb/keys i slot [, i note …]
 *        (ascending, the lowest KEYS_MAX; none: released), whatever play says — the daemon keeps
 *        a chord for an idle slot until its next play. A slot or port change releases the keys
 *        on the old one first. Only the newest set is sent: work() skips a queued set that a
 *        newer one (keys_latest) has replaced.
 * Held keys: note on (velocity > 0) adds the key on its channel, note off or note on with
 * velocity 0 removes it, CC 120 (all sound off) / CC 123 (all notes off) clears that channel;
 * a key is held while any channel holds it. Anything else on midi_in (system messages, sysex,
 * data bytes without a status, short messages) is ignored; activate() forgets the keys (the host
 * dropped the note-offs of a stopped graph), so the next run() releases them.
 * Following the host (sync on and the host sends bars and beats): the job plays while play is on
 * AND the transport rolls; without a host transport, play alone decides.
 *
 * Threading class of each entry point:
 *   instantiate, activate, deactivate, cleanup, extension_data, save, restore .. [instantiation]
 *   connect_port, run, work_response ................................. [audio-thread]
 *   work .............................................................. [worker]
 *
 * run() copies frames, zero-fills, parses atoms, forges the notify sequence and does atomic
 * loads/stores on the mapping: no malloc, no lock, no log, no system call other than
 * clock_gettime(CLOCK_MONOTONIC), which glibc serves from the vDSO on Linux (no kernel entry)
 * — it stamps reader_heartbeat_ns and judges the writer's heartbeat. Everything that touches
 * the kernel runs in work(): the ring's shm_open (or open() under $WAVEBRIDGE_SHM_DIR, see
 * ring_fd_open)/fstat/mmap/munmap, and every OSC datagram
 * (run() posts an intent — play, stop, param, transport — with the values it needs; the worker
 * encodes and sends it). run() asks the worker to (re)attach at most every ATTACH_RETRY_NS
 * while it has no ring, the writer looks dead (writer_alive clear or writer_heartbeat_ns older
 * than 1 s) or the slot port changed; work_response() swaps in the prepared mapping and the
 * replaced one goes back to the worker to be unmapped. A daemon restart that reuses the
 * segment only bumps epoch, which run() handles by resyncing; a recreated segment (new inode)
 * is mapped anew. An intent the host's worker queue refuses is retried on the next cycle.
 *
 * Without the host's worker feature the ring is attached in activate() only (epoch resyncs
 * still work, but a slot change or a recreated segment needs deactivate/activate) and nothing
 * is sent to the daemon. Without urid:map the atom ports are ignored.
 *
 * The segment is never unlinked here: the daemon owns it. Little-endian hosts only (the ring
 * is little-endian and fields are accessed natively).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <lv2/atom/atom.h>
#include <lv2/atom/forge.h>
#include <lv2/atom/util.h>
#include <lv2/core/lv2.h>
#include <lv2/log/log.h>
#include <lv2/log/logger.h>
#include <lv2/midi/midi.h>
#include <lv2/patch/patch.h>
#include <lv2/state/state.h>
#include <lv2/time/time.h>
#include <lv2/urid/urid.h>
#include <lv2/worker/worker.h>

#include "wb_ring.h"

#define STUB_URI "urn:wavebridge:stub"
#define PROMPT_URI STUB_URI "#prompt"

#define SLOT_MIN 1
#define SLOT_MAX 64
#define ATTACH_RETRY_NS 250000000LL    /* at most one attach request per 250 ms */
#define ATTACH_LOST_NS 2000000000LL    /* unanswered this long: the response was lost */
#define GARBAGE_MAX 4

#define PROMPT_MAX 1024                /* bytes of UTF-8 (the daemon allows 512 characters) */
#define OSC_PORT_DEFAULT 9137
#define SEED_MAX 16777215.0f           /* every integer up to here is exact in a float port */
#define STOP_FADE_S 0.05f
#define TRANSPORT_EVERY_NS 250000000LL /* /wb/transport at 4 Hz while rolling */
#define TRANSPORT_MIN_NS 20000000LL    /* and at most 50 Hz for changes (a host's tempo ramp) */
#define OSC_MAX 1400                   /* one datagram */
#define KEYS_MAX 16                    /* notes in one /wb/keys (the daemon's limit) */

enum { PORT_SLOT, PORT_OUT_L, PORT_OUT_R, PORT_BUFFERED_MS, PORT_UNDERRUNS, PORT_CONTROL,
       PORT_NOTIFY, PORT_PLAY, PORT_SEED, PORT_QUANTIZE, PORT_SYNC, PORT_GAIN, PORT_OSC_PORT,
       PORT_MIDI_IN };

static const char* const QUANTIZE_NAMES[3] = { "off", "beat", "bar" };

/* One mapped ring. Immutable once handed to the audio thread. */
typedef struct {
    WbRing view;            /* the validated layout: base, data, capacity, channels */
    size_t size;
    int slot;
    dev_t dev;
    ino_t ino;
} Ring;

typedef enum { MSG_ATTACH, MSG_FREE, MSG_PLAY, MSG_STOP, MSG_PARAM, MSG_TRANSPORT, MSG_KEYS } MsgType;

typedef struct {            /* run() -> work(): ATTACH, FREE */
    MsgType type;
    int slot;
    bool have_current;      /* ATTACH: the current ring is this slot's; skip it if unchanged */
    dev_t dev;
    ino_t ino;
    Ring* ring;             /* FREE: mapping to unmap */
} Request;

typedef struct {            /* work() -> work_response() */
    int slot;
    Ring* ring;             /* NULL: nothing new (missing, invalid, or the same segment) */
} Response;

/* The host's musical position at the first frame of a block. */
typedef struct {
    double speed;           /* 0 stopped, 1 rolling */
    double bpm;
    double beats_per_bar;
    int64_t bar;            /* 0-based */
    double bar_beat;        /* beats into the bar, [0, beats_per_bar) */
    int64_t frame;          /* the host's transport frame */
    int64_t read_index;     /* the ring frame this block started to play; -1 without a ring */
} Transport;

typedef struct {            /* run() -> work(): PLAY, STOP, PARAM, TRANSPORT, KEYS (OSC intents) */
    MsgType type;
    int32_t slot;
    int32_t osc_port;
    int32_t seed;
    int32_t quantize;       /* 0 off, 1 beat, 2 bar */
    float value;            /* STOP: fade seconds; PARAM: gain */
    bool with_transport;    /* PLAY: send /wb/transport first */
    Transport tp;
    uint32_t keys_gen;      /* KEYS: 0 always sent; else skipped once keys_latest moved past it */
    uint32_t n_keys;        /* KEYS: notes[0..n_keys), ascending */
    uint8_t keys[KEYS_MAX];
    uint32_t prompt_len;
    char prompt[PROMPT_MAX];   /* only prompt_len bytes travel */
} Intent;

typedef struct {
    LV2_URID atom_Object, atom_Blank, atom_String, atom_Float, atom_Double, atom_Int, atom_Long,
        atom_URID, atom_Sequence, patch_Set, patch_Get, patch_property, patch_value, time_Position,
        time_speed, time_bar, time_barBeat, time_beatsPerBar, time_beatsPerMinute, time_frame,
        midi_MidiEvent, wb_prompt;
} Urids;

typedef struct {
    const float* slot_port;
    float* out[2];
    float* buffered_ms;
    float* underruns;
    const LV2_Atom_Sequence* control;
    LV2_Atom_Sequence* notify;
    const float* play_port;
    const float* seed_port;
    const float* quantize_port;
    const float* sync_port;
    const float* gain_port;
    const float* osc_port_port;
    const LV2_Atom_Sequence* midi_in;

    LV2_Worker_Schedule* schedule;   /* NULL: host has no worker */
    LV2_URID_Map* map;               /* NULL: atom ports ignored */
    LV2_Log_Logger logger;
    Urids u;
    LV2_Atom_Forge forge;
    uint32_t host_rate;
    char* shm_dir;                   /* $WAVEBRIDGE_SHM_DIR read in instantiate; NULL: shm_open */
    int sock;                        /* UDP socket of the worker; -1: none */

    /* audio-thread state */
    Ring* ring;
    Ring* garbage[GARBAGE_MAX];   /* replaced mappings waiting to be sent to the worker */
    bool pending;            /* an ATTACH request is in flight (since last_request_ns) */
    int64_t last_request_ns;
    WbCursor cur;            /* our read_index and epoch; resync: the next read picks its start */

    /* the prompt ([audio-thread] after instantiation; restore() runs while run() does not) */
    char prompt[PROMPT_MAX + 1];
    uint32_t prompt_len;
    uint32_t prompt_gen;     /* bumped on every change */
    uint32_t notified_gen;   /* the prompt generation last sent on notify */
    bool notify_asked;       /* a patch:Get is waiting for its answer */

    /* the host's transport, at the current block's start */
    Transport host;
    bool host_bbt;           /* the host has sent bar, beat and tempo */
    bool host_changed;       /* something other than the clock's advance changed */
    bool host_started;       /* ... and that was the transport starting or stopping */
    int64_t last_transport_ns;

    /* what the daemon was last told */
    bool sent_active;
    int32_t sent_slot, sent_seed, sent_port, sent_quantize;
    uint32_t sent_gen;
    float sent_gain;
    bool sent_gain_valid;

    /* held MIDI keys [audio-thread] ([instantiation] in activate, while run() does not run) */
    uint16_t key_channels[128];   /* bit c: the key is held on MIDI channel c + 1 */
    uint64_t held[2];             /* keys held on any channel: bit k of held[k >> 6] */
    uint64_t keys_posted[2];      /* the set last queued for the daemon (the lowest KEYS_MAX) */
    int32_t keys_slot, keys_port; /* where it went (0: nowhere yet) */
    uint32_t keys_gen;            /* the generation last posted */
    bool keys_force;              /* the last post was refused: post the next set even if unchanged */
    uint32_t keys_latest;         /* the same, atomic: stored by run(), loaded by work() */
} Stub;

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);   /* vDSO on Linux: no kernel entry */
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int slot_of(const float* port)
{
    const float v = port ? *port : (float)SLOT_MIN;
    if (!(v >= (float)SLOT_MIN)) return SLOT_MIN;   /* also NaN */
    if (v >= (float)SLOT_MAX) return SLOT_MAX;
    return (int)(v + 0.5f);
}

/* A control port as an integer in [lo, hi]; NULL or NaN → dflt. */
static int32_t int_of(const float* port, int32_t lo, int32_t hi, int32_t dflt)
{
    if (!port) return dflt;
    const float v = *port;
    if (!(v == v)) return dflt;
    if (v <= (float)lo) return lo;
    if (v >= (float)hi) return hi;
    return (int32_t)lrintf(v);
}

/* ------------------------------------------------------------------ [worker] / [instantiation] */

/* $WAVEBRIDGE_SHM_DIR as a private ring directory: NULL when unset, empty or /dev/shm itself
 * (the normative place, reached through shm_open). The daemon must be given the same one. */
static const char* private_dir(const char* env)
{
    if (!env || !*env) return NULL;
    size_t n = strlen(env);
    while (n > 1 && env[n - 1] == '/') --n;
    return (n == 8 && !strncmp(env, "/dev/shm", 8)) ? NULL : env;
}

/* A private ring directory is used only if it is an absolute path to a directory (not a
 * symlink) of our own uid with mode 0700, as the daemon requires. */
static bool private_dir_ok(const char* dir)
{
    struct stat st;
    return dir[0] == '/' && lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid()
        && (st.st_mode & 07777) == 0700;
}

/* Open the segment `name` ("/wavebridge.<slot>"): shm_open() in /dev/shm, or <dir><name> with
 * open(O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK) — the links, FIFOs and devices shm_open would
 * meet are refused the same way. -1 (errno set) on failure. [worker] / [instantiation] */
static int ring_fd_open(const char* dir, const char* name, int flags, mode_t mode)
{
    if (!dir) return shm_open(name, flags, mode);
    if (!private_dir_ok(dir)) {
        errno = EACCES;
        return -1;
    }
    char path[PATH_MAX];
    const int n = snprintf(path, sizeof path, "%s%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return open(path, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode);
}

/* Map /wavebridge.<slot> (in `dir`, or /dev/shm when NULL) and validate its header. Returns
 * NULL if the segment is missing, not a regular file of our own uid with mode 0600 (links are
 * refused by O_NOFOLLOW, which shm_open adds too: another user's ring planted under the name
 * is never played), not a v1 ring, or — when have_current — if it is the segment already
 * mapped (same inode). */
static Ring* ring_open(const char* dir, const char* name, int slot, bool have_current, dev_t dev,
                       ino_t ino, uint32_t host_rate)
{
    const int fd = ring_fd_open(dir, name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()
        || (st.st_mode & 07777) != 0600
        || (have_current && st.st_dev == dev && st.st_ino == ino)
        || st.st_size < (off_t)WB_DATA_OFFSET) {
        close(fd);
        return NULL;
    }
    const size_t size = (size_t)st.st_size;
    uint8_t* base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED) return NULL;

    WbRing view;
    if (!wb_ring_view(base, size, &view)) {
        munmap(base, size);
        return NULL;
    }
    Ring* ring = calloc(1, sizeof(Ring));
    if (!ring) {
        munmap(base, size);
        return NULL;
    }
    *ring = (Ring){ view, size, slot, st.st_dev, st.st_ino };
    __atomic_store_n(WB_U32(base, WB_OFF_READER_PID), (uint32_t)getpid(), __ATOMIC_RELAXED);
    __atomic_store_n(WB_U32(base, WB_OFF_READER_RATE), host_rate, __ATOMIC_RELAXED);
    __atomic_store_n(WB_U32(base, WB_OFF_READER_BLOCK), 0u, __ATOMIC_RELAXED);
    return ring;
}

static Ring* ring_open_slot(const char* dir, int slot, bool have_current, dev_t dev, ino_t ino,
                            uint32_t host_rate)
{
    char name[32];
    snprintf(name, sizeof name, "/wavebridge.%d", slot);
    return ring_open(dir, name, slot, have_current, dev, ino, host_rate);
}

static void ring_close(Ring* ring)
{
    if (!ring) return;
    munmap(ring->view.base, ring->size);   /* never unlinks: the daemon owns the segment */
    free(ring);
}

/* [worker] */

/* ------------------------------------------------------------------ OSC, [worker] */

/* A bounded OSC message writer: every put checks the room left; `ok` turns false on the
 * first overflow and the message is then dropped, never sent truncated. */
typedef struct {
    uint8_t* p;
    size_t cap, len;
    bool ok;
} OscBuf;

static void osc_bytes(OscBuf* b, const void* src, size_t n)
{
    if (!b->ok || n > b->cap - b->len) {
        b->ok = false;
        return;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

/* An OSC string: the bytes, a NUL, zero padding to a multiple of 4. */
static void osc_string(OscBuf* b, const char* s, size_t n)
{
    static const uint8_t zeros[4] = { 0, 0, 0, 0 };
    osc_bytes(b, s, n);
    osc_bytes(b, zeros, 4 - (n & 3));
}

static void osc_i32(OscBuf* b, int32_t v)
{
    const uint32_t be = htonl((uint32_t)v);
    osc_bytes(b, &be, 4);
}

static void osc_f32(OscBuf* b, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, 4);
    osc_i32(b, (int32_t)bits);
}

static void osc_i64(OscBuf* b, int64_t v)
{
    osc_i32(b, (int32_t)(uint32_t)((uint64_t)v >> 32));
    osc_i32(b, (int32_t)(uint32_t)((uint64_t)v & 0xffffffffu));
}

static void osc_begin(OscBuf* b, uint8_t* buf, size_t cap, const char* address, const char* tags)
{
    *b = (OscBuf){ buf, cap, 0, true };
    osc_string(b, address, strlen(address));
    osc_string(b, tags, strlen(tags));
}

/* Encode one intent's messages into `out` (one datagram each). Returns how many (0..2). */
static int osc_encode(const Intent* in, uint8_t out[2][OSC_MAX], size_t len[2])
{
    int k = 0;
    OscBuf b;
    if (in->type == MSG_TRANSPORT || (in->type == MSG_PLAY && in->with_transport)) {
        const Transport* t = &in->tp;
        osc_begin(&b, out[k], OSC_MAX, "/wb/transport", ",ifffifhh");
        osc_i32(&b, in->slot);
        osc_f32(&b, (float)t->speed);
        osc_f32(&b, (float)t->bpm);
        osc_f32(&b, (float)t->beats_per_bar);
        osc_i32(&b, (int32_t)(t->bar > INT32_MAX ? INT32_MAX : t->bar < 0 ? 0 : t->bar));
        osc_f32(&b, (float)t->bar_beat);
        osc_i64(&b, t->read_index);
        osc_i64(&b, t->frame);
        if (b.ok) len[k++] = b.len;
    }
    if (in->type == MSG_PLAY) {
        const uint32_t n = in->prompt_len <= PROMPT_MAX ? in->prompt_len : PROMPT_MAX;
        const int q = in->quantize >= 0 && in->quantize <= 2 ? in->quantize : 0;
        osc_begin(&b, out[k], OSC_MAX, "/wb/play", ",isfis");
        osc_i32(&b, in->slot);
        osc_string(&b, in->prompt, n);
        osc_f32(&b, 0.0f);
        osc_i32(&b, in->seed);
        osc_string(&b, QUANTIZE_NAMES[q], strlen(QUANTIZE_NAMES[q]));
        if (b.ok) len[k++] = b.len;
    } else if (in->type == MSG_STOP) {
        osc_begin(&b, out[k], OSC_MAX, "/wb/stop", ",if");
        osc_i32(&b, in->slot);
        osc_f32(&b, in->value);
        if (b.ok) len[k++] = b.len;
    } else if (in->type == MSG_KEYS) {
        char tags[2 + 1 + KEYS_MAX + 1] = ",i";
        const uint32_t n = in->n_keys <= KEYS_MAX ? in->n_keys : KEYS_MAX;
        memset(tags + 2, 'i', n);
        tags[2 + n] = 0;
        osc_begin(&b, out[k], OSC_MAX, "/wb/keys", tags);
        osc_i32(&b, in->slot);
        for (uint32_t i = 0; i < n; ++i) osc_i32(&b, in->keys[i]);
        if (b.ok) len[k++] = b.len;
    } else if (in->type == MSG_PARAM) {
        osc_begin(&b, out[k], OSC_MAX, "/wb/param", ",isf");
        osc_i32(&b, in->slot);
        osc_string(&b, "gain", 4);
        osc_f32(&b, in->value);
        if (b.ok) len[k++] = b.len;
    }
    return k;
}

/* Log the daemon's /wb/error answers waiting on our socket (its replies go to the sender). */
static void drain_replies(Stub* self)
{
    uint8_t buf[OSC_MAX];
    for (int i = 0; i < 16; ++i) {
        const ssize_t n = recv(self->sock, buf, sizeof buf - 1, MSG_DONTWAIT);
        if (n <= 0) return;
        buf[n] = 0;
        if (n >= 12 && !memcmp(buf, "/wb/error", 10)) {
            /* the code and message strings follow the slot; print what is printable */
            for (ssize_t j = 0; j < n; ++j)
                if (buf[j] < 0x20 || buf[j] > 0x7e) buf[j] = ' ';
            lv2_log_warning(&self->logger, "wavebridge daemon: %s\n", (const char*)buf);
        }
    }
}

static void send_intent(Stub* self, const Intent* in)
{
    uint8_t out[2][OSC_MAX];
    size_t len[2];
    const int k = osc_encode(in, out, len);
    if (self->sock < 0 || in->osc_port < 1 || in->osc_port > 65535) return;
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons((uint16_t)in->osc_port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    for (int i = 0; i < k; ++i)
        if (sendto(self->sock, out[i], len[i], 0, (const struct sockaddr*)&to, sizeof to) < 0)
            lv2_log_warning(&self->logger, "wavebridge: sending to 127.0.0.1:%d: %s\n",
                            (int)in->osc_port, strerror(errno));
    drain_replies(self);
}

/* [worker] */
static LV2_Worker_Status work(LV2_Handle instance, LV2_Worker_Respond_Function respond,
                              LV2_Worker_Respond_Handle handle, uint32_t size, const void* data)
{
    Stub* self = (Stub*)instance;   /* the worker's part: sock, logger, host_rate, shm_dir (read-only) */
    MsgType type;
    if (size < sizeof type) return LV2_WORKER_ERR_UNKNOWN;
    memcpy(&type, data, sizeof type);
    if (type >= MSG_PLAY) {
        Intent in;
        if (size < offsetof(Intent, prompt) || size > sizeof in) return LV2_WORKER_ERR_UNKNOWN;
        memcpy(&in, data, size);
        if (in.prompt_len > size - offsetof(Intent, prompt)) return LV2_WORKER_ERR_UNKNOWN;
        /* coalesce: a newer set of keys is queued behind this one, only that one is sent */
        if (in.type == MSG_KEYS && in.keys_gen
            && (int32_t)(__atomic_load_n(&self->keys_latest, __ATOMIC_ACQUIRE) - in.keys_gen) > 0)
            return LV2_WORKER_SUCCESS;
        send_intent(self, &in);
        return LV2_WORKER_SUCCESS;
    }
    Request req;
    if (size != sizeof req) return LV2_WORKER_ERR_UNKNOWN;
    memcpy(&req, data, sizeof req);
    if (req.type == MSG_FREE) {
        ring_close(req.ring);
        return LV2_WORKER_SUCCESS;
    }
    Response resp = { req.slot, ring_open_slot(self->shm_dir, req.slot, req.have_current, req.dev,
                                               req.ino, self->host_rate) };
    if (respond(handle, sizeof resp, &resp) != LV2_WORKER_SUCCESS) {
        ring_close(resp.ring);
        return LV2_WORKER_ERR_NO_SPACE;   /* run() gives the request up after ATTACH_LOST_NS */
    }
    return LV2_WORKER_SUCCESS;
}

/* ------------------------------------------------------------------ [audio-thread] */

/* Swap in the worker's mapping. A NULL answer for the slot we already play keeps the current
 * ring (the segment is unchanged or gone for now); for another slot it detaches. */
static LV2_Worker_Status work_response(LV2_Handle instance, uint32_t size, const void* body)
{
    Stub* self = (Stub*)instance;
    Response resp;
    if (size != sizeof resp) return LV2_WORKER_ERR_UNKNOWN;
    memcpy(&resp, body, sizeof resp);
    self->pending = false;
    if (!resp.ring && self->ring && self->ring->slot == resp.slot) return LV2_WORKER_SUCCESS;
    /* Normally garbage[0] is free: one attach is in flight at a time and garbage goes to the
     * worker first. Only a response given up as lost and then delivered late could fill it;
     * then the old mapping is leaked rather than unmapped on this thread. */
    for (int i = 0; i < GARBAGE_MAX && self->ring; ++i)
        if (!self->garbage[i]) {
            self->garbage[i] = self->ring;
            break;
        }
    self->ring = resp.ring;
    self->cur.resync = true;
    self->cur.block_max = 0;
    return LV2_WORKER_SUCCESS;
}

/* Hand back a replaced mapping and, when needed, ask for a (re)attach. Schedules only. */
static void schedule_work(Stub* self, int64_t now)
{
    if (!self->schedule) return;
    LV2_Worker_Schedule* s = self->schedule;
    for (int i = 0; i < GARBAGE_MAX; ++i) {
        if (!self->garbage[i]) continue;
        Request req = { .type = MSG_FREE, .ring = self->garbage[i] };
        if (s->schedule_work(s->handle, sizeof req, &req) != LV2_WORKER_SUCCESS) return;
        self->garbage[i] = NULL;
    }
    if (self->pending && now - self->last_request_ns > ATTACH_LOST_NS) self->pending = false;
    const int slot = slot_of(self->slot_port);
    const Ring* ring = self->ring;
    const bool same_slot = ring && ring->slot == slot;
    if (self->pending || now - self->last_request_ns < ATTACH_RETRY_NS
        || (same_slot && wb_ring_writer_alive(&ring->view, now)))
        return;
    Request req = { .type = MSG_ATTACH, .slot = slot, .have_current = same_slot,
                    .dev = same_slot ? ring->dev : 0, .ino = same_slot ? ring->ino : 0 };
    self->pending = true;    /* before scheduling: a host may answer synchronously */
    self->last_request_ns = now;
    if (s->schedule_work(s->handle, sizeof req, &req) != LV2_WORKER_SUCCESS) self->pending = false;
}


/* ------------------------------------------------------------------ [audio-thread]: control */

static bool number_of(const Stub* self, const LV2_Atom* a, double* out)
{
    if (!a) return false;
    double v;
    if (a->type == self->u.atom_Float) v = ((const LV2_Atom_Float*)a)->body;
    else if (a->type == self->u.atom_Double) v = ((const LV2_Atom_Double*)a)->body;
    else if (a->type == self->u.atom_Int) v = ((const LV2_Atom_Int*)a)->body;
    else if (a->type == self->u.atom_Long) v = (double)((const LV2_Atom_Long*)a)->body;
    else return false;
    if (!isfinite(v)) return false;
    *out = v;
    return true;
}

/* Move a position by `beats` (may be negative), keeping bar_beat in [0, beats_per_bar). */
static void transport_advance(Transport* t, double beats)
{
    const double bpb = t->beats_per_bar > 0 ? t->beats_per_bar : 4.0;
    t->bar_beat += beats;
    if (t->bar_beat >= bpb || t->bar_beat < 0) {
        const double whole = floor(t->bar_beat / bpb);
        t->bar += (int64_t)whole;
        t->bar_beat -= whole * bpb;
        if (t->bar_beat >= bpb) t->bar_beat = 0;   /* rounding */
        if (t->bar < 0) {
            t->bar = 0;
            t->bar_beat = 0;
        }
    }
}

static double beats_per_frame(const Stub* self, const Transport* t)
{
    return self->host_rate ? t->speed * t->bpm / (60.0 * (double)self->host_rate) : 0.0;
}

/* A time:Position at frame `offset` of this block: back-date it to the block's first frame. */
static void position_event(Stub* self, const LV2_Atom_Object* obj, uint32_t offset)
{
    const LV2_Atom *speed = NULL, *bpm = NULL, *bar = NULL, *bar_beat = NULL, *bpb = NULL,
                   *frame = NULL;
    lv2_atom_object_get(obj, self->u.time_speed, &speed, self->u.time_beatsPerMinute, &bpm,
                        self->u.time_bar, &bar, self->u.time_barBeat, &bar_beat,
                        self->u.time_beatsPerBar, &bpb, self->u.time_frame, &frame, 0);
    Transport t = self->host;
    double v;
    if (number_of(self, speed, &v)) t.speed = v;
    if (number_of(self, frame, &v)) t.frame = (int64_t)v - (int64_t)(offset * t.speed);
    const bool bbt = number_of(self, bpm, &t.bpm) && t.bpm > 0;
    if (bbt) {
        if (number_of(self, bpb, &v) && v > 0 && v <= 64) t.beats_per_bar = v;
        if (number_of(self, bar, &v) && v >= 0) t.bar = (int64_t)v;
        if (number_of(self, bar_beat, &v) && v >= 0) t.bar_beat = v;
        transport_advance(&t, -(double)offset * beats_per_frame(self, &t));
    }
    const Transport* h = &self->host;
    const double drift = (double)(t.bar - h->bar) * t.beats_per_bar + (t.bar_beat - h->bar_beat);
    if (t.speed != h->speed || fabs(t.bpm - h->bpm) > 1e-3 || t.beats_per_bar != h->beats_per_bar
        || fabs(drift) > 1e-3 || (bbt && !self->host_bbt))
        self->host_changed = true;
    if (t.speed != h->speed || (bbt && !self->host_bbt)) self->host_started = true;
    if (bbt) self->host_bbt = true;
    t.read_index = h->read_index;
    self->host = t;
}

static void set_prompt(Stub* self, const char* s, uint32_t n)
{
    while (n && s[n - 1] == 0) --n;                 /* an atom:String counts its NUL */
    if (n > PROMPT_MAX) return;                     /* refused: longer than the daemon allows */
    if (n == self->prompt_len && !memcmp(self->prompt, s, n)) return;
    memcpy(self->prompt, s, n);
    self->prompt[n] = 0;
    self->prompt_len = n;
    ++self->prompt_gen;
}

static void control_events(Stub* self)
{
    if (!self->control || !self->map) return;
    LV2_ATOM_SEQUENCE_FOREACH (self->control, ev) {
        if (ev->body.type != self->u.atom_Object && ev->body.type != self->u.atom_Blank) continue;
        const LV2_Atom_Object* obj = (const LV2_Atom_Object*)&ev->body;
        const uint32_t offset = ev->time.frames > 0 ? (uint32_t)ev->time.frames : 0;
        if (obj->body.otype == self->u.time_Position) {
            position_event(self, obj, offset);
        } else if (obj->body.otype == self->u.patch_Set) {
            const LV2_Atom *property = NULL, *value = NULL;
            lv2_atom_object_get(obj, self->u.patch_property, &property, self->u.patch_value, &value, 0);
            if (property && property->type == self->u.atom_URID
                && ((const LV2_Atom_URID*)property)->body == self->u.wb_prompt
                && value && value->type == self->u.atom_String)
                set_prompt(self, (const char*)LV2_ATOM_BODY_CONST(value), value->size);
        } else if (obj->body.otype == self->u.patch_Get) {
            const LV2_Atom* property = NULL;
            lv2_atom_object_get(obj, self->u.patch_property, &property, 0);
            if (!property || (property->type == self->u.atom_URID
                              && ((const LV2_Atom_URID*)property)->body == self->u.wb_prompt))
                self->notify_asked = true;
        }
    }
}

/* patch:Set of the prompt on the notify port, after a change or when asked. */
static void notify_prompt(Stub* self)
{
    if (!self->notify || !self->map) return;
    LV2_Atom_Forge* f = &self->forge;
    const uint32_t capacity = self->notify->atom.size;
    lv2_atom_forge_set_buffer(f, (uint8_t*)self->notify, capacity);
    LV2_Atom_Forge_Frame seq;
    if (!lv2_atom_forge_sequence_head(f, &seq, 0)) return;
    if (self->notify_asked || self->notified_gen != self->prompt_gen) {
        LV2_Atom_Forge_Frame obj;
        const bool ok = lv2_atom_forge_frame_time(f, 0)
            && lv2_atom_forge_object(f, &obj, 0, self->u.patch_Set)
            && lv2_atom_forge_key(f, self->u.patch_property)
            && lv2_atom_forge_urid(f, self->u.wb_prompt)
            && lv2_atom_forge_key(f, self->u.patch_value)
            && lv2_atom_forge_string(f, self->prompt, self->prompt_len);
        if (ok) {
            lv2_atom_forge_pop(f, &obj);
            self->notify_asked = false;
            self->notified_gen = self->prompt_gen;
        }
    }
    lv2_atom_forge_pop(f, &seq);
}

static bool post(Stub* self, Intent* in)
{
    const uint32_t size = (uint32_t)offsetof(Intent, prompt) + in->prompt_len;
    return self->schedule->schedule_work(self->schedule->handle, size, in) == LV2_WORKER_SUCCESS;
}

/* Compare what the ports, the prompt and the host say with what the daemon was told; post the
 * difference to the worker. Nothing is marked as sent unless the host queued it. */
static void drive_daemon(Stub* self, int64_t now)
{
    if (!self->schedule) return;
    const int32_t slot = slot_of(self->slot_port);
    const bool play = int_of(self->play_port, 0, 1, 0) == 1;
    const bool follow = int_of(self->sync_port, 0, 1, 1) == 1 && self->host_bbt;
    const bool rolling = self->host.speed > 0;
    const bool active = play && self->prompt_len > 0 && (!follow || rolling);
    const int32_t seed = (int32_t)int_of(self->seed_port, 0, (int32_t)SEED_MAX, 0);
    const int32_t quantize = int_of(self->quantize_port, 0, 2, 2);
    const int32_t port = int_of(self->osc_port_port, 1, 65535, OSC_PORT_DEFAULT);
    float gain = self->gain_port ? *self->gain_port : 1.0f;
    if (!(gain >= 0.0f)) gain = 0.0f;
    if (gain > 4.0f) gain = 4.0f;

    Intent in;
    memset(&in, 0, offsetof(Intent, prompt));
    in.osc_port = port;
    in.tp = self->host;

    const bool moved = self->sent_active && (self->sent_slot != slot || self->sent_port != port);
    if (self->sent_active && (!active || moved)) {
        in.type = MSG_STOP;
        in.slot = self->sent_slot;
        in.osc_port = self->sent_port;
        in.value = STOP_FADE_S;
        if (!post(self, &in)) return;
        self->sent_active = false;
        in.osc_port = port;
    }
    if (active && (!self->sent_gain_valid || gain != self->sent_gain || !self->sent_active)) {
        in.type = MSG_PARAM;
        in.slot = slot;
        in.value = gain;
        if (!post(self, &in)) return;
        self->sent_gain = gain;
        self->sent_gain_valid = true;
    }
    const int64_t since = now - self->last_transport_ns;
    const bool tp_due = follow && ((self->host_changed && (self->host_started || since >= TRANSPORT_MIN_NS))
                                   || (rolling && since >= TRANSPORT_EVERY_NS));
    if (active && (!self->sent_active || self->sent_gen != self->prompt_gen || self->sent_seed != seed)) {
        in.type = MSG_PLAY;
        in.slot = slot;
        in.seed = seed;
        in.quantize = quantize;
        in.with_transport = follow;
        in.prompt_len = self->prompt_len;
        memcpy(in.prompt, self->prompt, self->prompt_len);
        if (!post(self, &in)) return;
        self->sent_active = true;
        self->sent_slot = slot;
        self->sent_port = port;
        self->sent_gen = self->prompt_gen;
        self->sent_seed = seed;
        self->sent_quantize = quantize;
        if (follow) {
            self->host_changed = self->host_started = false;
            self->last_transport_ns = now;
        }
        return;
    }
    if (tp_due) {
        in.type = MSG_TRANSPORT;
        in.slot = slot;
        if (!post(self, &in)) return;
        self->host_changed = self->host_started = false;
        self->last_transport_ns = now;
    }
}

/* ------------------------------------------------------------------ [audio-thread]: MIDI in */

static void key_set(Stub* self, uint32_t key, uint32_t channel, bool on)
{
    const uint16_t was = self->key_channels[key];
    const uint16_t now = on ? (uint16_t)(was | (1u << channel)) : (uint16_t)(was & ~(1u << channel));
    self->key_channels[key] = now;
    if (now) self->held[key >> 6] |= 1ull << (key & 63);
    else self->held[key >> 6] &= ~(1ull << (key & 63));
}

/* One event of midi_in: its first message only, checked byte by byte; anything that is not a
 * complete channel message of the kinds used is ignored (LV2 carries no running status). */
static void midi_event(Stub* self, const uint8_t* m, uint32_t size)
{
    if (size < 3 || m[0] < 0x80 || m[0] >= 0xF0 || (m[1] | m[2]) & 0x80) return;
    const uint32_t channel = m[0] & 0x0F;
    switch (m[0] & 0xF0) {
    case 0x90: key_set(self, m[1], channel, m[2] > 0); break;
    case 0x80: key_set(self, m[1], channel, false); break;
    case 0xB0:
        if (m[1] == 120 || m[1] == 123)
            for (uint32_t k = 0; k < 128; ++k)
                if (self->key_channels[k] & (1u << channel)) key_set(self, k, channel, false);
        break;
    default: break;
    }
}

static void midi_events(Stub* self)
{
    if (!self->midi_in || !self->map) return;
    LV2_ATOM_SEQUENCE_FOREACH (self->midi_in, ev) {
        if (ev->body.type == self->u.midi_MidiEvent)
            midi_event(self, (const uint8_t*)LV2_ATOM_BODY_CONST(&ev->body), ev->body.size);
    }
}

/* The held keys changed since the daemon was last told (or the slot / port moved): post them.
 * Retried on the next cycle when the host's queue refuses. */
static void drive_keys(Stub* self)
{
    if (!self->schedule) return;
    const int32_t slot = slot_of(self->slot_port);
    const int32_t port = int_of(self->osc_port_port, 1, 65535, OSC_PORT_DEFAULT);
    Intent in;
    memset(&in, 0, offsetof(Intent, prompt));
    in.type = MSG_KEYS;
    if (self->keys_slot != slot || self->keys_port != port) {
        if (self->keys_posted[0] | self->keys_posted[1]) {
            in.slot = self->keys_slot;         /* let go on the old slot; never coalesced away */
            in.osc_port = self->keys_port;
            if (!post(self, &in)) return;
            self->keys_posted[0] = self->keys_posted[1] = 0;
        }
        self->keys_slot = slot;
        self->keys_port = port;
    }
    uint64_t send[2] = { 0, 0 };              /* the lowest KEYS_MAX held: what the daemon gets */
    for (uint32_t k = 0; k < 128 && in.n_keys < KEYS_MAX; ++k)
        if (self->held[k >> 6] >> (k & 63) & 1) {
            in.keys[in.n_keys++] = (uint8_t)k;
            send[k >> 6] |= 1ull << (k & 63);
        }
    if (!self->keys_force && send[0] == self->keys_posted[0] && send[1] == self->keys_posted[1]) return;
    in.slot = slot;
    in.osc_port = port;
    if (++self->keys_gen == 0) self->keys_gen = 1;   /* 0 is "always send" */
    in.keys_gen = self->keys_gen;
    /* before scheduling: the worker skips every set older than this one — so when the host
     * refuses it, the set posted last may never be sent: post again even if it is the same */
    __atomic_store_n(&self->keys_latest, in.keys_gen, __ATOMIC_RELEASE);
    self->keys_force = !post(self, &in);
    if (self->keys_force) return;
    self->keys_posted[0] = send[0];
    self->keys_posted[1] = send[1];
}

static void connect_port(LV2_Handle instance, uint32_t port, void* data)
{
    Stub* self = (Stub*)instance;
    switch (port) {
    case PORT_SLOT: self->slot_port = (const float*)data; break;
    case PORT_OUT_L: self->out[0] = (float*)data; break;
    case PORT_OUT_R: self->out[1] = (float*)data; break;
    case PORT_BUFFERED_MS: self->buffered_ms = (float*)data; break;
    case PORT_UNDERRUNS: self->underruns = (float*)data; break;
    case PORT_CONTROL: self->control = (const LV2_Atom_Sequence*)data; break;
    case PORT_NOTIFY: self->notify = (LV2_Atom_Sequence*)data; break;
    case PORT_PLAY: self->play_port = (const float*)data; break;
    case PORT_SEED: self->seed_port = (const float*)data; break;
    case PORT_QUANTIZE: self->quantize_port = (const float*)data; break;
    case PORT_SYNC: self->sync_port = (const float*)data; break;
    case PORT_GAIN: self->gain_port = (const float*)data; break;
    case PORT_OSC_PORT: self->osc_port_port = (const float*)data; break;
    case PORT_MIDI_IN: self->midi_in = (const LV2_Atom_Sequence*)data; break;
    default: break;
    }
}

static void run(LV2_Handle instance, uint32_t n)
{
    Stub* self = (Stub*)instance;
    const int64_t now = mono_ns();
    control_events(self);     /* host position now refers to this block's first frame */
    midi_events(self);
    const Ring* ring = self->ring;
    float buffered = 0.0f, underruns = 0.0f;
    self->host.read_index = -1;
    if (ring) {
        uint8_t* b = ring->view.base;
        const uint32_t k = wb_ring_read(&ring->view, &self->cur, self->out[0], self->out[1], n, now);
        const uint64_t r = self->cur.pos;
        self->host.read_index = (int64_t)(r - k);   /* the ring frame at this block's start */
        const uint64_t w = __atomic_load_n(WB_U64(b, WB_OFF_WRITE_INDEX), __ATOMIC_RELAXED);
        /* the writer may change the data rate in place (with an epoch bump): read it live */
        const uint32_t rate = __atomic_load_n(WB_U32(b, WB_OFF_SAMPLE_RATE), __ATOMIC_RELAXED);
        buffered = w > r && rate ? (float)(w - r) * 1000.0f / (float)rate : 0.0f;
        underruns = (float)__atomic_load_n(WB_U64(b, WB_OFF_UNDERRUN), __ATOMIC_RELAXED);
    } else {
        memset(self->out[0], 0, n * sizeof(float));
        memset(self->out[1], 0, n * sizeof(float));
    }
    if (self->buffered_ms) *self->buffered_ms = buffered;
    if (self->underruns) *self->underruns = underruns;
    notify_prompt(self);
    drive_daemon(self, now);
    drive_keys(self);
    /* the next block starts n frames later on the host's clock */
    if (self->host_bbt) transport_advance(&self->host, (double)n * beats_per_frame(self, &self->host));
    self->host.frame += (int64_t)((double)n * self->host.speed);
    schedule_work(self, now);   /* last: a synchronous host may swap self->ring in here */
}

/* ------------------------------------------------------------------ [instantiation] */

static void map_urids(Stub* self)
{
    LV2_URID_Map* m = self->map;
    Urids* u = &self->u;
    u->atom_Object = m->map(m->handle, LV2_ATOM__Object);
    u->atom_Blank = m->map(m->handle, LV2_ATOM__Blank);
    u->atom_String = m->map(m->handle, LV2_ATOM__String);
    u->atom_Float = m->map(m->handle, LV2_ATOM__Float);
    u->atom_Double = m->map(m->handle, LV2_ATOM__Double);
    u->atom_Int = m->map(m->handle, LV2_ATOM__Int);
    u->atom_Long = m->map(m->handle, LV2_ATOM__Long);
    u->atom_URID = m->map(m->handle, LV2_ATOM__URID);
    u->atom_Sequence = m->map(m->handle, LV2_ATOM__Sequence);
    u->patch_Set = m->map(m->handle, LV2_PATCH__Set);
    u->patch_Get = m->map(m->handle, LV2_PATCH__Get);
    u->patch_property = m->map(m->handle, LV2_PATCH__property);
    u->patch_value = m->map(m->handle, LV2_PATCH__value);
    u->time_Position = m->map(m->handle, LV2_TIME__Position);
    u->time_speed = m->map(m->handle, LV2_TIME__speed);
    u->time_bar = m->map(m->handle, LV2_TIME__bar);
    u->time_barBeat = m->map(m->handle, LV2_TIME__barBeat);
    u->time_beatsPerBar = m->map(m->handle, LV2_TIME__beatsPerBar);
    u->time_beatsPerMinute = m->map(m->handle, LV2_TIME__beatsPerMinute);
    u->time_frame = m->map(m->handle, LV2_TIME__frame);
    u->midi_MidiEvent = m->map(m->handle, LV2_MIDI__MidiEvent);
    u->wb_prompt = m->map(m->handle, PROMPT_URI);
    lv2_atom_forge_init(&self->forge, m);
}

static LV2_Handle instantiate(const LV2_Descriptor* descriptor, double rate, const char* bundle_path,
                              const LV2_Feature* const* features)
{
    (void)descriptor;
    (void)bundle_path;
    Stub* self = calloc(1, sizeof(Stub));
    if (!self) return NULL;
    self->host_rate = (rate > 0 && rate < 4294967295.0) ? (uint32_t)(rate + 0.5) : 0;
    LV2_Log_Log* log = NULL;
    for (int i = 0; features && features[i]; ++i) {
        if (!strcmp(features[i]->URI, LV2_WORKER__schedule))
            self->schedule = (LV2_Worker_Schedule*)features[i]->data;
        else if (!strcmp(features[i]->URI, LV2_URID__map))
            self->map = (LV2_URID_Map*)features[i]->data;
        else if (!strcmp(features[i]->URI, LV2_LOG__log))
            log = (LV2_Log_Log*)features[i]->data;
    }
    lv2_log_logger_init(&self->logger, self->map, log);
    const char* dir = private_dir(getenv("WAVEBRIDGE_SHM_DIR"));   /* once, here: never in run() */
    if (dir) {
        self->shm_dir = strdup(dir);
        if (!self->shm_dir) {
            free(self);
            return NULL;
        }
        if (log && !private_dir_ok(dir))
            lv2_log_warning(&self->logger, "wavebridge: WAVEBRIDGE_SHM_DIR=%s is not a directory of ours "
                            "with mode 0700: refusing it, no ring is played\n", dir);
    }
    if (self->map) map_urids(self);
    if (log && !self->map)
        lv2_log_warning(&self->logger, "wavebridge: host has no urid:map; prompt and tempo ignored\n");
    if (log && !self->schedule)
        lv2_log_warning(&self->logger, "wavebridge: host has no worker; nothing is sent to the daemon\n");
    self->sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    self->host = (Transport){ .beats_per_bar = 4.0, .bpm = 120.0, .read_index = -1 };
    self->last_request_ns = mono_ns() - ATTACH_RETRY_NS;   /* first run() may ask at once */
    return self;
}

static void activate(LV2_Handle instance)
{
    Stub* self = (Stub*)instance;
    self->cur.resync = true;
    memset(self->key_channels, 0, sizeof self->key_channels);   /* run() then releases them */
    self->held[0] = self->held[1] = 0;
    if (self->schedule) return;            /* the worker attaches */
    const int slot = slot_of(self->slot_port);
    /* same slot: keep the mapping unless the segment was replaced (a new inode) */
    const bool same = self->ring && self->ring->slot == slot;
    Ring* nr = ring_open_slot(self->shm_dir, slot, same, same ? self->ring->dev : 0,
                              same ? self->ring->ino : 0, self->host_rate);
    if (nr || !same) {
        ring_close(self->ring);
        self->ring = nr;
        self->cur.block_max = 0;
    }
}

static void deactivate(LV2_Handle instance)
{
    (void)instance;   /* keep the mapping: re-activation resyncs to the live edge */
}

static void cleanup(LV2_Handle instance)
{
    Stub* self = (Stub*)instance;
    /* a job still playing goes on: the daemon owns it, and a session reopened later restarts it
     * from the saved state; closing the plugin is not a musical stop */
    ring_close(self->ring);
    for (int i = 0; i < GARBAGE_MAX; ++i) ring_close(self->garbage[i]);
    if (self->sock >= 0) close(self->sock);
    free(self->shm_dir);
    free(self);
}

/* [instantiation]: the prompt (the control ports' values are the host's to save). */
static LV2_State_Status save(LV2_Handle instance, LV2_State_Store_Function store,
                             LV2_State_Handle handle, uint32_t flags, const LV2_Feature* const* features)
{
    (void)flags;
    (void)features;
    const Stub* self = (const Stub*)instance;
    if (!self->map) return LV2_STATE_ERR_NO_FEATURE;
    return store(handle, self->u.wb_prompt, self->prompt, self->prompt_len + 1, self->u.atom_String,
                 LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE);
}

/* [instantiation]: never concurrent with run() (no threadSafeRestore): plain stores. */
static LV2_State_Status restore(LV2_Handle instance, LV2_State_Retrieve_Function retrieve,
                                LV2_State_Handle handle, uint32_t flags,
                                const LV2_Feature* const* features)
{
    (void)flags;
    (void)features;
    Stub* self = (Stub*)instance;
    if (!self->map) return LV2_STATE_ERR_NO_FEATURE;
    size_t size = 0;
    uint32_t type = 0, vflags = 0;
    const void* value = retrieve(handle, self->u.wb_prompt, &size, &type, &vflags);
    if (!value) return LV2_STATE_SUCCESS;          /* an old state: keep the prompt */
    if (type != self->u.atom_String || size > PROMPT_MAX + 1) return LV2_STATE_ERR_BAD_TYPE;
    set_prompt(self, (const char*)value, (uint32_t)size);
    return LV2_STATE_SUCCESS;
}

static const void* extension_data(const char* uri)
{
    static const LV2_Worker_Interface worker = { work, work_response, NULL };
    static const LV2_State_Interface state = { save, restore };
    if (!strcmp(uri, LV2_WORKER__interface)) return &worker;
    if (!strcmp(uri, LV2_STATE__interface)) return &state;
    return NULL;
}

static const LV2_Descriptor descriptor = {
    STUB_URI, instantiate, connect_port, activate, run, deactivate, cleanup, extension_data,
};

LV2_SYMBOL_EXPORT const LV2_Descriptor* lv2_descriptor(uint32_t index)
{
    return index == 0 ? &descriptor : NULL;
}
