/*
 * rocwasm.h — a thin C layer over the bindings wit-bindgen generates for the
 * rocwasm:plugin@0.3.2 WIT worlds (`wit/`): a reader of the packed batch
 * (every column read in place, by the ids of rocwasm_schema.h), typed views
 * over its kernel dispatch columns, a summary-table builder with owned
 * strings, number formatting without printf, and small wrappers for
 * logging, config, names, column selection and tracing setup.
 *
 * Include it instead of the generated header. It includes
 * "analysis_plugin.h" (the world `analysis-plugin`), "transform_plugin.h"
 * when ROCWASM_WORLD_TRANSFORM is defined before it, or
 * "mergeable_analysis_plugin.h" when ROCWASM_WORLD_MERGEABLE is (the world
 * `mergeable-analysis-plugin`, WIT 0.3.1: an analysis whose results merge;
 * set `world = "mergeable-analysis-plugin"` in rocwasm-plugin.toml and
 * implement the two exports the generated header declares for it,
 * exports_rocwasm_plugin_merge_take_partial (your state as malloc'ed bytes,
 * in place of fini) and exports_rocwasm_plugin_merge_merge_partial (another
 * instance's bytes folded in: free them with rocwasm_bytes_free); `rocwasm
 * plugin test` checks that any split of a trace merges to one pass's tables).
 * Everything here is `static inline`: no library to link, nothing to
 * initialise.
 *
 * MEMORY OWNERSHIP ACROSS THE BOUNDARY (the canonical ABI's rules, as the C
 * generator implements them):
 *
 *  1. Arguments of your exported functions belong to YOU. The host allocated
 *     them in your memory (through the generated `cabi_realloc`); free them
 *     with the generated `*_free` function once you are done, or copy what
 *     you keep first:
 *       configure(info)           -> exports_rocwasm_plugin_lifecycle_tool_info_free(info)
 *       deliver_batch(info,batch) -> rocwasm_bytes_free(batch) (the packed buffer) and
 *                                    exports_rocwasm_plugin_analysis_delivery_info_free(info)
 *                                    (`info->process` holds the host name and job strings)
 *       on_callback(record, ..)   -> exports_rocwasm_plugin_analysis_callback_record_free(record)
 *       on_external_correlation_request(req): plain numbers, nothing to free
 *     A batch you forget to free leaks its bytes until the stage's memory
 *     cap traps the plugin. rocwasm_batch_t and rocwasm_dispatches_t below
 *     only point into the buffer: read them before freeing it.
 *
 *  2. What your exports RETURN (the `fini` tables, an `init` error string)
 *     is freed by the generated code after the host has copied it (the
 *     `cabi_post_*` functions call free()). So every returned string and
 *     list must come from malloc: never return a string literal or a
 *     stack buffer (`analysis_plugin_string_set(&err, "bad")` in `init`
 *     corrupts the heap; use rocwasm_string_dup). rocwasm_table_* and
 *     rocwasm_error below allocate for you.
 *
 *  3. Arguments you PASS to imports (a log message, a column name) stay
 *     yours: the host copies them during the call. Borrowing a literal with
 *     `*_string_set` is fine there (rocwasm_log does that).
 *
 *  4. What imports RETURN to you (`config.get`'s string, `names` lists,
 *     `kernel-names`) is yours: free it with the matching `*_free`.
 *
 * NO WASI: the plugin's imports must be the world's interfaces only. Do not
 * call printf, puts, fopen, getenv or exit: they import
 * `wasi_snapshot_preview1` functions and the build refuses the module. Log
 * with rocwasm_log, format numbers with rocwasm_fmt_*, trap with
 * __builtin_trap(). malloc, free, memcpy, memcmp, strlen, qsort are fine.
 */
#ifndef ROCWASM_H
#define ROCWASM_H

#if defined(ROCWASM_WORLD_TRANSFORM)
#include "transform_plugin.h"
#define ROCWASM_W(x) transform_plugin_##x
#elif defined(ROCWASM_WORLD_MERGEABLE)
#include "mergeable_analysis_plugin.h"
#define ROCWASM_W(x) mergeable_analysis_plugin_##x
#else
#include "analysis_plugin.h"
#define ROCWASM_W(x) analysis_plugin_##x
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rocwasm_schema.h"

