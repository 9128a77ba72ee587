/*
 * bench_read.c — checks and times the LV2 stub's read path.
 *
 * Includes wavebridge_stub.c so it drives the plugin's own run() (clock_gettime, wb_ring.h's
 * wb_ring_read, control outputs, worker check) with no copy of the code; the writer side below
 * uses wb_ring.h's offsets. It creates its own rings in shared
 * memory (/wavebridge.bench-<pid>-<n>, never a daemon's slot; in $WAVEBRIDGE_SHM_DIR when that
 * is set, as the plugin reads it), attaches them with the plugin's ring_open(), and plays the writer itself by storing write_index / epoch / flags.
 *
 * First a self-check (block sizes 1..8193 across the wrap, mono and stereo, underrun
 * accounting only while playing, epoch and index resyncs); then the benchmark: each iteration
 * publishes 128 more frames and calls run(128), 4 blocks stay buffered; prints the median over
 * batches as c_read_us_per_block=<float>. Exit status 1 on any failed check.
 * Single-threaded, [instantiation] only; each segment is unlinked as soon as it is attached.
 */
#include "wavebridge_stub.c"

#define BLOCK 128u
#define BATCH 200000
#define BATCHES 9

typedef struct {
    char name[64];
    uint8_t* base;     /* the writer's view */
    size_t size;
    Stub* stub;
    float out[2][8193];
    float slot, buffered, underruns;
} Bench;

static int failures;

#define CHECK(cond, ...)                                     \
    do {                                                     \
        if (!(cond)) {                                       \
            fprintf(stderr, "bench_read: check failed: ");   \
            fprintf(stderr, __VA_ARGS__);                    \
            fputc('\n', stderr);                             \
            ++failures;                                      \
        }                                                    \
    } while (0)

/* Remove the bench's segment `name` from `dir` (NULL: /dev/shm through shm_unlink). */
static void bench_unlink(const char* dir, const char* name)
{
    char path[PATH_MAX];
    if (!dir)
        shm_unlink(name);
    else if (snprintf(path, sizeof path, "%s%s", dir, name) < (int)sizeof path)
        unlink(path);
}

/* A ring whose data holds its own float index: ring position q, channel c = q*channels + c. */
static bool bench_open(Bench* b, uint32_t channels, uint64_t capacity)
{
    static int count;
    const char* dir = private_dir(getenv("WAVEBRIDGE_SHM_DIR"));
    snprintf(b->name, sizeof b->name, "/wavebridge.bench-%d-%d", (int)getpid(), count++);
    b->size = WB_DATA_OFFSET + capacity * channels * sizeof(float);
    const int fd = ring_fd_open(dir, b->name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) return false;
    b->base = ftruncate(fd, (off_t)b->size) == 0
        ? mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    close(fd);
    if (b->base == MAP_FAILED) {
        bench_unlink(dir, b->name);
        b->base = NULL;
        return false;
    }
    uint8_t* w = b->base;
    *WB_U32(w, WB_OFF_VERSION) = WB_VERSION;
    *WB_U32(w, WB_OFF_DATA_OFFSET) = WB_DATA_OFFSET;
    *WB_U32(w, WB_OFF_SAMPLE_RATE) = 48000;
    *WB_U32(w, WB_OFF_CHANNELS) = channels;
    *WB_U64(w, WB_OFF_CAPACITY) = capacity;
    *WB_U64(w, WB_OFF_EPOCH) = 1;
    *WB_U32(w, WB_OFF_FLAGS) = WB_FLAG_WRITER_ALIVE;
    *WB_U64(w, WB_OFF_WRITER_HEARTBEAT) = (uint64_t)mono_ns();
    float* data = (float*)(w + WB_DATA_OFFSET);
    for (uint64_t i = 0; i < capacity * channels; ++i) data[i] = (float)i;
    uint64_t magic;
    memcpy(&magic, WB_MAGIC, 8);        /* 7 letters and the NUL */
    __atomic_store_n(WB_U64(w, WB_OFF_MAGIC), magic, __ATOMIC_RELEASE);   /* last, as the writer does */

    b->stub = (Stub*)instantiate(&descriptor, 48000.0, ".", NULL);   /* no worker */
    Ring* ring = b->stub ? ring_open(dir, b->name, 1, false, 0, 0, 48000) : NULL;
    bench_unlink(dir, b->name);   /* the bench's own segment; both mappings stay valid */
    if (!ring) return false;
    b->stub->ring = ring;
    b->slot = 1.0f;
    connect_port(b->stub, PORT_SLOT, &b->slot);
    connect_port(b->stub, PORT_OUT_L, b->out[0]);
    connect_port(b->stub, PORT_OUT_R, b->out[1]);
    connect_port(b->stub, PORT_BUFFERED_MS, &b->buffered);
    connect_port(b->stub, PORT_UNDERRUNS, &b->underruns);
    b->stub->cur.resync = true;   /* as activate() would; not called: it could attach slot 1 */
    return true;
}

