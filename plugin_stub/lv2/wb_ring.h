/*
 * wb_ring.h — ring protocol v1 (docs/ring-protocol.md) for C readers, in one header.
 *
 * Owns the C side of the shared-memory layout: every field offset, the magic, version, data
 * offset, flag bits and the bounds a reader checks, with the same names as
 * plugin_stub/protocol.py behind a WB_ prefix (WB_OFF_READ_INDEX is protocol.OFF_READ_INDEX;
 * tests/test_ring_header.py fails on any name or value that differs). Plus the reader's three
 * steps, as static inline functions:
 *   wb_ring_view()          [any non-real-time thread] validate a mapped header
 *   wb_ring_writer_alive()  [audio-thread]             writer_alive flag and a fresh heartbeat
 *   wb_ring_read()          [audio-thread]             get indices → copy → zero-fill → publish
 * No allocation, no lock, no system call: the caller maps the segment and passes the clock.
 *
 * Little-endian hosts only (the ring is little-endian and fields are accessed natively). Fields
 * are accessed with GCC/Clang __atomic builtins: write_index is loaded with acquire (the audio it
 * publishes is visible after it) and read_index is stored with release (we are done with the
 * frames before it); every other field is a relaxed load or store of an aligned word.
 */
#ifndef WB_RING_H
#define WB_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "ring protocol v1 is little-endian; wb_ring.h reads fields natively"
#endif

/* Identity. */
#define WB_MAGIC "WBRING1"            /* plus the terminating NUL: the 8 bytes at WB_OFF_MAGIC */
#define WB_VERSION 1u
#define WB_DATA_OFFSET 4096u          /* the audio starts here; the header is this long */
#define WB_HEADER_SIZE WB_DATA_OFFSET

/* Field offsets (bytes). */
#define WB_OFF_MAGIC 0                /* u8[8], written last at creation */
#define WB_OFF_VERSION 8              /* u32 */
#define WB_OFF_DATA_OFFSET 12         /* u32 */
#define WB_OFF_SAMPLE_RATE 16         /* u32, Hz of the data */
#define WB_OFF_CHANNELS 20            /* u32, interleaved float32 */
#define WB_OFF_CAPACITY 24            /* u64, frames, a power of two */
#define WB_OFF_EPOCH 32               /* u64, bumped when the writer resets the stream */
#define WB_OFF_WRITER_PID 40          /* u32 */
#define WB_OFF_FLAGS 44               /* u32, WB_FLAG_* */
#define WB_OFF_WRITER_HEARTBEAT 48    /* u64, CLOCK_MONOTONIC ns */
#define WB_OFF_WRITE_INDEX 64         /* u64, frames ever published (own cache line) */
#define WB_OFF_READ_INDEX 128         /* u64, frames ever consumed (own cache line), reader */
#define WB_OFF_UNDERRUN 136           /* u64, zero frames emitted while playing, reader */
#define WB_OFF_READER_HEARTBEAT 144   /* u64, CLOCK_MONOTONIC ns, reader */
#define WB_OFF_READER_RATE 152        /* u32, the host's rate (0 = unknown), reader */
#define WB_OFF_READER_BLOCK 156       /* u32, the largest block the host asked for, reader */
#define WB_OFF_READER_PID 160         /* u32, reader */
#define WB_OFF_META_SEQ 192           /* u32 seqlock, odd while the metadata is written */
#define WB_OFF_META_LEN 196           /* u32 */
#define WB_OFF_META 200               /* msgpack bytes */
#define WB_META_MAX (WB_DATA_OFFSET - WB_OFF_META)

/* Bits of the flags field. */
#define WB_FLAG_WRITER_ALIVE (1u << 0)
#define WB_FLAG_PLAYING (1u << 1)      /* a job is producing audio */

/* Bounds a reader checks before it trusts a header. */
#define WB_MAX_CHANNELS 8u
#define WB_MAX_CAPACITY (1ull << 24)   /* frames */