/* The world's generic types under world-independent names. */
typedef ROCWASM_W(string_t) rocwasm_string_t;
typedef ROCWASM_W(list_string_t) rocwasm_list_string_t;
typedef ROCWASM_W(list_list_string_t) rocwasm_list_list_string_t;
typedef ROCWASM_W(list_u64_t) rocwasm_list_u64_t;
typedef ROCWASM_W(list_u8_t) rocwasm_bytes_t;
typedef rocwasm_plugin_types_summary_table_t rocwasm_summary_table_t;
typedef rocwasm_plugin_types_status_t rocwasm_status_t;

/* ------------------------------------------------------------------ memory */

/* malloc that traps instead of returning NULL: running out of memory means
 * the stage's memory cap was reached, and the host contains the trap. */
static inline void *rocwasm_alloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) __builtin_trap();
    return p;
}

static inline void *rocwasm_realloc(void *old, size_t bytes) {
    void *p = realloc(old, bytes ? bytes : 1);
    if (!p) __builtin_trap();
    return p;
}

/* Memory for a list or string that may be handed back to the host: `count`
 * elements of `size` bytes. An empty one gets the dangling pointer `align`,
 * as the generated cabi_realloc does, because the generated *_free and
 * post-return functions free only non-empty lists and strings. */
static inline void *rocwasm_alloc_list(size_t count, size_t size, size_t align) {
    if (!count) return (void *)align;
    return rocwasm_alloc(count * size);
}

/* A malloc'ed copy of `s` (n bytes) as a WIT string: safe to return. */
static inline rocwasm_string_t rocwasm_string_dup_n(const char *s, size_t n) {
    rocwasm_string_t out;
    out.ptr = (uint8_t *)rocwasm_alloc_list(n, 1, 1);
    if (n) memcpy(out.ptr, s, n);
    out.len = n;
    return out;
}

static inline rocwasm_string_t rocwasm_string_dup(const char *s) {
    return rocwasm_string_dup_n(s, strlen(s));
}

/* A borrowed view of a NUL-terminated string, for import ARGUMENTS only. */
static inline rocwasm_string_t rocwasm_string_borrow(const char *s) {
    rocwasm_string_t out;
    out.ptr = (uint8_t *)s;
    out.len = strlen(s);
    return out;
}

static inline bool rocwasm_string_eq(const rocwasm_string_t *a, const char *b) {
    size_t n = strlen(b);
    return a->len == n && memcmp(a->ptr, b, n) == 0;
}

/* Sets an `init` error (a malloc'ed copy, freed by the generated code) and
 * returns false, for `return rocwasm_error(err, "...");`. */
static inline bool rocwasm_error(rocwasm_string_t *err, const char *message) {
    *err = rocwasm_string_dup(message);
    return false;
}

/* -------------------------------------------------------- number formatting */

/* Decimal digits of `v` into `buf` (at least 21 bytes), NUL-terminated;
 * returns the length. */
static inline size_t rocwasm_fmt_u64(char *buf, uint64_t v) {
    char tmp[20];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
    buf[n] = 0;
    return n;
}

/* `scaled` / 10^decimals with exactly `decimals` digits after the point:
 * (4217, 2) -> "42.17". `buf` needs 23 bytes. Returns the length. */
static inline size_t rocwasm_fmt_fixed(char *buf, uint64_t scaled, unsigned decimals) {
    uint64_t unit = 1;
    for (unsigned i = 0; i < decimals; i++) unit *= 10;
    size_t n = rocwasm_fmt_u64(buf, scaled / unit);
    if (decimals) {
        uint64_t frac = scaled % unit;
        buf[n++] = '.';
        for (unsigned i = decimals; i-- > 0;) {
            buf[n + i] = (char)('0' + frac % 10);
            frac /= 10;
        }
        n += decimals;
        buf[n] = 0;
    }
    return n;
}

/* 100 * part / whole rounded to 2 decimals, as "42.17" (0 when whole is 0).
 * Exact in integers for part <= whole < 1.8e15 (three weeks in ns). */
