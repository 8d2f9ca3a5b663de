/*
 * queue-occupancy: how busy each GPU queue was, and where it sat idle.
 *
 * For every (agent, queue) pair seen in kernel dispatch records:
 *
 *   Dispatches     dispatches on the queue
 *   BusyNs         length of the union of their [start, end) intervals
 *                  (overlapping dispatches count once)
 *   SpanNs         first start to last end
 *   Occupancy      100 * BusyNs / SpanNs, two decimals
 *   IdleGaps       intervals inside the span where no dispatch ran (a gap
 *                  has a positive length: back-to-back dispatches, end ==
 *                  next start, leave none)
 *   IdleTotalNs    their total length (= SpanNs - BusyNs)
 *   MaxGapNs       the longest one (the earliest, on ties; 0 without gaps)
 *   MaxGapStartNs  when it began (the trace's clock; 0 without gaps)
 *   MaxGapBeforeCorrelationId  correlation id of the dispatch that ended
 *                  it (the earliest-starting one; on equal starts the
 *                  lowest id), to find it in kernel_trace.csv
 *
 * Rows are sorted by agent id, then queue id. Returned from `fini` as the
 * summary table "Queue occupancy", and written as `queue_occupancy.csv`
 * when the stage has an output grant (config key `file`; "" = no file).
 *
 * Records: kernel dispatches. With `domains` in the chain file the host
 * delivers those; without, `init` sets up KERNEL_DISPATCH tracing of its
 * own. Only agent-id, queue-id, start, end and correlation-id are read, and
 * `init` selects just those (40 of ~128 bytes per dispatch).
 *
 * Memory: each queue keeps the union of its busy intervals as a sorted list
 * of disjoint spans (24 bytes each). A dispatch that starts inside or at the
 * end of the queue's latest span extends it in O(1), the common case for
 * in-order queues; others are appended, and when the list fills it is sorted
 * and merged in place, so out-of-order records stay exact. A queue costs 24
 * bytes per idle gap, not per dispatch.
 *
 * No WASI: no stdio, no printf. See ../include/rocwasm.h.
 */
#include "rocwasm.h"

/* A maximal busy interval [start, end) and the correlation id of its first
 * dispatch (earliest start, then lowest id). */
typedef struct {
    uint64_t start, end, first_correlation;
} span_t;

typedef struct {
    uint64_t agent, queue;
    uint64_t dispatches;
    span_t *spans;
    size_t len, cap;
} queue_t;

static struct {
    bool self_configure;
    uint32_t kernel_dispatch_kind;
    bool have_kind;
    char *file; /* malloc'ed; "" = no file */
    queue_t *queues;
    size_t queue_count, queue_cap;
    size_t last_queue; /* index of the queue the previous record hit */
} state;

static const char *const COLUMNS[] = {"agent-id", "queue-id", "start", "end", "correlation-id"};

static int span_order(const void *a, const void *b) {
    const span_t *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    if (x->first_correlation != y->first_correlation)
        return x->first_correlation < y->first_correlation ? -1 : 1;
    return 0;
}

/* Sorts the spans and merges those that overlap or touch. */
static void compact(queue_t *q) {
    if (q->len < 2) return;
    qsort(q->spans, q->len, sizeof(span_t), span_order);
    size_t out = 0;
    for (size_t i = 1; i < q->len; i++) {
        span_t *cur = &q->spans[out];
        const span_t *next = &q->spans[i];
        if (next->start <= cur->end) {
            if (next->end > cur->end) cur->end = next->end;
        } else {
            q->spans[++out] = *next;
        }
    }
    q->len = out + 1;
}