static void bench_close(Bench* b)
{
    if (b->stub) cleanup(b->stub);
    if (b->base) munmap(b->base, b->size);
}

static void publish(Bench* b, uint64_t write_index)
{
    __atomic_store_n(WB_U64(b->base, WB_OFF_WRITE_INDEX), write_index, __ATOMIC_RELEASE);
}

static uint64_t field(Bench* b, int off) { return __atomic_load_n(WB_U64(b->base, off), __ATOMIC_RELAXED); }

/* out[c][i] must be frame `first + i` of the ring (wrapped), for i < k; zero after. */
static void expect_frames(Bench* b, uint32_t channels, uint64_t capacity, uint64_t first, uint32_t k,
                          uint32_t n, const char* what)
{
    for (uint32_t i = 0; i < n; ++i) {
        const uint64_t q = (first + i) & (capacity - 1);
        const float l = i < k ? (float)(q * channels) : 0.0f;
        const float r = i < k ? (float)(q * channels + (channels > 1)) : 0.0f;
        if (b->out[0][i] != l || b->out[1][i] != r) {
            CHECK(0, "%s: frame %u is (%g, %g), expected (%g, %g)", what, i, b->out[0][i],
                  b->out[1][i], l, r);
            return;
        }
    }
}

/* A new mapping continues at the published read_index when that is valid (what is buffered is
 * played, not thrown away), and starts at the live edge when it is not (more than a ring ahead).
 * Returns the write_index it left published. */
static uint64_t check_attach(Bench* b, uint32_t channels, uint64_t capacity)
{
    uint64_t w = 5000;
    publish(b, w);
    run(b->stub, 64);
    expect_frames(b, channels, capacity, 0, 64, 64, "after attach");
    CHECK(field(b, WB_OFF_READ_INDEX) == 64, "read_index %llu after attach",
          (unsigned long long)field(b, WB_OFF_READ_INDEX));
    CHECK(field(b, WB_OFF_UNDERRUN) == 0, "underruns counted while not playing");
    b->stub->cur.resync = true;
    __atomic_store_n(WB_U64(b->base, WB_OFF_READ_INDEX), 0, __ATOMIC_RELAXED);
    w = capacity + 100;
    publish(b, w);
    run(b->stub, 64);
    expect_frames(b, channels, capacity, 0, 0, 64, "attach past a stale read_index");
    CHECK(field(b, WB_OFF_READ_INDEX) == w, "read_index %llu after a stale attach",
          (unsigned long long)field(b, WB_OFF_READ_INDEX));
    return w;
}

/* Contiguous across the wrap for any block size, and the reader's fields published; leaves 3
 * frames buffered. Returns the read position. */
static uint64_t check_block_sizes(Bench* b, uint32_t channels, uint64_t capacity, uint64_t r)
{
    static const uint32_t sizes[] = { 1, 64, 65, 8192, 8193, 128, 7, 4096 };
    __atomic_store_n(WB_U32(b->base, WB_OFF_FLAGS), WB_FLAG_WRITER_ALIVE | WB_FLAG_PLAYING, __ATOMIC_RELAXED);
    for (int round = 0; round < 6; ++round)
        for (size_t s = 0; s < sizeof sizes / sizeof *sizes; ++s) {
            const uint32_t n = sizes[s];
            publish(b, r + n + 3);
            run(b->stub, n);
            expect_frames(b, channels, capacity, r, n, n, "block-size sweep");
            r += n;
            CHECK(field(b, WB_OFF_READ_INDEX) == r, "read_index not published");
        }
    CHECK(field(b, WB_OFF_UNDERRUN) == 0, "underruns with data available");
    CHECK(*WB_U32(b->base, WB_OFF_READER_BLOCK) == 8193, "reader_block_frames %u",
          *WB_U32(b->base, WB_OFF_READER_BLOCK));
    CHECK(*WB_U32(b->base, WB_OFF_READER_RATE) == 48000, "reader_sample_rate");
    CHECK(*WB_U32(b->base, WB_OFF_READER_PID) == (uint32_t)getpid(), "reader_pid");
    CHECK(b->buffered > 0.06f && b->buffered < 0.07f, "buffered_ms %g for 3 frames", b->buffered);
    return r;
}

/* Shortfall: copy what there is, zero-fill, count it while playing, and only then. Returns the
 * read position. */