static inline size_t rocwasm_fmt_percent(char *buf, uint64_t part, uint64_t whole) {
    uint64_t hundredths = whole ? (part * 10000 + whole / 2) / whole : 0;
    return rocwasm_fmt_fixed(buf, hundredths, 2);
}

/* ----------------------------------------------------------------- host calls */

static inline void rocwasm_log(rocwasm_plugin_types_log_level_t level, const char *message) {
    rocwasm_string_t m = rocwasm_string_borrow(message);
    rocwasm_plugin_log_log(level, &m);
}

#define ROCWASM_INFO ROCWASM_PLUGIN_TYPES_LOG_LEVEL_INFO
#define ROCWASM_WARN ROCWASM_PLUGIN_TYPES_LOG_LEVEL_WARN
#define ROCWASM_ERROR ROCWASM_PLUGIN_TYPES_LOG_LEVEL_ERROR

/* The stage's config value for `key` as a malloc'ed NUL-terminated string
 * (free() it), or NULL when the key is absent. */
static inline char *rocwasm_config_get(const char *key) {
    rocwasm_string_t k = rocwasm_string_borrow(key);
    rocwasm_string_t value;
    if (!rocwasm_plugin_config_get(&k, &value)) return NULL;
    char *out = (char *)rocwasm_alloc(value.len + 1);
    memcpy(out, value.ptr, value.len);
    out[value.len] = 0;
    ROCWASM_W(string_free)(&value);
    return out;
}

/* The buffer-tracing kind named `name` (e.g. "KERNEL_DISPATCH"), asked from
 * the host's `names` interface rather than hard-coded. */
static inline bool rocwasm_buffer_kind(const char *name, uint32_t *kind) {
    rocwasm_plugin_names_list_buffer_kind_t kinds;
    rocwasm_plugin_names_buffer_kinds(&kinds);
    bool found = false;
    for (size_t i = 0; i < kinds.len && !found; i++) {
        rocwasm_string_t n;
        if (rocwasm_plugin_names_buffer_kind_name(kinds.ptr[i], &n)) {
            if (rocwasm_string_eq(&n, name)) {
                *kind = kinds.ptr[i];
                found = true;
            }
            ROCWASM_W(string_free)(&n);
        }
    }
    rocwasm_plugin_names_list_buffer_kind_free(&kinds);
    return found;
}

/* Frees a byte list the host handed over (deliver_batch's batch). */
static inline void rocwasm_bytes_free(rocwasm_bytes_t *bytes) {
    ROCWASM_W(list_u8_free)(bytes);
}

/* delivery.select-columns: the host then sends only `columns` of `table`
 * (WIT names: "kernel-dispatches"; "start", "end", ...; an empty list: no
 * column of the table). Call in configure or init. */
static inline bool rocwasm_select_columns(const char *table, const char *const *columns,
                                          size_t count, rocwasm_status_t *err) {
    rocwasm_string_t t = rocwasm_string_borrow(table);
    rocwasm_string_t names[32];
    if (count > 32) {
        *err = ROCWASM_PLUGIN_TYPES_STATUS_INVALID_ARGUMENT;
        return false;
    }
    for (size_t i = 0; i < count; i++) names[i] = rocwasm_string_borrow(columns[i]);
    rocwasm_list_string_t list = {names, count};
    rocwasm_plugin_delivery_list_column_id_t ids;
    if (!rocwasm_plugin_delivery_select_columns(&t, &list, &ids, err)) return false;
    rocwasm_plugin_delivery_list_column_id_free(&ids);
    return true;
}

/* Receives no column of any table but `table` (a WIT name), whose
 * selection is left as it is: for a plugin that reads one table. A table
 * the host does not know (an older host's INVALID_ARGUMENT) is skipped. */
static inline bool rocwasm_receive_only(const char *table, rocwasm_status_t *err) {
    static const char *const TABLES[] = {"api-calls", "kernel-dispatches", "memory-copies",
                                         "memory-allocations", "scratch-memory", "retirements",
                                         "runtime-initializations"};
    for (size_t i = 0; i < sizeof TABLES / sizeof *TABLES; i++) {
        if (strcmp(TABLES[i], table) == 0) continue;
        if (!rocwasm_select_columns(TABLES[i], NULL, 0, err) &&
            *err != ROCWASM_PLUGIN_TYPES_STATUS_INVALID_ARGUMENT)
            return false;
    }
    return true;
}

