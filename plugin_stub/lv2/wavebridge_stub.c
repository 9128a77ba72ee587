/*
 * wavebridge_stub.c — LV2 plugin <urn:wavebridge:stub>: plays one wavebridge slot's
 * shared-memory ring (ring protocol v1, see DESIGN.md) into a DAW.
 *
 * Ports: 0 slot (control in, 1..64), 1 out_l, 2 out_r (audio out),
 *        3 buffered_ms, 4 underruns (control out; underruns = the ring's underrun_frames).
 *
 * Threading class of each entry point:
 *   instantiate, activate, deactivate, cleanup, extension_data ...... [instantiation]
 *   connect_port, run, work_response ................................. [audio-thread]
 *   work .............................................................. [worker]
 *
 * run() copies frames, zero-fills, and does atomic loads/stores on the mapping: no malloc, no
 * lock, no log, no system call other than clock_gettime(CLOCK_MONOTONIC), which glibc serves
 * from the vDSO on Linux (no kernel entry) — it stamps reader_heartbeat_ns and judges the
 * writer's heartbeat. Everything that touches the kernel (shm_open, fstat, mmap, munmap) runs
 * in work(): run() asks the worker to (re)attach at most every ATTACH_RETRY_NS while it has no
 * ring, the writer looks dead (writer_alive clear or writer_heartbeat_ns older than 1 s) or the
 * slot port changed; work_response() swaps in the prepared mapping and the replaced one goes
 * back to the worker to be unmapped. A daemon restart that reuses the segment only bumps
 * epoch, which run() handles by resyncing; a recreated segment (new inode) is mapped anew.
 *
 * Without the host's worker feature the ring is attached in activate() only: epoch resyncs
 * still work, but a slot change or a recreated segment needs deactivate/activate.
 *
 * The segment is never unlinked here: the daemon owns it. Little-endian hosts only (the ring
 * is little-endian and fields are accessed natively).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <lv2/core/lv2.h>
#include <lv2/worker/worker.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ring protocol v1 is little-endian; this stub reads fields natively"
#endif

#define STUB_URI "urn:wavebridge:stub"

/* Ring protocol v1 layout (mirrors bridge/protocol.py). */
#define RING_MAGIC "WBRING1"           /* plus the terminating NUL: 8 bytes */
#define RING_VERSION 1u
#define RING_DATA_OFFSET 4096u
#define RING_MAX_CHANNELS 8u
#define RING_MAX_CAPACITY (1ull << 24)
#define OFF_VERSION 8
#define OFF_DATA_OFFSET 12
#define OFF_SAMPLE_RATE 16
#define OFF_CHANNELS 20
#define OFF_CAPACITY 24
#define OFF_EPOCH 32
#define OFF_FLAGS 44
#define OFF_WRITER_HEARTBEAT 48
#define OFF_WRITE_INDEX 64
#define OFF_READ_INDEX 128
#define OFF_UNDERRUN 136
#define OFF_READER_HEARTBEAT 144
#define OFF_READER_RATE 152
#define OFF_READER_BLOCK 156
#define OFF_READER_PID 160
#define FLAG_WRITER_ALIVE 1u
#define FLAG_PLAYING 2u

#define SLOT_MIN 1
#define SLOT_MAX 64
#define WRITER_STALE_NS 1000000000LL   /* writer heartbeat older than this: writer dead */
#define ATTACH_RETRY_NS 250000000LL    /* at most one attach request per 250 ms */
#define ATTACH_LOST_NS 2000000000LL    /* unanswered this long: the response was lost */
#define GARBAGE_MAX 4

enum { PORT_SLOT, PORT_OUT_L, PORT_OUT_R, PORT_BUFFERED_MS, PORT_UNDERRUNS };

/* One mapped ring. Immutable once handed to the audio thread. */
typedef struct {
    uint8_t* base;
    size_t size;
    int slot;
    dev_t dev;
    ino_t ino;
    uint32_t channels;
    uint64_t capacity;
    const float* data;
} Ring;

#define U64(base, off) ((uint64_t*)((base) + (off)))
#define U32(base, off) ((uint32_t*)((base) + (off)))