static uint64_t check_shortfall(Bench* b, uint32_t channels, uint64_t capacity, uint64_t r)
{
    run(b->stub, 100);                   /* 3 frames left */
    expect_frames(b, channels, capacity, r, 3, 100, "shortfall");
    r += 3;
    CHECK(field(b, WB_OFF_UNDERRUN) == 97, "underrun_frames %llu, expected 97",
          (unsigned long long)field(b, WB_OFF_UNDERRUN));
    CHECK(b->underruns == 97.0f, "underruns output %g", b->underruns);
    __atomic_store_n(WB_U32(b->base, WB_OFF_FLAGS), WB_FLAG_WRITER_ALIVE, __ATOMIC_RELAXED);
    run(b->stub, 100);
    CHECK(field(b, WB_OFF_UNDERRUN) == 97, "underruns counted while not playing");
    /* a dead writer's stale `playing` flag (heartbeat > 1 s old) counts nothing either */
    __atomic_store_n(WB_U32(b->base, WB_OFF_FLAGS), WB_FLAG_WRITER_ALIVE | WB_FLAG_PLAYING, __ATOMIC_RELAXED);
    const uint64_t hb = field(b, WB_OFF_WRITER_HEARTBEAT);
    __atomic_store_n(WB_U64(b->base, WB_OFF_WRITER_HEARTBEAT), hb - 2000000000ull, __ATOMIC_RELAXED);
    run(b->stub, 100);
    CHECK(field(b, WB_OFF_UNDERRUN) == 97, "underruns counted for a dead writer");
    __atomic_store_n(WB_U64(b->base, WB_OFF_WRITER_HEARTBEAT), (uint64_t)mono_ns(), __ATOMIC_RELAXED);
    __atomic_store_n(WB_U32(b->base, WB_OFF_FLAGS), WB_FLAG_WRITER_ALIVE, __ATOMIC_RELAXED);
    return r;
}

/* Epoch bump: resync to write_index, the buffered frames are dropped; likewise a write_index
 * behind us (a splice overtaken) or more than a ring ahead. */
static void check_resync(Bench* b, uint64_t capacity, uint64_t r)
{
    uint64_t w = r + 500;
    publish(b, w);
    __atomic_store_n(WB_U64(b->base, WB_OFF_EPOCH), 2, __ATOMIC_RELAXED);
    run(b->stub, 64);
    CHECK(field(b, WB_OFF_READ_INDEX) == w, "no resync on epoch change");
    publish(b, w - 10);
    run(b->stub, 64);
    CHECK(field(b, WB_OFF_READ_INDEX) == w - 10, "no resync when write_index < read_index");
    w = w - 10 + capacity + 1;
    publish(b, w);
    run(b->stub, 64);
    CHECK(field(b, WB_OFF_READ_INDEX) == w, "no resync when write - read > capacity");
}

static void check_read_path(uint32_t channels)
{
    const uint64_t capacity = 1u << 14;
    Bench* b = calloc(1, sizeof(Bench));
    if (!b || !bench_open(b, channels, capacity)) {
        CHECK(0, "could not create a %u-channel ring", channels);
        free(b);
        return;
    }
    uint64_t r = check_attach(b, channels, capacity);
    r = check_block_sizes(b, channels, capacity, r);
    r = check_shortfall(b, channels, capacity, r);
    check_resync(b, capacity, r);
    bench_close(b);
    free(b);
}

static int cmp_double(const void* a, const void* b)
{
    const double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static double bench_read(void)
{
    Bench* b = calloc(1, sizeof(Bench));
    if (!b || !bench_open(b, 2, 1u << 16)) {
        CHECK(0, "could not create the benchmark ring");
        free(b);
        return 0.0;
    }
    uint64_t w = 1000;
    publish(b, w);
    run(b->stub, BLOCK);                  /* attach: continues at read_index 0 */
    __atomic_store_n(WB_U32(b->base, WB_OFF_FLAGS), WB_FLAG_WRITER_ALIVE | WB_FLAG_PLAYING, __ATOMIC_RELAXED);
    w += 4 * BLOCK;                       /* keep 4 blocks buffered, as a writer ahead would */
    double per_block[BATCHES];
    for (int k = 0; k < BATCHES; ++k) {
        const int64_t t0 = mono_ns();
        for (int i = 0; i < BATCH; ++i) {
            w += BLOCK;
            publish(b, w);
            run(b->stub, BLOCK);
        }
        per_block[k] = (double)(mono_ns() - t0) / 1000.0 / BATCH;
    }
    CHECK(field(b, WB_OFF_UNDERRUN) == 0, "underruns during the benchmark");
    bench_close(b);
    free(b);
    qsort(per_block, BATCHES, sizeof(double), cmp_double);
    printf("# median of %d batches x %d runs of %u stereo frames (min %.4f, max %.4f us)\n",
           BATCHES, BATCH, BLOCK, per_block[0], per_block[BATCHES - 1]);
    return per_block[BATCHES / 2];
}

int main(void)
{
    check_read_path(1);
    check_read_path(2);
    check_read_path(3);
    if (failures) return 1;
    printf("# read path checks passed (mono, stereo, 3 channels)\n");
    const double us = bench_read();
    if (failures) return 1;
    printf("c_read_us_per_block=%.4f\n", us);
    return 0;
}