#if !defined(ROCWASM_WORLD_TRANSFORM)

/* A context of the plugin's own, one lossless 1 MiB buffer delivering at 7/8,
 * buffer tracing of `kinds`, context started: what a stage without
 * `domains` sets up in `init`. */
static inline bool rocwasm_trace_buffers(const uint32_t *kinds, size_t count,
                                         rocwasm_status_t *err) {
    uint64_t context, buffer;
    if (!rocwasm_plugin_profiler_create_context(&context, err)) return false;
    if (!rocwasm_plugin_profiler_create_buffer(context, 1u << 20, (1u << 20) / 8 * 7,
                                               ROCWASM_PLUGIN_TYPES_BUFFER_POLICY_LOSSLESS,
                                               &buffer, err))
        return false;
    for (size_t i = 0; i < count; i++) {
        rocwasm_plugin_profiler_list_operation_t all = {NULL, 0};
        if (!rocwasm_plugin_profiler_configure_buffer_tracing(context, kinds[i], &all, buffer, err))
            return false;
    }
    return rocwasm_plugin_profiler_start_context(context, err);
}
#endif

/* The host's answer to every output call of a stage the chain grants no
 * output directory (WIT `output`): the chain wants no files from it. */
#define ROCWASM_OUTPUT_NOT_GRANTED "no output directory is granted to this plugin"

/* Writes `bytes` to the output file `name` (needs the stage's output grant).
 * Returns false when nothing was written: without a grant (the chain asked
 * for the summary tables only) one info-level line per instance says so;
 * any other refusal is logged as a warning with the host's reason. Meant
 * for a file that holds what the plugin also returns as a summary table,
 * as the stock plugins write theirs. */
static inline bool rocwasm_output_write(const char *name, const uint8_t *bytes, size_t len) {
    static bool not_granted = false;
    if (not_granted) return false;
    rocwasm_string_t n = rocwasm_string_borrow(name);
    ROCWASM_W(list_u8_t) contents = {(uint8_t *)bytes, len};
    rocwasm_string_t err;
    if (rocwasm_plugin_output_write(&n, &contents, &err)) return true;
    size_t ng = sizeof ROCWASM_OUTPUT_NOT_GRANTED - 1;
    if (err.len == ng && memcmp(err.ptr, ROCWASM_OUTPUT_NOT_GRANTED, ng) == 0) {
        not_granted = true;
        rocwasm_log(ROCWASM_INFO, "no output file written: the chain grants this stage no "
                                  "output directory (its table is in the summary)");
        ROCWASM_W(string_free)(&err);
        return false;
    }
    char prefix[] = "cannot write output file: ";
    size_t p = sizeof prefix - 1;
    char *msg = (char *)rocwasm_alloc(p + err.len + 1);
    memcpy(msg, prefix, p);
    memcpy(msg + p, err.ptr, err.len);
    msg[p + err.len] = 0;
    rocwasm_log(ROCWASM_WARN, msg);
    free(msg);
    ROCWASM_W(string_free)(&err);
    return false;
}

/* ------------------------------------------------------------ packed batch */

/* A packed batch (deliver_batch's bytes), checked once by rocwasm_batch_read:
 * "RWB3", format 1, a column count, then one 16-byte entry per column (table
 * id, column id, element width, rows, offset) and the values, little-endian,
 * each column at an 8-aligned offset. The ids are rocwasm_schema.h's; a
 * column of an id this header does not know (a newer host's) is skipped by
 * whoever does not ask for it. The view borrows the bytes. */
typedef struct rocwasm_batch {
    const uint8_t *bytes;
    size_t len;
    uint16_t count;
} rocwasm_batch_t;