/* C readers only (the Python reader uses the same 1 s): a writer heartbeat older than this
 * means the writer is dead, whatever its flags say. */
#define WB_WRITER_STALE_NS 1000000000LL

_Static_assert(WB_OFF_WRITE_INDEX % 64 == 0 && WB_OFF_READ_INDEX % 64 == 0
               && WB_OFF_READ_INDEX - WB_OFF_WRITE_INDEX >= 64, "each index owns a cache line");
_Static_assert(WB_OFF_CAPACITY % 8 == 0 && WB_OFF_EPOCH % 8 == 0 && WB_OFF_WRITER_HEARTBEAT % 8 == 0
               && WB_OFF_UNDERRUN % 8 == 0 && WB_OFF_READER_HEARTBEAT % 8 == 0, "u64 fields are aligned");
_Static_assert(sizeof WB_MAGIC == 8, "the magic is 8 bytes with its NUL");

#define WB_U64(base, off) ((uint64_t*)((uint8_t*)(base) + (off)))
#define WB_U32(base, off) ((uint32_t*)((uint8_t*)(base) + (off)))

/* A validated mapping of one ring. Immutable once handed to the audio thread. */
typedef struct {
    uint8_t* base;          /* the mapping, WB_DATA_OFFSET + capacity × channels × 4 bytes or more */
    const float* data;      /* base + WB_DATA_OFFSET */
    uint64_t capacity;      /* frames, a power of two */
    uint32_t channels;
} WbRing;

/* The reader's own state, kept by the audio thread between blocks. */
typedef struct {
    uint64_t pos;           /* our read_index */
    uint64_t epoch;         /* the epoch pos belongs to */
    uint32_t block_max;     /* the largest n published as reader_block_frames */
    bool resync;            /* set on a new mapping: the next read picks its start */
} WbCursor;

/* [any non-real-time thread] Check a mapped segment of `size` bytes: magic (loaded with acquire:
 * the writer stores it last), version, data offset, a non-zero rate, 1..WB_MAX_CHANNELS
 * channels, a power-of-two capacity up to WB_MAX_CAPACITY, and a size that holds the audio.
 * Fills *out and returns true, or returns false (a half-created, foreign or hostile segment). */
static inline bool wb_ring_view(uint8_t* base, size_t size, WbRing* out)
{
    if (size < WB_DATA_OFFSET) return false;
    const uint64_t magic = __atomic_load_n(WB_U64(base, WB_OFF_MAGIC), __ATOMIC_ACQUIRE);
    const uint32_t channels = *WB_U32(base, WB_OFF_CHANNELS);
    const uint64_t capacity = *WB_U64(base, WB_OFF_CAPACITY);
    const uint32_t rate = *WB_U32(base, WB_OFF_SAMPLE_RATE);
    if (memcmp(&magic, WB_MAGIC, 8) != 0 || *WB_U32(base, WB_OFF_VERSION) != WB_VERSION
        || *WB_U32(base, WB_OFF_DATA_OFFSET) != WB_DATA_OFFSET || rate == 0
        || channels < 1 || channels > WB_MAX_CHANNELS
        || capacity == 0 || (capacity & (capacity - 1)) != 0 || capacity > WB_MAX_CAPACITY
        || size < WB_DATA_OFFSET + capacity * channels * sizeof(float))
        return false;
    *out = (WbRing){ base, (const float*)(base + WB_DATA_OFFSET), capacity, channels };
    return true;
}

/* [audio-thread] writer_alive is set and the writer's heartbeat is at most WB_WRITER_STALE_NS
 * old at `now` (CLOCK_MONOTONIC ns). */
static inline bool wb_ring_writer_alive(const WbRing* ring, int64_t now)
{
    const uint32_t flags = __atomic_load_n(WB_U32(ring->base, WB_OFF_FLAGS), __ATOMIC_RELAXED);
    const int64_t hb = (int64_t)__atomic_load_n(WB_U64(ring->base, WB_OFF_WRITER_HEARTBEAT), __ATOMIC_RELAXED);
    return (flags & WB_FLAG_WRITER_ALIVE) && now - hb <= WB_WRITER_STALE_NS;
}