static queue_t *queue_for(uint64_t agent, uint64_t queue) {
    if (state.queue_count) {
        queue_t *last = &state.queues[state.last_queue];
        if (last->agent == agent && last->queue == queue) return last;
    }
    for (size_t i = 0; i < state.queue_count; i++) {
        if (state.queues[i].agent == agent && state.queues[i].queue == queue) {
            state.last_queue = i;
            return &state.queues[i];
        }
    }
    if (state.queue_count == state.queue_cap) {
        state.queue_cap = state.queue_cap ? 2 * state.queue_cap : 8;
        state.queues = rocwasm_realloc(state.queues, state.queue_cap * sizeof(queue_t));
    }
    queue_t *q = &state.queues[state.queue_count];
    *q = (queue_t){.agent = agent, .queue = queue};
    state.last_queue = state.queue_count++;
    return q;
}

static void add_dispatch(queue_t *q, uint64_t start, uint64_t end, uint64_t correlation) {
    if (end < start) end = start;
    q->dispatches++;
    if (q->len) {
        span_t *last = &q->spans[q->len - 1];
        if (start >= last->start && start <= last->end) {
            if (end > last->end) last->end = end;
            if (start == last->start && correlation < last->first_correlation)
                last->first_correlation = correlation;
            return;
        }
    }
    if (q->len == q->cap) {
        compact(q);
        /* Grow when merging freed less than half: amortised O(log n) per record. */
        if (q->len >= q->cap / 2) {
            q->cap = q->cap ? 2 * q->cap : 64;
            q->spans = rocwasm_realloc(q->spans, q->cap * sizeof(span_t));
        }
    }
    q->spans[q->len++] = (span_t){start, end, correlation};
}

bool exports_rocwasm_plugin_lifecycle_configure(exports_rocwasm_plugin_lifecycle_tool_info_t *info) {
    state.have_kind = rocwasm_buffer_kind("KERNEL_DISPATCH", &state.kernel_dispatch_kind);
    state.self_configure = info->domains.len == 0;
    if (!state.self_configure) {
        bool traced = false;
        for (size_t i = 0; i < info->domains.len; i++)
            traced |= state.have_kind && info->domains.ptr[i] == state.kernel_dispatch_kind;
        if (!traced)
            rocwasm_log(ROCWASM_WARN, "queue-occupancy: the stage's domains do not include "
                                      "KERNEL_DISPATCH; it will see no kernels");
    }
    /* The argument is ours: free it (ownership rule 1 in rocwasm.h). */
    exports_rocwasm_plugin_lifecycle_tool_info_free(info);
    return true;
}

bool exports_rocwasm_plugin_lifecycle_init(rocwasm_string_t *err) {
    state.file = rocwasm_config_get("file");
    if (!state.file) {
        static const char def[] = "queue_occupancy.csv";
        state.file = rocwasm_alloc(sizeof def);
        memcpy(state.file, def, sizeof def);
    }
    rocwasm_status_t status;
    if (!rocwasm_select_columns("kernel-dispatches", COLUMNS, sizeof COLUMNS / sizeof *COLUMNS,
                                &status))
        return rocwasm_error(err, "queue-occupancy: delivery.select-columns failed");
    if (!rocwasm_receive_only("kernel-dispatches", &status))
        return rocwasm_error(err, "queue-occupancy: delivery.select-columns failed");
    if (state.self_configure) {
        if (!state.have_kind)
            return rocwasm_error(err, "queue-occupancy: the host names no KERNEL_DISPATCH kind");
        if (!rocwasm_trace_buffers(&state.kernel_dispatch_kind, 1, &status))
            return rocwasm_error(err, "queue-occupancy: cannot set up KERNEL_DISPATCH tracing");
    }
    return true;
}