static inline uint16_t rocwasm_le16_(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t rocwasm_le32_(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Checks the header and every entry against the buffer; false when it is
 * not a packed batch of format 1 (then `out` holds no column). */
static inline bool rocwasm_batch_read(const rocwasm_bytes_t *bytes, rocwasm_batch_t *out) {
    out->bytes = bytes->ptr;
    out->len = bytes->len;
    out->count = 0;
    const uint8_t *b = bytes->ptr;
    if (bytes->len < 8 || memcmp(b, "RWB3", 4) != 0 || rocwasm_le16_(b + 4) != 1) return false;
    uint16_t count = rocwasm_le16_(b + 6);
    size_t header = 8 + 16 * (size_t)count;
    if (bytes->len < header) return false;
    for (uint16_t i = 0; i < count; i++) {
        const uint8_t *e = b + 8 + 16 * (size_t)i;
        uint64_t end = (uint64_t)rocwasm_le32_(e + 12) + (uint64_t)rocwasm_le32_(e + 8) * e[4];
        if ((e[4] != 4 && e[4] != 8) || rocwasm_le32_(e + 12) % 8 || rocwasm_le32_(e + 12) < header ||
            end > bytes->len)
            return false;
    }
    out->count = count;
    return true;
}

/* The values of column `column` of table `table` (ids from
 * rocwasm_schema.h), `rows` set to their number; NULL (and rows 0) when the
 * batch does not hold the column, or holds it with another element width.
 * Reads in place: wasm loads need no alignment. */
static inline const void *rocwasm_batch_column_(const rocwasm_batch_t *b, uint16_t table,
                                                uint16_t column, uint8_t width, size_t *rows) {
    *rows = 0;
    for (uint16_t i = 0; i < b->count; i++) {
        const uint8_t *e = b->bytes + 8 + 16 * (size_t)i;
        if (rocwasm_le16_(e) == table && rocwasm_le16_(e + 2) == column) {
            if (e[4] != width) return NULL;
            *rows = rocwasm_le32_(e + 8);
            return *rows ? b->bytes + rocwasm_le32_(e + 12) : NULL;
        }
    }
    return NULL;
}

static inline const uint64_t *rocwasm_batch_u64(const rocwasm_batch_t *b, uint16_t table,
                                                uint16_t column, size_t *rows) {
    return (const uint64_t *)rocwasm_batch_column_(b, table, column, 8, rows);
}

static inline const uint32_t *rocwasm_batch_u32(const rocwasm_batch_t *b, uint16_t table,
                                                uint16_t column, size_t *rows) {
    return (const uint32_t *)rocwasm_batch_column_(b, table, column, 4, rows);
}

/* Rows of table `table`: its longest column in the batch (0 when absent). */
static inline size_t rocwasm_batch_rows(const rocwasm_batch_t *b, uint16_t table) {
    size_t rows = 0;
    for (uint16_t i = 0; i < b->count; i++) {
        const uint8_t *e = b->bytes + 8 + 16 * (size_t)i;
        if (rocwasm_le16_(e) == table && rocwasm_le32_(e + 8) > rows) rows = rocwasm_le32_(e + 8);
    }
    return rows;
}

/* ---------------------------------------------------- kernel dispatch columns */

/* Typed columns of a batch's kernel dispatches. A column pointer is NULL
 * when the column did not arrive (a column the plugin did not select is not
 * sent); `rows` is the longest column's length. Read cells with
 * ROCWASM_CELL(col, i), which gives 0 for a missing column, or index the
 * pointer directly after checking it once per batch. The view borrows the
 * batch's bytes: use it before rocwasm_bytes_free. */
typedef struct rocwasm_dispatches {
    size_t rows;
    const uint64_t *correlation_id;
    const uint64_t *external_correlation_id;
    const uint64_t *thread_id;
    const uint64_t *start;
    const uint64_t *end;
    const uint64_t *agent_id;
    const uint64_t *queue_id;
    const uint64_t *stream_id;
    const uint64_t *kernel_id;
    const uint64_t *dispatch_id;
    const uint32_t *private_segment_size;
    const uint32_t *group_segment_size;
    const uint32_t *workgroup_x, *workgroup_y, *workgroup_z;
    const uint32_t *grid_x, *grid_y, *grid_z;
} rocwasm_dispatches_t;

#define ROCWASM_CELL(col, i) ((col) ? (col)[i] : 0)

static inline rocwasm_dispatches_t rocwasm_dispatches(const rocwasm_batch_t *batch) {
    rocwasm_dispatches_t v;
    size_t rows = rocwasm_batch_rows(batch, ROCWASM_KERNEL_DISPATCHES), n;
    v.rows = rows;
#define ROCWASM_COL_(c, C, w)                                                                    \
    v.c = rocwasm_batch_u##w(batch, ROCWASM_KERNEL_DISPATCHES, ROCWASM_KERNEL_DISPATCHES_##C, &n); \
    if (n != rows) v.c = NULL;
    ROCWASM_COL_(correlation_id, CORRELATION_ID, 64)
    ROCWASM_COL_(external_correlation_id, EXTERNAL_CORRELATION_ID, 64)
    ROCWASM_COL_(thread_id, THREAD_ID, 64)
    ROCWASM_COL_(start, START, 64)
    ROCWASM_COL_(end, END, 64)
    ROCWASM_COL_(agent_id, AGENT_ID, 64)
    ROCWASM_COL_(queue_id, QUEUE_ID, 64)
    ROCWASM_COL_(stream_id, STREAM_ID, 64)
    ROCWASM_COL_(kernel_id, KERNEL_ID, 64)
    ROCWASM_COL_(dispatch_id, DISPATCH_ID, 64)
    ROCWASM_COL_(private_segment_size, PRIVATE_SEGMENT_SIZE, 32)
    ROCWASM_COL_(group_segment_size, GROUP_SEGMENT_SIZE, 32)
    ROCWASM_COL_(workgroup_x, WORKGROUP_X, 32)
    ROCWASM_COL_(workgroup_y, WORKGROUP_Y, 32)
    ROCWASM_COL_(workgroup_z, WORKGROUP_Z, 32)
    ROCWASM_COL_(grid_x, GRID_X, 32)
    ROCWASM_COL_(grid_y, GRID_Y, 32)
    ROCWASM_COL_(grid_z, GRID_Z, 32)
#undef ROCWASM_COL_
    return v;
}

/* ------------------------------------------------------------ summary tables */

/* Builds one summary table row by row. Every string is a malloc'ed copy, so
 * the finished table can be returned from `fini` (the generated code frees
 * it). Usage:
 *
 *   rocwasm_table_t t;
 *   rocwasm_table_init(&t, "Title", (const char *[]){"Name", "Count"}, 2);
 *   rocwasm_table_row(&t);
 *   rocwasm_table_cell(&t, "gemm");
 *   rocwasm_table_cell_u64(&t, 42);
 *   rocwasm_tables_push(ret, &t);            // ret: fini's out-parameter
 *
 * A row with fewer cells than columns is padded with empty strings when the
 * next row starts or the table is pushed; extra cells trap. */
typedef struct rocwasm_table {
    rocwasm_summary_table_t table;
    size_t rows_cap;
} rocwasm_table_t;

static inline void rocwasm_table_init(rocwasm_table_t *t, const char *title,
                                      const char *const *columns, size_t count) {
    t->table.title = rocwasm_string_dup(title);
    t->table.columns.ptr = (rocwasm_string_t *)rocwasm_alloc_list(
        count, sizeof(rocwasm_string_t), _Alignof(rocwasm_string_t));
    t->table.columns.len = count;
    for (size_t i = 0; i < count; i++) t->table.columns.ptr[i] = rocwasm_string_dup(columns[i]);
    t->table.rows.ptr = NULL;
    t->table.rows.len = 0;
    t->rows_cap = 0;
}

static inline void rocwasm_table_pad_(rocwasm_table_t *t) {
    if (!t->table.rows.len) return;
    rocwasm_list_string_t *row = &t->table.rows.ptr[t->table.rows.len - 1];
    while (row->len < t->table.columns.len) row->ptr[row->len++] = rocwasm_string_dup_n("", 0);
}

static inline void rocwasm_table_row(rocwasm_table_t *t) {
    rocwasm_table_pad_(t);
    if (t->table.rows.len == t->rows_cap) {
        t->rows_cap = t->rows_cap ? 2 * t->rows_cap : 8;
        t->table.rows.ptr = (rocwasm_list_string_t *)rocwasm_realloc(
            t->table.rows.ptr, t->rows_cap * sizeof(rocwasm_list_string_t));
    }
    rocwasm_list_string_t *row = &t->table.rows.ptr[t->table.rows.len++];
    row->ptr = (rocwasm_string_t *)rocwasm_alloc_list(
        t->table.columns.len, sizeof(rocwasm_string_t), _Alignof(rocwasm_string_t));
    row->len = 0;
}

static inline void rocwasm_table_cell_n(rocwasm_table_t *t, const char *text, size_t n) {
    if (!t->table.rows.len) __builtin_trap(); /* rocwasm_table_row first */
    rocwasm_list_string_t *row = &t->table.rows.ptr[t->table.rows.len - 1];
    if (row->len == t->table.columns.len) __builtin_trap(); /* more cells than columns */
    row->ptr[row->len++] = rocwasm_string_dup_n(text, n);
}

static inline void rocwasm_table_cell(rocwasm_table_t *t, const char *text) {
    rocwasm_table_cell_n(t, text, strlen(text));
}

static inline void rocwasm_table_cell_u64(rocwasm_table_t *t, uint64_t v) {
    char buf[21];
    rocwasm_table_cell_n(t, buf, rocwasm_fmt_u64(buf, v));
}

/* 100 * part / whole with 2 decimals ("42.17"). */
static inline void rocwasm_table_cell_percent(rocwasm_table_t *t, uint64_t part, uint64_t whole) {
    char buf[23];
    rocwasm_table_cell_n(t, buf, rocwasm_fmt_percent(buf, part, whole));
}

/* The table as CSV (header and rows, cells quoted only when they contain a
 * comma, quote or newline); a malloc'ed buffer the caller frees. */
static inline uint8_t *rocwasm_table_csv(rocwasm_table_t *t, size_t *len) {
    rocwasm_table_pad_(t);
    size_t cap = 256, n = 0;
    uint8_t *out = (uint8_t *)rocwasm_alloc(cap);
#define ROCWASM_PUT_(byte)                                                   \
    do {                                                                     \
        if (n == cap) out = (uint8_t *)rocwasm_realloc(out, cap *= 2);       \
        out[n++] = (uint8_t)(byte);                                          \
    } while (0)
    for (size_t r = 0; r <= t->table.rows.len; r++) {
        const rocwasm_list_string_t *line = r ? &t->table.rows.ptr[r - 1] : &t->table.columns;
        for (size_t c = 0; c < line->len; c++) {
            const rocwasm_string_t *cell = &line->ptr[c];
            bool quote = memchr(cell->ptr, ',', cell->len) || memchr(cell->ptr, '"', cell->len) ||
                         memchr(cell->ptr, '\n', cell->len);
            if (c) ROCWASM_PUT_(',');
            if (quote) ROCWASM_PUT_('"');
            for (size_t i = 0; i < cell->len; i++) {
                if (cell->ptr[i] == '"') ROCWASM_PUT_('"');
                ROCWASM_PUT_(cell->ptr[i]);
            }
            if (quote) ROCWASM_PUT_('"');
        }
        ROCWASM_PUT_('\n');
    }
#undef ROCWASM_PUT_
    *len = n;
    return out;
}

/* `fini`'s result: a list of summary tables (both worlds export lifecycle). */
typedef exports_rocwasm_plugin_lifecycle_list_summary_table_t rocwasm_tables_t;

/* Appends the finished table to `fini`'s result list (start it as {NULL, 0});
 * the table's strings move into the list. */
static inline void rocwasm_tables_push(rocwasm_tables_t *tables, rocwasm_table_t *t) {
    rocwasm_table_pad_(t);
    tables->ptr = (rocwasm_summary_table_t *)rocwasm_realloc(
        tables->ptr, (tables->len + 1) * sizeof(rocwasm_summary_table_t));
    tables->ptr[tables->len++] = t->table;
    t->table.rows.ptr = NULL;
    t->table.rows.len = 0;
    t->table.columns.ptr = NULL;
    t->table.columns.len = 0;
    t->table.title.ptr = NULL;
    t->table.title.len = 0;
    t->rows_cap = 0;
}

#endif /* ROCWASM_H */