typedef enum { MSG_ATTACH, MSG_FREE } MsgType;

typedef struct {            /* run() -> work() */
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

typedef struct {
    const float* slot_port;
    float* out[2];
    float* buffered_ms;
    float* underruns;

    LV2_Worker_Schedule* schedule;   /* NULL: host has no worker */
    uint32_t host_rate;

    /* audio-thread state */
    Ring* ring;
    Ring* garbage[GARBAGE_MAX];   /* replaced mappings waiting to be sent to the worker */
    bool pending;            /* an ATTACH request is in flight (since last_request_ns) */
    bool resync;             /* next read starts at the live edge */
    int64_t last_request_ns;
    uint64_t epoch;
    uint64_t r;              /* our read_index */
    uint32_t block_max;
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

/* ------------------------------------------------------------------ [worker] / [instantiation] */

/* Map /wavebridge.<slot> and validate its header. Returns NULL if the segment is missing, not
 * a regular file of our own uid with mode 0600 (shm_open already refuses symlinks: another
 * user's ring planted under the name is never played), not a v1 ring, or — when have_current —
 * if it is the segment already mapped (same inode). */
static Ring* ring_open(const char* name, int slot, bool have_current, dev_t dev, ino_t ino,
                      uint32_t host_rate)
{
    const int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()
        || (st.st_mode & 07777) != 0600
        || (have_current && st.st_dev == dev && st.st_ino == ino)
        || st.st_size < (off_t)RING_DATA_OFFSET) {
        close(fd);
        return NULL;
    }
    const size_t size = (size_t)st.st_size;
    uint8_t* base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED) return NULL;

    uint64_t magic = __atomic_load_n(U64(base, 0), __ATOMIC_ACQUIRE);   /* written last */
    const uint32_t channels = *U32(base, OFF_CHANNELS);
    const uint64_t capacity = *U64(base, OFF_CAPACITY);
    const uint32_t rate = *U32(base, OFF_SAMPLE_RATE);
    if (memcmp(&magic, RING_MAGIC, 8) != 0 || *U32(base, OFF_VERSION) != RING_VERSION
        || *U32(base, OFF_DATA_OFFSET) != RING_DATA_OFFSET || rate == 0
        || channels < 1 || channels > RING_MAX_CHANNELS
        || capacity == 0 || (capacity & (capacity - 1)) != 0 || capacity > RING_MAX_CAPACITY
        || size < RING_DATA_OFFSET + capacity * channels * sizeof(float)) {
        munmap(base, size);
        return NULL;
    }
    Ring* ring = calloc(1, sizeof(Ring));
    if (!ring) {
        munmap(base, size);
        return NULL;
    }
    *ring = (Ring){ base, size, slot, st.st_dev, st.st_ino, channels, capacity,
                    (const float*)(base + RING_DATA_OFFSET) };
    __atomic_store_n(U32(base, OFF_READER_PID), (uint32_t)getpid(), __ATOMIC_RELAXED);
    __atomic_store_n(U32(base, OFF_READER_RATE), host_rate, __ATOMIC_RELAXED);
    __atomic_store_n(U32(base, OFF_READER_BLOCK), 0u, __ATOMIC_RELAXED);
    return ring;
}

static Ring* ring_open_slot(int slot, bool have_current, dev_t dev, ino_t ino, uint32_t host_rate)
{
    char name[32];
    snprintf(name, sizeof name, "/wavebridge.%d", slot);
    return ring_open(name, slot, have_current, dev, ino, host_rate);
}

static void ring_close(Ring* ring)
{
    if (!ring) return;
    munmap(ring->base, ring->size);   /* never unlinks: the daemon owns the segment */
    free(ring);
}