/* Frames [0, k) of interleaved `src` into two outputs: mono goes to both, otherwise channels
 * 0 and 1. */
static inline void wb_ring_copy_frames(const float* src, uint32_t channels, float* l, float* r, uint32_t k)
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

/* [audio-thread] The read path: `n` frames into `l` and `r`. Returns the frames of real audio
 * (the rest is zero-filled).
 *   get:     write_index (acquire) and epoch; on a resync, an epoch change, write_index behind
 *            us (a splice we overtook) or more than a ring ahead, restart at write_index — except
 *            right after a new mapping (cur->resync), which continues at the published
 *            read_index when that is valid (nothing buffered is thrown away, no false underrun)
 *   copy:    min(avail, n) frames, across the wrap
 *   fill:    zeros for the shortfall, added to underrun_frames while a live writer says
 *            playing (a dead writer's stale flag counts nothing)
 *   publish: read_index (release), reader_heartbeat_ns = now, and reader_block_frames when n
 *            is the largest block so far */
static inline uint32_t wb_ring_read(const WbRing* ring, WbCursor* cur, float* l, float* r, uint32_t n,
                                    int64_t now)
{
    uint8_t* b = ring->base;
    const uint64_t w = __atomic_load_n(WB_U64(b, WB_OFF_WRITE_INDEX), __ATOMIC_ACQUIRE);
    const uint64_t epoch = __atomic_load_n(WB_U64(b, WB_OFF_EPOCH), __ATOMIC_RELAXED);
    uint64_t pos = cur->pos;
    if (cur->resync) {
        const uint64_t ri = __atomic_load_n(WB_U64(b, WB_OFF_READ_INDEX), __ATOMIC_RELAXED);
        cur->resync = false;
        cur->epoch = epoch;
        pos = (w >= ri && w - ri <= ring->capacity) ? ri : w;
    } else if (epoch != cur->epoch || w < pos || w - pos > ring->capacity) {
        cur->epoch = epoch;
        pos = w;
    }
    const uint32_t k = (w - pos < n) ? (uint32_t)(w - pos) : n;
    if (k) {
        const uint64_t i0 = pos & (ring->capacity - 1);
        const uint64_t to_end = ring->capacity - i0;
        const uint32_t first = to_end < k ? (uint32_t)to_end : k;
        wb_ring_copy_frames(ring->data + i0 * ring->channels, ring->channels, l, r, first);
        wb_ring_copy_frames(ring->data, ring->channels, l + first, r + first, k - first);
    }
    if (k < n) {
        memset(l + k, 0, (n - k) * sizeof(float));
        memset(r + k, 0, (n - k) * sizeof(float));
        if ((__atomic_load_n(WB_U32(b, WB_OFF_FLAGS), __ATOMIC_RELAXED) & WB_FLAG_PLAYING)
            && wb_ring_writer_alive(ring, now)) {
            uint64_t* u = WB_U64(b, WB_OFF_UNDERRUN);   /* only the reader writes it */
            __atomic_store_n(u, __atomic_load_n(u, __ATOMIC_RELAXED) + (n - k), __ATOMIC_RELAXED);
        }
    }
    pos += k;
    cur->pos = pos;
    __atomic_store_n(WB_U64(b, WB_OFF_READ_INDEX), pos, __ATOMIC_RELEASE);
    __atomic_store_n(WB_U64(b, WB_OFF_READER_HEARTBEAT), (uint64_t)now, __ATOMIC_RELAXED);
    if (n > cur->block_max) {
        cur->block_max = n;
        __atomic_store_n(WB_U32(b, WB_OFF_READER_BLOCK), n, __ATOMIC_RELAXED);
    }
    return k;
}

#endif /* WB_RING_H */
