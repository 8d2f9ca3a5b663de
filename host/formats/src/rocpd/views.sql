-- rocwasm's rocpd views: the views a rocprofv3 `results.db` answers by itself.
--
-- rocprofv3 (ROCm 7.0, rocpd schema 3) runs four view files on every
-- database it writes: the rocpd views (one plain `rocpd_<table>` view per
-- table), the data views, the marker views and the summary views. The plain
-- `rocpd_*` views are rocwasm's `schema::create_views` (the UNION ALL of every
-- run in the file). This file is the other three: the view names, their
-- column names and column order are rocprofv3's; the SELECTs are rocwasm's.
--
-- Rules:
-- * Every view reads only the plain `rocpd_*` views, never a per-run table
--   `rocpd_*_<uuid>`, so it covers every run of a file and a merged file
--   (`rocwasm merge`) alike; rows of different runs join on (id, guid).
-- * A record view (`kernels`, `memory_copies`, `memory_allocations`,
--   `scratch_memory`, `regions`, `samples`) has exactly one row per row of
--   its table: everything it joins to is a LEFT JOIN, so a record whose key
--   does not resolve shows NULLs instead of vanishing (rocprofv3's views use
--   INNER JOINs; on a file that passes `PRAGMA foreign_key_check`, as
--   rocwasm's do, the rows are the same).
-- * Correlation ids: `stack_id` is the internal correlation id, `corr_id` the
--   external one, as rocprofv3 writes them. Databases written by older
--   rocwasm versions have `rocpd_event.stack_id` NULL, the internal id in
--   `correlation_id` and the external one in `extdata` ({"external": N});
--   the views read those the same way (see `schema.rs`).
-- * Durations are `end - start` in nanoseconds; the summary views' durations
--   are in microseconds, as rocprofv3's (`total_duration`, `average`;
--   `average` is the exact mean, where rocprofv3 truncates to whole
--   nanoseconds before dividing).
-- * The file is idempotent (DROP VIEW IF EXISTS + CREATE VIEW): it is run
--   again after every run added to a file and after a merge, and replaces
--   the views of older rocwasm versions.
--
-- Views of rocprofv3's files whose source rows rocwasm writes only in some
-- cases (their columns are all defined, so queries written for rocprofv3
-- run and find what there is):
-- * `samples`, `sample_regions`: `rocpd_sample`/`rocpd_track` hold the
--   marks of `--marker-trace` (a `roctxMarkA`, start = end), as rocprofv3
--   writes them;
-- * `region_args`, `events_args`, `stream_args`: `rocpd_arg`, each traced
--   API call's arguments in the database of a live run with `--api-args`
--   (a replay's has none);
-- * `pmc_info`, `pmc_events`, `counters_collection`: `rocpd_info_pmc`,
--   `rocpd_pmc_event` (a run's --pmc counters; empty without).
--
-- Not here:
-- * marker views: rocprofv3's marker view file (ROCm 7.0) defines no view
--   (its earlier `markers`, `range_markers`, `single_markers`,
--   `*_marker_summary` were removed with the rocpd Python package);
-- * views added to rocprofv3's files after ROCm 7.0 (`spm_counters`,
--   rocpd schema 3.0.3; `hip_events`, 3.0.4, over a `rocpd_hip_event` table
--   schema 3 does not have; `pc_sampling`): not in the files this follows.

-- ---------------------------------------------------------------------------
-- Data views
-- ---------------------------------------------------------------------------

-- code_objects: one row per loaded code object, with its process and the
-- index of the agent it was loaded on.
DROP VIEW IF EXISTS code_objects;
CREATE VIEW code_objects AS
SELECT
    co.id,
    co.guid,
    co.nid,
    proc.pid,
    ag.absolute_index AS agent_abs_index,
    co.uri,
    co.load_base,
    co.load_size,
    co.load_delta,
    co.storage_type AS storage_type_str,
    json_extract(co.extdata, '$.size') AS code_object_size,
    json_extract(co.extdata, '$.storage_type') AS storage_type,
    json_extract(co.extdata, '$.memory_base') AS memory_base,
    json_extract(co.extdata, '$.memory_size') AS memory_size
FROM rocpd_info_code_object AS co
LEFT JOIN rocpd_info_process AS proc ON proc.guid = co.guid AND proc.id = co.pid
LEFT JOIN rocpd_info_agent AS ag ON ag.guid = co.guid AND ag.id = co.agent_id;

-- kernel_symbols: one row per kernel symbol. The row id is the kernel id and
-- display_name the formatted name (rocprofv3 writes both so too); they
-- stand in for the same facts when extdata does not carry them.
DROP VIEW IF EXISTS kernel_symbols;
CREATE VIEW kernel_symbols AS
SELECT
    ks.id,
    ks.guid,
    ks.nid,
    proc.pid,
    ks.code_object_id,
    ks.kernel_name,
    ks.display_name,
    ks.kernel_object,
    ks.kernarg_segment_size,
    ks.kernarg_segment_alignment,
    ks.group_segment_size,
    ks.private_segment_size,
    ks.sgpr_count,
    ks.arch_vgpr_count,
    ks.accum_vgpr_count,
    json_extract(ks.extdata, '$.size') AS kernel_symbol_size,
    coalesce(json_extract(ks.extdata, '$.kernel_id'), ks.id) AS kernel_id,
    json_extract(ks.extdata, '$.kernel_code_entry_byte_offset') AS kernel_code_entry_byte_offset,
    coalesce(json_extract(ks.extdata, '$.formatted_kernel_name'), ks.display_name) AS formatted_kernel_name,
    json_extract(ks.extdata, '$.demangled_kernel_name') AS demangled_kernel_name,
    json_extract(ks.extdata, '$.truncated_kernel_name') AS truncated_kernel_name,
    json_extract(ks.extdata, '$.kernel_address.handle') AS kernel_address
FROM rocpd_info_kernel_symbol AS ks
LEFT JOIN rocpd_info_process AS proc ON proc.guid = ks.guid AND proc.id = ks.pid;

-- processes: one row per profiled process, with its machine.
DROP VIEW IF EXISTS processes;
CREATE VIEW processes AS
SELECT
    node.id AS nid,
    node.machine_id,
    node.system_name,
    node.hostname,
    node.release AS system_release,
    node.version AS system_version,
    proc.guid,
    proc.ppid,
    proc.pid,
    proc.init,
    proc.start,
    proc."end",
    proc.fini,
    proc.command
FROM rocpd_info_process AS proc
LEFT JOIN rocpd_info_node AS node ON node.guid = proc.guid AND node.id = proc.nid;

-- threads: one row per thread that recorded something, with its process
-- and machine (tid: the OS thread id).
DROP VIEW IF EXISTS threads;
CREATE VIEW threads AS
SELECT
    node.id AS nid,
    node.machine_id,
    node.system_name,
    node.hostname,
    node.release AS system_release,
    node.version AS system_version,
    th.guid,
    proc.ppid,
    proc.pid,
    th.tid,
    th.start,
    th."end",
    th.name
FROM rocpd_info_thread AS th
-- th.pid is the process row's id; older rocwasm databases hold the OS pid
-- there (their process row's id is 1): either finds the run's process.
LEFT JOIN rocpd_info_process AS proc ON proc.guid = th.guid AND th.pid IN (proc.id, proc.pid)
LEFT JOIN rocpd_info_node AS node ON node.guid = th.guid AND node.id = th.nid;

-- regions: one row per host-side region: every HIP, HSA, marker (ROCTx),
-- RCCL… API call, named by its function and categorised by its API.
DROP VIEW IF EXISTS regions;
CREATE VIEW regions AS
SELECT
    r.id,
    r.guid,
    cat.string AS category,
    fn.string AS name,
    r.nid,
    proc.pid,
    th.tid,
    r.start,
    r."end",
    r."end" - r.start AS duration,
    r.event_id,
    coalesce(ev.stack_id, ev.correlation_id) AS stack_id,
    ev.parent_stack_id,
    CASE WHEN ev.stack_id IS NULL AND ev.id IS NOT NULL
         THEN coalesce(CAST(json_extract(ev.extdata, '$.external') AS INTEGER), 0)
         ELSE ev.correlation_id END AS corr_id,
    ev.extdata,
    ev.call_stack,
    ev.line_info
FROM rocpd_region AS r
LEFT JOIN rocpd_string AS fn ON fn.guid = r.guid AND fn.id = r.name_id
LEFT JOIN rocpd_event AS ev ON ev.guid = r.guid AND ev.id = r.event_id
LEFT JOIN rocpd_string AS cat ON cat.guid = ev.guid AND cat.id = ev.category_id
LEFT JOIN rocpd_info_process AS proc ON proc.guid = r.guid AND proc.id = r.pid
LEFT JOIN rocpd_info_thread AS th ON th.guid = r.guid AND th.id = r.tid;

-- region_args: one row per recorded argument of a region's call (a live
-- run's with --api-args; empty otherwise).
DROP VIEW IF EXISTS region_args;
CREATE VIEW region_args AS
SELECT
    r.id,
    r.guid,
    r.nid,
    proc.pid,
    arg.type,
    arg.name,
    arg.value
FROM rocpd_region AS r
JOIN rocpd_arg AS arg ON arg.guid = r.guid AND arg.event_id = r.event_id
LEFT JOIN rocpd_info_process AS proc ON proc.guid = r.guid AND proc.id = r.pid;

-- samples: one row per instantaneous event on a track (a record whose start
-- is its end), named by its track (rocwasm's: markers' marks, on their
-- thread's track, the message in extdata).
DROP VIEW IF EXISTS samples;
CREATE VIEW samples AS
SELECT
    s.id,
    s.guid,
    cat.string AS category,
    tn.string AS name,
    tr.nid,
    proc.pid,
    th.tid,
    s.timestamp,
    s.event_id,
    coalesce(ev.stack_id, ev.correlation_id) AS stack_id,
    ev.parent_stack_id,
    CASE WHEN ev.stack_id IS NULL AND ev.id IS NOT NULL
         THEN coalesce(CAST(json_extract(ev.extdata, '$.external') AS INTEGER), 0)
         ELSE ev.correlation_id END AS corr_id,
    ev.extdata,
    ev.call_stack,
    ev.line_info
FROM rocpd_sample AS s
LEFT JOIN rocpd_track AS tr ON tr.guid = s.guid AND tr.id = s.track_id
LEFT JOIN rocpd_string AS tn ON tn.guid = tr.guid AND tn.id = tr.name_id
LEFT JOIN rocpd_event AS ev ON ev.guid = s.guid AND ev.id = s.event_id
LEFT JOIN rocpd_string AS cat ON cat.guid = ev.guid AND cat.id = ev.category_id
LEFT JOIN rocpd_info_process AS proc ON proc.guid = tr.guid AND proc.id = tr.pid
LEFT JOIN rocpd_info_thread AS th ON th.guid = tr.guid AND th.id = tr.tid;

-- sample_regions: one row per sample, shaped as a region of no duration
-- (start = end = its timestamp).
DROP VIEW IF EXISTS sample_regions;
CREATE VIEW sample_regions AS
SELECT
    id,
    guid,
    category,
    name,
    nid,
    pid,
    tid,
    timestamp AS start,
    timestamp AS "end",
    0 AS duration,
    event_id,
    stack_id,
    parent_stack_id,
    corr_id,
    extdata,
    call_stack,
    line_info
FROM samples;

-- regions_and_samples: one row per region and one per sample: every host
-- API record, whether it lasted or not.
DROP VIEW IF EXISTS regions_and_samples;
CREATE VIEW regions_and_samples AS
SELECT * FROM regions
UNION ALL
SELECT * FROM sample_regions;

-- kernels: one row per kernel dispatch, with its kernel's name and
-- resources, its agent, queue and stream, and the region (kernel-rename
-- range) it was dispatched in ('' for none).
DROP VIEW IF EXISTS kernels;
CREATE VIEW kernels AS
SELECT
    k.id,
    k.guid,
    th.tid,
    cat.string AS category,
    coalesce(rn.string, '') AS region,
    ks.display_name AS name,
    k.nid,
    proc.pid,
    ag.absolute_index AS agent_abs_index,
    ag.logical_index AS agent_log_index,
    ag.type_index AS agent_type_index,
    ag.type AS agent_type,
    ks.code_object_id,
    k.kernel_id,
    k.dispatch_id,
    k.stream_id,
    k.queue_id,
    q.name AS queue,
    st.name AS stream,
    k.start,
    k."end",
    k."end" - k.start AS duration,
    k.grid_size_x AS grid_x,
    k.grid_size_y AS grid_y,
    k.grid_size_z AS grid_z,
    k.workgroup_size_x AS workgroup_x,
    k.workgroup_size_y AS workgroup_y,
    k.workgroup_size_z AS workgroup_z,
    k.group_segment_size AS lds_size,
    k.private_segment_size AS scratch_size,
    ks.arch_vgpr_count AS vgpr_count,
    ks.accum_vgpr_count,
    ks.sgpr_count,
    ks.group_segment_size AS static_lds_size,
    ks.private_segment_size AS static_scratch_size,
    coalesce(ev.stack_id, ev.correlation_id) AS stack_id,
    ev.parent_stack_id,
    CASE WHEN ev.stack_id IS NULL AND ev.id IS NOT NULL
         THEN coalesce(CAST(json_extract(ev.extdata, '$.external') AS INTEGER), 0)
         ELSE ev.correlation_id END AS corr_id
FROM rocpd_kernel_dispatch AS k
LEFT JOIN rocpd_info_kernel_symbol AS ks ON ks.guid = k.guid AND ks.id = k.kernel_id
LEFT JOIN rocpd_string AS rn ON rn.guid = k.guid AND rn.id = k.region_name_id
LEFT JOIN rocpd_info_agent AS ag ON ag.guid = k.guid AND ag.id = k.agent_id
LEFT JOIN rocpd_info_queue AS q ON q.guid = k.guid AND q.id = k.queue_id
LEFT JOIN rocpd_info_stream AS st ON st.guid = k.guid AND st.id = k.stream_id
LEFT JOIN rocpd_event AS ev ON ev.guid = k.guid AND ev.id = k.event_id
LEFT JOIN rocpd_string AS cat ON cat.guid = ev.guid AND cat.id = ev.category_id
LEFT JOIN rocpd_info_process AS proc ON proc.guid = k.guid AND proc.id = k.pid
LEFT JOIN rocpd_info_thread AS th ON th.guid = k.guid AND th.id = k.tid;

-- pmc_info: one row per hardware counter a run counted on an agent (empty
-- without --pmc).
DROP VIEW IF EXISTS pmc_info;
CREATE VIEW pmc_info AS
SELECT
    pmc.id,
    pmc.guid,
    pmc.nid,
    proc.pid,
    ag.absolute_index AS agent_abs_index,
    pmc.is_constant,
    pmc.is_derived,
    pmc.name,
    pmc.description,
    pmc.block,
    pmc.expression
FROM rocpd_info_pmc AS pmc
LEFT JOIN rocpd_info_agent AS ag ON ag.guid = pmc.guid AND ag.id = pmc.agent_id
LEFT JOIN rocpd_info_process AS proc ON proc.guid = pmc.guid AND proc.id = pmc.pid;

-- pmc_events: one row per counter value of a kernel dispatch (empty
-- without --pmc).
DROP VIEW IF EXISTS pmc_events;
CREATE VIEW pmc_events AS
SELECT
    pe.id,
    pe.guid,
    pe.pmc_id,
    ev.id AS event_id,
    cat.string AS category,
    ks.display_name AS name,
    k.nid,
    proc.pid,
    k.dispatch_id,
    k.start,
    k."end",
    k."end" - k.start AS duration,
    pmc.name AS counter_name,
    pe.value AS counter_value
FROM rocpd_pmc_event AS pe
JOIN rocpd_kernel_dispatch AS k ON k.guid = pe.guid AND k.event_id = pe.event_id
LEFT JOIN rocpd_info_pmc AS pmc ON pmc.guid = pe.guid AND pmc.id = pe.pmc_id
LEFT JOIN rocpd_event AS ev ON ev.guid = pe.guid AND ev.id = pe.event_id
LEFT JOIN rocpd_string AS cat ON cat.guid = ev.guid AND cat.id = ev.category_id
LEFT JOIN rocpd_info_kernel_symbol AS ks ON ks.guid = k.guid AND ks.id = k.kernel_id
LEFT JOIN rocpd_info_process AS proc ON proc.guid = k.guid AND proc.id = k.pid;

-- events_args: one row per recorded argument of an event (a live run's
-- with --api-args; empty otherwise).
DROP VIEW IF EXISTS events_args;
CREATE VIEW events_args AS
SELECT
    ev.id AS event_id,
    cat.string AS category,
    coalesce(ev.stack_id, ev.correlation_id) AS stack_id,
    ev.parent_stack_id,
    CASE WHEN ev.stack_id IS NULL
         THEN coalesce(CAST(json_extract(ev.extdata, '$.external') AS INTEGER), 0)
         ELSE ev.correlation_id END AS correlation_id,
    arg.position AS arg_position,
    arg.type AS arg_type,
    arg.name AS arg_name,
    arg.value AS arg_value,
    ev.call_stack,
    ev.line_info,
    arg.extdata
FROM rocpd_arg AS arg
JOIN rocpd_event AS ev ON ev.guid = arg.guid AND ev.id = arg.event_id
LEFT JOIN rocpd_string AS cat ON cat.guid = ev.guid AND cat.id = ev.category_id;

-- stream_args: one row per `stream` argument of a call, with the stream it
-- names (a live run's with --api-args; empty otherwise).
DROP VIEW IF EXISTS stream_args;
CREATE VIEW stream_args AS
SELECT
    arg.id AS argument_id,
    arg.event_id,
    arg.position AS arg_position,
    arg.type AS arg_type,
    arg.value AS arg_value,
    json_extract(arg.extdata, '$.stream_id') AS stream_id,
    st.nid,
    proc.pid,
    st.name AS stream_name,
    st.extdata
FROM rocpd_arg AS arg
JOIN rocpd_info_stream AS st
    ON st.guid = arg.guid AND st.id = json_extract(arg.extdata, '$.stream_id')
LEFT JOIN rocpd_info_process AS proc ON proc.guid = st.guid AND proc.id = st.pid
WHERE arg.name = 'stream';

-- memory_copies: one row per asynchronous memory copy, named by its
-- direction, with its source and destination agents.
DROP VIEW IF EXISTS memory_copies;
CREATE VIEW memory_copies AS
SELECT
    mc.id,
    mc.guid,
    cat.string AS category,
    mc.nid,
    proc.pid,
    th.tid,
    mc.start,
    mc."end",
    mc."end" - mc.start AS duration,
    dir.string AS name,
    rn.string AS region_name,
    mc.stream_id,
    mc.queue_id,
    st.name AS stream_name,
    q.name AS queue_name,
    mc.size,
    dst.name AS dst_device,
    dst.absolute_index AS dst_agent_abs_index,
    dst.logical_index AS dst_agent_log_index,
    dst.type_index AS dst_agent_type_index,
    dst.type AS dst_agent_type,
    mc.dst_address,
    src.name AS src_device,
    src.absolute_index AS src_agent_abs_index,
    src.logical_index AS src_agent_log_index,
    src.type_index AS src_agent_type_index,
    src.type AS src_agent_type,
    mc.src_address,
    coalesce(ev.stack_id, ev.correlation_id) AS stack_id,
    ev.parent_stack_id,
    CASE WHEN ev.stack_id IS NULL AND ev.id IS NOT NULL
         THEN coalesce(CAST(json_extract(ev.extdata, '$.external') AS INTEGER), 0)
         ELSE ev.correlation_id END AS corr_id
FROM rocpd_memory_copy AS mc
LEFT JOIN rocpd_string AS dir ON dir.guid = mc.guid AND dir.id = mc.name_id
LEFT JOIN rocpd_string AS rn ON rn.guid = mc.guid AND rn.id = mc.region_name_id
LEFT JOIN rocpd_info_agent AS dst ON dst.guid = mc.guid AND dst.id = mc.dst_agent_id
LEFT JOIN rocpd_info_agent AS src ON src.guid = mc.guid AND src.id = mc.src_agent_id
LEFT JOIN rocpd_info_queue AS q ON q.guid = mc.guid AND q.id = mc.queue_id
LEFT JOIN rocpd_info_stream AS st ON st.guid = mc.guid AND st.id = mc.stream_id
LEFT JOIN rocpd_event AS ev ON ev.guid = mc.guid AND ev.id = mc.event_id
LEFT JOIN rocpd_string AS cat ON cat.guid = ev.guid AND cat.id = ev.category_id
LEFT JOIN rocpd_info_process AS proc ON proc.guid = mc.guid AND proc.id = mc.pid
LEFT JOIN rocpd_info_thread AS th ON th.guid = mc.guid AND th.id = mc.tid;

-- memory_allocations: one row per memory operation of rocpd_memory_allocate:
-- allocations and frees (level REAL or VIRTUAL) and, as in rocprofv3,
-- scratch operations (level SCRATCH; also in scratch_memory).
DROP VIEW IF EXISTS memory_allocations;
CREATE VIEW memory_allocations AS
SELECT
    ma.id,
    ma.guid,
    cat.string AS category,
    ma.nid,
    proc.pid,
    th.tid,
    ma.start,
    ma."end",
    ma."end" - ma.start AS duration,
    ma.type,
    ma.level,
    ag.name AS agent_name,
    ag.absolute_index AS agent_abs_index,
    ag.logical_index AS agent_log_index,
    ag.type_index AS agent_type_index,
    ag.type AS agent_type,
    ma.address,
    ma.size,
    ma.queue_id,
    q.name AS queue_name,
    ma.stream_id,
    st.name AS stream_name,
    coalesce(ev.stack_id, ev.correlation_id) AS stack_id,
    ev.parent_stack_id,
    CASE WHEN ev.stack_id IS NULL AND ev.id IS NOT NULL
         THEN coalesce(CAST(json_extract(ev.extdata, '$.external') AS INTEGER), 0)
         ELSE ev.correlation_id END AS corr_id
FROM rocpd_memory_allocate AS ma
LEFT JOIN rocpd_info_agent AS ag ON ag.guid = ma.guid AND ag.id = ma.agent_id
LEFT JOIN rocpd_info_queue AS q ON q.guid = ma.guid AND q.id = ma.queue_id
LEFT JOIN rocpd_info_stream AS st ON st.guid = ma.guid AND st.id = ma.stream_id
LEFT JOIN rocpd_event AS ev ON ev.guid = ma.guid AND ev.id = ma.event_id
LEFT JOIN rocpd_string AS cat ON cat.guid = ev.guid AND cat.id = ev.category_id
LEFT JOIN rocpd_info_process AS proc ON proc.guid = ma.guid AND proc.id = ma.pid
LEFT JOIN rocpd_info_thread AS th ON th.guid = ma.guid AND th.id = ma.tid;

-- scratch_memory: one row per scratch memory operation (allocation, free,
-- asynchronous reclaim) of a queue, oldest first.
DROP VIEW IF EXISTS scratch_memory;
CREATE VIEW scratch_memory AS
SELECT
    ma.id,
    ma.guid,
    ma.nid,
    proc.pid,
    ma.type AS operation,
    ag.name AS agent_name,
    ag.absolute_index AS agent_abs_index,
    ag.logical_index AS agent_log_index,
    ag.type_index AS agent_type_index,
    ag.type AS agent_type,
    ma.queue_id,
    th.tid,
    -- Older rocwasm databases hold the flags in the event's extdata.
    coalesce(json_extract(ma.extdata, '$.flags'), json_extract(ev.extdata, '$.flags')) AS alloc_flags,
    ma.start,
    ma."end",
    ma."end" - ma.start AS duration,
    ma.size,
    ma.address,
    CASE WHEN ev.stack_id IS NULL AND ev.id IS NOT NULL
         THEN coalesce(CAST(json_extract(ev.extdata, '$.external') AS INTEGER), 0)
         ELSE ev.correlation_id END AS correlation_id,
    coalesce(ev.stack_id, ev.correlation_id) AS stack_id,
    ev.parent_stack_id,
    CASE WHEN ev.stack_id IS NULL AND ev.id IS NOT NULL
         THEN coalesce(CAST(json_extract(ev.extdata, '$.external') AS INTEGER), 0)
         ELSE ev.correlation_id END AS corr_id,
    cat.string AS category,
    ev.extdata AS event_extdata
FROM rocpd_memory_allocate AS ma
LEFT JOIN rocpd_info_agent AS ag ON ag.guid = ma.guid AND ag.id = ma.agent_id
LEFT JOIN rocpd_event AS ev ON ev.guid = ma.guid AND ev.id = ma.event_id
LEFT JOIN rocpd_string AS cat ON cat.guid = ev.guid AND cat.id = ev.category_id
LEFT JOIN rocpd_info_process AS proc ON proc.guid = ma.guid AND proc.id = ma.pid
LEFT JOIN rocpd_info_thread AS th ON th.guid = ma.guid AND th.id = ma.tid
WHERE ma.level = 'SCRATCH'
ORDER BY ma.start;

-- counters_collection: one row per counter of a kernel dispatch (values of
-- the counter's instances summed), with the dispatch's kernel and agent
-- (empty without --pmc).
DROP VIEW IF EXISTS counters_collection;
CREATE VIEW counters_collection AS
SELECT
    min(pe.id) AS id,
    pe.guid,
    k.dispatch_id,
    k.kernel_id,
    ev.id AS event_id,
    CASE WHEN ev.stack_id IS NULL AND ev.id IS NOT NULL
         THEN coalesce(CAST(json_extract(ev.extdata, '$.external') AS INTEGER), 0)
         ELSE ev.correlation_id END AS correlation_id,
    coalesce(ev.stack_id, ev.correlation_id) AS stack_id,
    ev.parent_stack_id,
    proc.pid,
    th.tid,
    k.agent_id,
    ag.absolute_index AS agent_abs_index,
    ag.logical_index AS agent_log_index,
    ag.type_index AS agent_type_index,
    ag.type AS agent_type,
    k.queue_id,
    k.grid_size_x,
    k.grid_size_y,
    k.grid_size_z,
    k.grid_size_x * k.grid_size_y * k.grid_size_z AS grid_size,
    ks.display_name AS kernel_name,
    rn.string AS kernel_region,
    k.workgroup_size_x,
    k.workgroup_size_y,
    k.workgroup_size_z,
    k.workgroup_size_x * k.workgroup_size_y * k.workgroup_size_z AS workgroup_size,
    k.group_segment_size AS lds_block_size,
    k.private_segment_size AS scratch_size,
    ks.arch_vgpr_count AS vgpr_count,
    ks.accum_vgpr_count,
    ks.sgpr_count,
    pmc.name AS counter_name,
    pmc.symbol AS counter_symbol,
    pmc.component,
    pmc.description,
    pmc.block,
    pmc.expression,
    pmc.value_type,
    pmc.id AS counter_id,
    sum(pe.value) AS value,
    k.start,
    k."end",
    pmc.is_constant,
    pmc.is_derived,
    k."end" - k.start AS duration,
    cat.string AS category,
    k.nid,
    ev.extdata,
    ks.code_object_id
FROM rocpd_pmc_event AS pe
JOIN rocpd_kernel_dispatch AS k ON k.guid = pe.guid AND k.event_id = pe.event_id
JOIN rocpd_info_pmc AS pmc ON pmc.guid = pe.guid AND pmc.id = pe.pmc_id
LEFT JOIN rocpd_event AS ev ON ev.guid = pe.guid AND ev.id = pe.event_id
LEFT JOIN rocpd_string AS cat ON cat.guid = ev.guid AND cat.id = ev.category_id
LEFT JOIN rocpd_string AS rn ON rn.guid = k.guid AND rn.id = k.region_name_id
LEFT JOIN rocpd_info_agent AS ag ON ag.guid = k.guid AND ag.id = k.agent_id
LEFT JOIN rocpd_info_kernel_symbol AS ks ON ks.guid = k.guid AND ks.id = k.kernel_id
LEFT JOIN rocpd_info_process AS proc ON proc.guid = k.guid AND proc.id = k.pid
LEFT JOIN rocpd_info_thread AS th ON th.guid = k.guid AND th.id = k.tid
GROUP BY pe.guid, k.dispatch_id, pmc.name, k.agent_id;

-- ---------------------------------------------------------------------------
-- Summary views
-- ---------------------------------------------------------------------------

-- top_kernels: one row per kernel name (over every run of the file): its
-- dispatches, their total and mean duration (µs) and their share (%) of
-- all kernels' time; longest total first.
DROP VIEW IF EXISTS top_kernels;
CREATE VIEW top_kernels AS
WITH per_dispatch AS (
    SELECT ks.display_name AS name, k."end" - k.start AS ns
    FROM rocpd_kernel_dispatch AS k
    LEFT JOIN rocpd_info_kernel_symbol AS ks ON ks.guid = k.guid AND ks.id = k.kernel_id
)
SELECT
    name,
    count(*) AS total_calls,
    sum(ns) / 1000.0 AS total_duration,
    avg(ns) / 1000.0 AS average,
    sum(ns) * 100.0 / (SELECT sum(ns) FROM per_dispatch) AS percentage
FROM per_dispatch
GROUP BY name
ORDER BY total_duration DESC;

-- busy: one row per GPU or CPU agent that ran kernels or received memory
-- copies (per run): the time it spent on them (GpuTime, ns), the span from
-- the first start to the last end of all kernels and copies of the file
-- (WallTime, ns) and their ratio (Busy).
DROP VIEW IF EXISTS busy;
CREATE VIEW busy AS
WITH device_ops AS (
    SELECT guid, agent_id, start, "end" FROM rocpd_kernel_dispatch
    UNION ALL
    SELECT guid, dst_agent_id, start, "end" FROM rocpd_memory_copy
),
per_agent AS (
    SELECT guid, agent_id, sum("end" - start) AS gpu_ns
    FROM device_ops
    GROUP BY guid, agent_id
),
span AS (
    SELECT max("end") - min(start) AS wall_ns FROM device_ops
)
SELECT
    pa.agent_id,
    ag.type,
    pa.gpu_ns AS GpuTime,
    span.wall_ns AS WallTime,
    pa.gpu_ns * 1.0 / span.wall_ns AS Busy
FROM per_agent AS pa
CROSS JOIN span
JOIN rocpd_info_agent AS ag ON ag.guid = pa.guid AND ag.id = pa.agent_id;

-- top: one row per name of a kernel, memory copy direction or API function:
-- its records, their total and mean duration (µs) and their share (%) of
-- the time of all kernels, copies and regions; longest total first.
DROP VIEW IF EXISTS top;
CREATE VIEW top AS
WITH operations AS (
    SELECT ks.display_name AS name, k."end" - k.start AS ns
    FROM rocpd_kernel_dispatch AS k
    LEFT JOIN rocpd_info_kernel_symbol AS ks ON ks.guid = k.guid AND ks.id = k.kernel_id
    UNION ALL
    SELECT dir.string, mc."end" - mc.start
    FROM rocpd_memory_copy AS mc
    LEFT JOIN rocpd_string AS dir ON dir.guid = mc.guid AND dir.id = mc.name_id
    UNION ALL
    SELECT fn.string, r."end" - r.start
    FROM rocpd_region AS r
    LEFT JOIN rocpd_string AS fn ON fn.guid = r.guid AND fn.id = r.name_id
)
SELECT
    name,
    count(*) AS total_calls,
    sum(ns) / 1000.0 AS total_duration,
    avg(ns) / 1000.0 AS average,
    sum(ns) * 100.0 / (SELECT sum(ns) FROM operations) AS percentage
FROM operations
GROUP BY name
ORDER BY total_duration DESC;