/* [worker] */
static LV2_Worker_Status work(LV2_Handle instance, LV2_Worker_Respond_Function respond,
                              LV2_Worker_Respond_Handle handle, uint32_t size, const void* data)
{
    const Stub* self = (const Stub*)instance;
    Request req;
    if (size != sizeof req) return LV2_WORKER_ERR_UNKNOWN;
    memcpy(&req, data, sizeof req);
    if (req.type == MSG_FREE) {
        ring_close(req.ring);
        return LV2_WORKER_SUCCESS;
    }
    Response resp = { req.slot, ring_open_slot(req.slot, req.have_current, req.dev, req.ino,
                                               self->host_rate) };
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
    self->resync = true;
    self->block_max = 0;
    return LV2_WORKER_SUCCESS;
}

static void copy_frames(const float* src, uint32_t channels, float* l, float* r, uint32_t k)
{
    if (channels == 1) {
        for (uint32_t i = 0; i < k; ++i) l[i] = r[i] = src[i];
    } else {
        for (uint32_t i = 0; i < k; ++i) {
            l[i] = src[(size_t)i * channels];
            r[i] = src[(size_t)i * channels + 1];
        }
    }
}

static bool writer_alive(const Ring* ring, int64_t now)
{
    const uint32_t flags = __atomic_load_n(U32(ring->base, OFF_FLAGS), __ATOMIC_RELAXED);
    const int64_t hb = (int64_t)__atomic_load_n(U64(ring->base, OFF_WRITER_HEARTBEAT), __ATOMIC_RELAXED);
    return (flags & FLAG_WRITER_ALIVE) && now - hb <= WRITER_STALE_NS;
}

/* The [audio] read path of the ring protocol. Returns frames of real audio written. */
static uint32_t ring_read(Stub* self, const Ring* ring, float* l, float* r, uint32_t n, int64_t now)
{
    uint8_t* b = ring->base;
    const uint64_t w = __atomic_load_n(U64(b, OFF_WRITE_INDEX), __ATOMIC_ACQUIRE);
    const uint64_t epoch = __atomic_load_n(U64(b, OFF_EPOCH), __ATOMIC_RELAXED);
    uint64_t pos = self->r;
    if (self->resync) {
        /* a new mapping: continue where the previous reader stopped if that is valid (no
         * buffered audio thrown away, no false underrun), else start at the live edge */
        const uint64_t ri = __atomic_load_n(U64(b, OFF_READ_INDEX), __ATOMIC_RELAXED);
        self->resync = false;
        self->epoch = epoch;
        pos = (w >= ri && w - ri <= ring->capacity) ? ri : w;
    } else if (epoch != self->epoch || w < pos || w - pos > ring->capacity) {
        self->epoch = epoch;
        pos = w;
    }
    const uint32_t k = (w - pos < n) ? (uint32_t)(w - pos) : n;
    if (k) {
        const uint64_t i0 = pos & (ring->capacity - 1);
        const uint64_t to_end = ring->capacity - i0;
        const uint32_t first = to_end < k ? (uint32_t)to_end : k;
        copy_frames(ring->data + i0 * ring->channels, ring->channels, l, r, first);
        copy_frames(ring->data, ring->channels, l + first, r + first, k - first);
    }
    if (k < n) {
        memset(l + k, 0, (n - k) * sizeof(float));
        memset(r + k, 0, (n - k) * sizeof(float));
        /* a shortfall is an underrun while a live writer says it is playing (a dead writer's
         * stale flag counts nothing) */
        if ((__atomic_load_n(U32(b, OFF_FLAGS), __ATOMIC_RELAXED) & FLAG_PLAYING) && writer_alive(ring, now)) {
            uint64_t* u = U64(b, OFF_UNDERRUN);   /* only the reader writes it */
            __atomic_store_n(u, __atomic_load_n(u, __ATOMIC_RELAXED) + (n - k), __ATOMIC_RELAXED);
        }
    }
    pos += k;
    self->r = pos;
    __atomic_store_n(U64(b, OFF_READ_INDEX), pos, __ATOMIC_RELEASE);
    __atomic_store_n(U64(b, OFF_READER_HEARTBEAT), (uint64_t)now, __ATOMIC_RELAXED);
    if (n > self->block_max) {
        self->block_max = n;
        __atomic_store_n(U32(b, OFF_READER_BLOCK), n, __ATOMIC_RELAXED);
    }
    return k;
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
        || (same_slot && writer_alive(ring, now)))
        return;
    Request req = { .type = MSG_ATTACH, .slot = slot, .have_current = same_slot,
                    .dev = same_slot ? ring->dev : 0, .ino = same_slot ? ring->ino : 0 };
    self->pending = true;    /* before scheduling: a host may answer synchronously */
    self->last_request_ns = now;
    if (s->schedule_work(s->handle, sizeof req, &req) != LV2_WORKER_SUCCESS) self->pending = false;
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
    default: break;
    }
}

