/*
 * {{name}}: how many kernel dispatches, and their total GPU time.
 *
 * Returns one summary table, "Kernel dispatches" (columns Dispatches,
 * TotalNs: the sum of end - start, 0 for a reversed record). Only `start`
 * and `end` are read, so init asks the host for just those columns. When
 * the chain stage names no `domains`, the plugin traces kernel dispatches
 * on a context of its own.
 *
 * Memory: read include/rocwasm.h's MEMORY OWNERSHIP rules first. In short:
 * free every argument you receive (the batch!), return only malloc'ed
 * strings. No WASI: no printf, log with rocwasm_log.
 */
#include "rocwasm.h"

static const char *const COLUMNS[] = {"start", "end"};

static struct {
    bool self_configure;
    bool have_kind;
    uint32_t kernel_dispatch_kind;
    uint64_t dispatches;
    uint64_t total_ns;
} state;

bool exports_rocwasm_plugin_lifecycle_configure(exports_rocwasm_plugin_lifecycle_tool_info_t *info) {
    state.have_kind = rocwasm_buffer_kind("KERNEL_DISPATCH", &state.kernel_dispatch_kind);
    state.self_configure = info->domains.len == 0;
    exports_rocwasm_plugin_lifecycle_tool_info_free(info);
    return true;
}

bool exports_rocwasm_plugin_lifecycle_init(rocwasm_string_t *err) {
    rocwasm_status_t status;
    if (!rocwasm_select_columns("kernel-dispatches", COLUMNS, sizeof COLUMNS / sizeof *COLUMNS,
                                &status))
        return rocwasm_error(err, "{{name}}: delivery.select-columns failed");
    if (!rocwasm_receive_only("kernel-dispatches", &status))
        return rocwasm_error(err, "{{name}}: delivery.select-columns failed");
    if (state.self_configure) {
        if (!state.have_kind)
            return rocwasm_error(err, "{{name}}: the host names no KERNEL_DISPATCH kind");
        if (!rocwasm_trace_buffers(&state.kernel_dispatch_kind, 1, &status))
            return rocwasm_error(err, "{{name}}: cannot set up KERNEL_DISPATCH tracing");
    }
    return true;
}

void exports_rocwasm_plugin_analysis_deliver_batch(exports_rocwasm_plugin_analysis_delivery_info_t *info,
                                                   rocwasm_bytes_t *bytes) {
    rocwasm_batch_t batch;
    if (!rocwasm_batch_read(bytes, &batch))
        rocwasm_log(ROCWASM_ERROR, "{{name}}: the host sent a batch this header cannot read");
    rocwasm_dispatches_t d = rocwasm_dispatches(&batch);
    if (d.start && d.end) {
        for (size_t i = 0; i < d.rows; i++) {
            state.dispatches++;
            if (d.end[i] > d.start[i]) state.total_ns += d.end[i] - d.start[i];
        }
    }
    /* The batch is ours: free it, or every record leaks. */
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
    return false;
}

void exports_rocwasm_plugin_lifecycle_fini(rocwasm_tables_t *ret) {
    static const char *const HEADER[] = {"Dispatches", "TotalNs"};
    rocwasm_table_t t;
    rocwasm_table_init(&t, "Kernel dispatches", HEADER, sizeof HEADER / sizeof *HEADER);
    rocwasm_table_row(&t);
    rocwasm_table_cell_u64(&t, state.dispatches);
    rocwasm_table_cell_u64(&t, state.total_ns);
    *ret = (rocwasm_tables_t){NULL, 0};
    rocwasm_tables_push(ret, &t);
}
