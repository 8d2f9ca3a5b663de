//! The end-to-end tests, in one binary (each file a module): one link of
//! the support library and its dependencies instead of one per file.

mod backend;
mod c_plugin;
mod collection_period;
mod crash;
mod guide;
mod hostile;
mod kernel_filter_chain;
mod kernel_options;
mod live_chain;
mod markers;
mod merge_partials;
mod mpi;
mod native_tools;
mod parquet_hive;
mod path_templates;
mod plugin_kit;
mod python_js_plugins;
mod readme;
mod registry;
mod replay_cli;
mod replay_equivalence;
mod report;
mod rocpd_args;
mod rocpd_live;
mod rocpd_merge;
mod rocpd_summary;
mod rocprofv3_options;
mod rocprofv3_recordings;
mod sdk_fidelity;
mod selected_regions;
mod site_policy;
mod summary_options;
mod tool_library;
mod wasi_escape;
mod wit_versions;