static void run(LV2_Handle instance, uint32_t n)
{
    Stub* self = (Stub*)instance;
    const int64_t now = mono_ns();
    const Ring* ring = self->ring;
    float buffered = 0.0f, underruns = 0.0f;
    if (ring) {
        ring_read(self, ring, self->out[0], self->out[1], n, now);
        const uint64_t w = __atomic_load_n(U64(ring->base, OFF_WRITE_INDEX), __ATOMIC_RELAXED);
        /* the writer may change the data rate in place (with an epoch bump): read it live */
        const uint32_t rate = __atomic_load_n(U32(ring->base, OFF_SAMPLE_RATE), __ATOMIC_RELAXED);
        buffered = w > self->r && rate ? (float)(w - self->r) * 1000.0f / (float)rate : 0.0f;
        underruns = (float)__atomic_load_n(U64(ring->base, OFF_UNDERRUN), __ATOMIC_RELAXED);
    } else {
        memset(self->out[0], 0, n * sizeof(float));
        memset(self->out[1], 0, n * sizeof(float));
    }
    if (self->buffered_ms) *self->buffered_ms = buffered;
    if (self->underruns) *self->underruns = underruns;
    schedule_work(self, now);   /* last: a synchronous host may swap self->ring in here */
}

/* ------------------------------------------------------------------ [instantiation] */

static LV2_Handle instantiate(const LV2_Descriptor* descriptor, double rate, const char* bundle_path,
                              const LV2_Feature* const* features)
{
    (void)descriptor;
    (void)bundle_path;
    Stub* self = calloc(1, sizeof(Stub));
    if (!self) return NULL;
    self->host_rate = (rate > 0 && rate < 4294967295.0) ? (uint32_t)(rate + 0.5) : 0;
    for (int i = 0; features && features[i]; ++i)
        if (!strcmp(features[i]->URI, LV2_WORKER__schedule))
            self->schedule = (LV2_Worker_Schedule*)features[i]->data;
    self->last_request_ns = mono_ns() - ATTACH_RETRY_NS;   /* first run() may ask at once */
    return self;
}

static void activate(LV2_Handle instance)
{
    Stub* self = (Stub*)instance;
    self->resync = true;
    if (self->schedule) return;            /* the worker attaches */
    const int slot = slot_of(self->slot_port);
    /* same slot: keep the mapping unless the segment was replaced (a new inode) */
    const bool same = self->ring && self->ring->slot == slot;
    Ring* nr = ring_open_slot(slot, same, same ? self->ring->dev : 0, same ? self->ring->ino : 0,
                              self->host_rate);
    if (nr || !same) {
        ring_close(self->ring);
        self->ring = nr;
        self->block_max = 0;
    }
}

static void deactivate(LV2_Handle instance)
{
    (void)instance;   /* keep the mapping: re-activation resyncs to the live edge */
}

static void cleanup(LV2_Handle instance)
{
    Stub* self = (Stub*)instance;
    ring_close(self->ring);
    for (int i = 0; i < GARBAGE_MAX; ++i) ring_close(self->garbage[i]);
    free(self);
}

static const void* extension_data(const char* uri)
{
    static const LV2_Worker_Interface worker = { work, work_response, NULL };
    return strcmp(uri, LV2_WORKER__interface) ? NULL : &worker;
}

static const LV2_Descriptor descriptor = {
    STUB_URI, instantiate, connect_port, activate, run, deactivate, cleanup, extension_data,
};

LV2_SYMBOL_EXPORT const LV2_Descriptor* lv2_descriptor(uint32_t index)
{
    return index == 0 ? &descriptor : NULL;
}