void exports_rocwasm_plugin_analysis_deliver_batch(exports_rocwasm_plugin_analysis_delivery_info_t *info,
                                                   rocwasm_bytes_t *bytes) {
    rocwasm_batch_t batch;
    if (!rocwasm_batch_read(bytes, &batch))
        rocwasm_log(ROCWASM_ERROR, "queue-occupancy: the host sent a batch this header cannot read");
    rocwasm_dispatches_t d = rocwasm_dispatches(&batch);
    if (d.start && d.end) {
        for (size_t i = 0; i < d.rows; i++) {
            queue_t *q = queue_for(ROCWASM_CELL(d.agent_id, i), ROCWASM_CELL(d.queue_id, i));
            add_dispatch(q, d.start[i], d.end[i], ROCWASM_CELL(d.correlation_id, i));
        }
    }
    /* The batch is ours: free it, or every record leaks (rule 1). */
    rocwasm_bytes_free(bytes);
    /* So is the info (its process names hold strings). */
    exports_rocwasm_plugin_analysis_delivery_info_free(info);
}

uint64_t exports_rocwasm_plugin_analysis_on_callback(exports_rocwasm_plugin_analysis_callback_record_t *record,
                                                     uint64_t user_data) {
    exports_rocwasm_plugin_analysis_callback_record_free(record);
    return user_data;
}

bool exports_rocwasm_plugin_analysis_on_external_correlation_request(
    exports_rocwasm_plugin_analysis_external_correlation_request_t *request, uint64_t *ret) {
    (void)request;
    (void)ret;
    return false; /* none: use the pushed id */
}

static int queue_order(const void *a, const void *b) {
    const queue_t *x = a, *y = b;
    if (x->agent != y->agent) return x->agent < y->agent ? -1 : 1;
    if (x->queue != y->queue) return x->queue < y->queue ? -1 : 1;
    return 0;
}

void exports_rocwasm_plugin_lifecycle_fini(rocwasm_tables_t *ret) {
    static const char *const HEADER[] = {
        "Agent",    "Queue",       "Dispatches", "BusyNs",        "SpanNs",
        "Occupancy", "IdleGaps",   "IdleTotalNs", "MaxGapNs",     "MaxGapStartNs",
        "MaxGapBeforeCorrelationId",
    };
    rocwasm_table_t t;
    rocwasm_table_init(&t, "Queue occupancy", HEADER, sizeof HEADER / sizeof *HEADER);
    if (state.queue_count) qsort(state.queues, state.queue_count, sizeof(queue_t), queue_order);
    for (size_t i = 0; i < state.queue_count; i++) {
        queue_t *q = &state.queues[i];
        compact(q);
        uint64_t busy = 0, max_gap = 0, max_gap_start = 0, max_gap_before = 0;
        for (size_t s = 0; s < q->len; s++) {
            busy += q->spans[s].end - q->spans[s].start;
            if (s) {
                uint64_t gap = q->spans[s].start - q->spans[s - 1].end;
                if (gap > max_gap) {
                    max_gap = gap;
                    max_gap_start = q->spans[s - 1].end;
                    max_gap_before = q->spans[s].first_correlation;
                }
            }
        }
        uint64_t span = q->len ? q->spans[q->len - 1].end - q->spans[0].start : 0;
        rocwasm_table_row(&t);
        rocwasm_table_cell_u64(&t, q->agent);
        rocwasm_table_cell_u64(&t, q->queue);
        rocwasm_table_cell_u64(&t, q->dispatches);
        rocwasm_table_cell_u64(&t, busy);
        rocwasm_table_cell_u64(&t, span);
        rocwasm_table_cell_percent(&t, busy, span);
        rocwasm_table_cell_u64(&t, q->len ? q->len - 1 : 0);
        rocwasm_table_cell_u64(&t, span - busy);
        rocwasm_table_cell_u64(&t, max_gap);
        rocwasm_table_cell_u64(&t, max_gap_start);
        rocwasm_table_cell_u64(&t, max_gap_before);
    }
    if (state.file && state.file[0]) {
        size_t len;
        uint8_t *csv = rocwasm_table_csv(&t, &len);
        rocwasm_output_write(state.file, csv, len);
        free(csv);
    }
    *ret = (rocwasm_tables_t){NULL, 0};
    /* The table's strings are malloc'ed: the generated code frees them
     * after the host has copied the result (rule 2). */
    rocwasm_tables_push(ret, &t);
}
