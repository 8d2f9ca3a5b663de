//! Conversions between `rocwasm_core` types and the generated WIT types.
//!
//! Batches move column by column: every column is a `Vec` on both sides with
//! the same element type, so a conversion is a few pointer moves per table
//! and never touches a record.
//!
//! The chain carries the engine's batch (`rocwasm_core::Batch`, every table
//! of the schema). Delivery into a 0.1.0/0.2.0 plugin lowers a
//! [`BatchView`] of the tables its WIT batch has: the same record shape, but
//! made of borrowed slices. Lowering copies each slice into the guest's
//! memory (one `memcpy` per column); no owned batch, and no clone, is ever
//! needed for it, however many stages see the batch. A [`Projection`] (the
//! plugin's `delivery.select-columns`) turns the columns a plugin did not ask
//! for into empty slices, so they cost nothing to copy.

// Not `as core`: the derive macros below name the `core` crate.
use rocwasm_core as rc;
use wasmtime::component::{ComponentType, Lower};

use crate::bindings::types as wit;
use crate::env::Processes;

/// Generates, from the schema's table list (`rocwasm_schema::record_tables!`),
/// the batch conversions, the borrowed [`BatchView`] that lowering uses, and
/// the column names projection checks, so none of them can disagree with
/// another. The WIT side is forced by the compiler: each table's record
/// (`wit::$cols`) must have exactly the schema's fields.
macro_rules! batch_tables {
    ($($(#[$tdoc:meta])* $table:ident = $tid:literal $tname:literal {
        $(#[$rdoc:meta])* $row:ident / $cols:ident:
        $($(#[$cdoc:meta])* $cid:literal $field:ident : $ty:ty = $cname:literal $(@$role:ident)?),+ $(,)?
    }),+ $(,)?) => {
        /// Moves a core batch's 0.2.0 tables into a WIT batch.
        fn legacy_batch_to_wit(b: rc::Batch) -> wit::Batch {
            wit::Batch {
                $($table: {
                    let t = b.$table;
                    wit::$cols { $($field: t.$field,)+ }
                },)+
            }
        }

        /// Moves a WIT batch back into a core batch.
        pub fn batch_from_wit(b: wit::Batch) -> rc::Batch {
            rc::Batch {
                $($table: {
                    let t = b.$table;
                    rc::$cols { $($field: t.$field,)+ }
                },)+
                ..rc::Batch::default()
            }
        }

        /// True when every column of every table has its table's length: a
        /// transform's reply must be, or it is a malformed reply.
        pub fn wit_consistent(b: &wit::Batch) -> bool {
            true $(&& {
                let t = &b.$table;
                let n = [$(t.$field.len()),+][0];
                true $(&& t.$field.len() == n)+
            })+
        }

        /// The tables' WIT names with their columns' WIT names, in WIT
        /// order; the position of a table and of a column is its bit in a
        /// [`Projection`].
        pub const TABLES: &[(&str, &[&str])] = &[
            $(($tname, &[$($cname),+]),)+
        ];

        /// Each table's record lowered from borrowed columns, one module
        /// per table (`views::kernel_dispatches::View`).
        pub mod views {
            $(
                #[doc = concat!("`", $tname, "`.")]
                pub mod $table {
                    use wasmtime::component::{ComponentType, Lower};

                    #[doc = concat!("`", $tname, "` lowered from borrowed columns.")]
                    #[derive(ComponentType, Lower)]
                    #[component(record)]
                    pub struct View<'a> {
                        $(
                            #[doc = concat!("`", $cname, "`.")]
                            #[component(name = $cname)]
                            pub $field: &'a [$ty],
                        )+
                    }
                }
            )+
        }

        /// A `types.batch` lowered from borrowed columns: what
        /// `deliver-batch` sends. Lowering reads through the references, so
        /// the host never needs to own (or clone) a batch to deliver it, and
        /// a column left out by a [`Projection`] is an empty slice: nothing
        /// is copied for it.
        #[derive(ComponentType, Lower)]
        #[component(record)]
        pub struct BatchView<'a> {
            $(
                #[doc = concat!("`", $tname, "`.")]
                #[component(name = $tname)]
                pub $table: views::$table::View<'a>,
            )+
        }

        impl<'a> BatchView<'a> {
            /// The columns of `b` that `p` selects; the others empty.
            pub fn project(b: &'a rc::Batch, p: &Projection) -> BatchView<'a> {
                let mut masks = p.masks.iter().map(|m| m.unwrap_or(u32::MAX));
                BatchView {
                    $($table: {
                        let mask = masks.next().unwrap_or(u32::MAX);
                        let t = &b.$table;
                        // Struct fields are evaluated in the order written,
                        // which is the WIT order the bits follow.
                        let mut bit = 0u32;
                        let mut pick = || {
                            let on = mask & (1 << bit) != 0;
                            bit += 1;
                            on
                        };
                        views::$table::View {
                            $($field: if pick() { &t.$field } else { &[] },)+
                        }
                    },)+
                }
            }
        }
    };
}

/// Passes to [`batch_tables`] the tables of `rocwasm:plugin@0.2.0`'s WIT
/// batch (frozen: the schema's tables but the counter samples, table 8):
/// what a 0.1.0/0.2.0 plugin is given. The chain itself carries the
/// engine's batch, every table; a 0.3.x plugin gets any table by its ids.
macro_rules! legacy_tables {
    ([$($acc:tt)*]) => {
        batch_tables! { $($acc)* }
    };
    ([$($acc:tt)*] $(#[$tdoc:meta])* $table:ident = 8 $tname:literal { $($body:tt)* } $(, $($rest:tt)*)?) => {
        legacy_tables! { [$($acc)*] $($($rest)*)? }
    };
    ([$($acc:tt)*] $(#[$tdoc:meta])* $table:ident = $tid:literal $tname:literal { $($body:tt)* } $(, $($rest:tt)*)?) => {
        legacy_tables! { [$($acc)* $(#[$tdoc])* $table = $tid $tname { $($body)* },] $($($rest)*)? }
    };
}

rocwasm_core::schema::record_tables!([legacy_tables][]);

/// Moves a core batch's tables 0.2.0's WIT batch has into one: what a
/// 0.1.0/0.2.0 transform is given. The tables it lacks (the counter
/// samples) stay with the chain's own batch ([`legacy_reply`]).
pub fn batch_to_wit(b: rc::Batch) -> wit::Batch {
    legacy_batch_to_wit(b)
}

/// A 0.1.0/0.2.0 transform's reply as the chain's batch: its tables, and
/// the tables of `input` its WIT batch has no place for, unchanged.
pub fn legacy_reply(reply: wit::Batch, input: &rc::Batch) -> Result<rc::Batch, String> {
    if !wit_consistent(&reply) {
        return Err("columns of unequal length".into());
    }
    let mut out = batch_from_wit(reply);
    out.counter_samples = input.counter_samples.clone();
    Ok(out)
}

/// Which columns of which tables a plugin receives (`delivery.select-columns`).
///
/// One bit mask per table, indexed like [`TABLES`]; a table without a mask
/// gets every column, so the default projection is the whole batch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Projection {
    masks: [Option<u32>; TABLES.len()],
}

/// Why a projection was refused: the name that is not in the WIT.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProjectionError {
    #[error("no table `{0}` in a batch")]
    UnknownTable(String),
    #[error("table `{table}` has no column `{column}`")]
    UnknownColumn { table: String, column: String },
}

impl Projection {
    /// Keeps only `columns` of `table` (replacing an earlier choice for it).
    /// On an unknown name nothing changes.
    pub fn select(&mut self, table: &str, columns: &[String]) -> Result<(), ProjectionError> {
        let (index, names) = TABLES
            .iter()
            .enumerate()
            .find_map(|(i, (t, cols))| (*t == table).then_some((i, *cols)))
            .ok_or_else(|| ProjectionError::UnknownTable(table.to_string()))?;
        let mut mask = 0u32;
        for column in columns {
            let bit = names.iter().position(|n| n == column).ok_or_else(|| {
                ProjectionError::UnknownColumn {
                    table: table.to_string(),
                    column: column.clone(),
                }
            })?;
            mask |= 1 << bit;
        }
        self.masks[index] = Some(mask);
        Ok(())
    }
}

pub fn status_to_wit(s: rc::Status) -> wit::Status {
    use rc::Status as S;
    use wit::Status as W;
    match s {
        S::Error => W::Error,
        S::ContextNotFound => W::ContextNotFound,
        S::BufferNotFound => W::BufferNotFound,
        S::KindNotFound => W::KindNotFound,
        S::OperationNotFound => W::OperationNotFound,
        S::ThreadNotFound => W::ThreadNotFound,
        S::ContextInvalid => W::ContextInvalid,
        S::BufferBusy => W::BufferBusy,
        S::ServiceAlreadyConfigured => W::ServiceAlreadyConfigured,
        S::ConfigurationLocked => W::ConfigurationLocked,
        S::NotImplemented => W::NotImplemented,
        S::Finalized => W::Finalized,
        S::InvalidArgument => W::InvalidArgument,
        // The counter services' statuses are the C API's; no call a
        // plugin makes returns them (the WIT enum has no place for them).
        S::AgentNotFound
        | S::CounterNotFound
        | S::ContextError
        | S::ContextNotStarted
        | S::MetricNotValidForAgent
        | S::OutOfResources
        | S::ProfileNotFound
        | S::AgentMismatch
        | S::ExceedsHwLimit
        | S::AgentArchNotSupported => W::Error,
    }
}

pub fn agent_to_wit(a: rc::AgentInfo) -> wit::Agent {
    wit::Agent {
        id: a.id,
        node_id: a.node_id,
        agent_type: match a.agent_type {
            rc::AgentType::Cpu => wit::AgentType::Cpu,
            rc::AgentType::Gpu => wit::AgentType::Gpu,
        },
        name: a.name,
        product_name: a.product_name,
    }
}

pub fn code_object_to_wit(c: rc::CodeObject) -> wit::CodeObject {
    wit::CodeObject {
        id: c.id,
        agent_id: c.agent_id,
        uri: c.uri,
        load_base: c.load_base,
        load_size: c.load_size,
        load_delta: c.load_delta,
    }
}

pub fn kernel_symbol_to_wit(k: rc::KernelSymbol) -> wit::KernelSymbol {
    wit::KernelSymbol {
        id: k.id,
        code_object_id: k.code_object_id,
        name: k.name,
        demangled_name: k.demangled_name,
        kernel_object: k.kernel_object,
        kernarg_segment_size: k.kernarg_segment_size,
        kernarg_segment_alignment: k.kernarg_segment_alignment,
        group_segment_size: k.group_segment_size,
        private_segment_size: k.private_segment_size,
        sgpr_count: k.sgpr_count,
        arch_vgpr_count: k.arch_vgpr_count,
        accum_vgpr_count: k.accum_vgpr_count,
    }
}

/// A delivery's info, its process looked up in the run's `processes`.
pub fn delivery_info_to_wit(i: rc::DeliveryInfo, processes: &Processes) -> wit::DeliveryInfo {
    let p = processes.get(i.process);
    wit::DeliveryInfo {
        context: i.context.0,
        buffer: i.buffer.0,
        drop_count: i.drop_count,
        process: wit::ProcessInfo {
            hostname: p.hostname,
            pid: p.pid,
            rank: p.rank,
            job: p.job,
        },
    }
}

pub fn external_request_to_wit(
    r: &rc::ExternalCorrelationRequest,
) -> wit::ExternalCorrelationRequest {
    wit::ExternalCorrelationRequest {
        thread_id: r.thread_id,
        context: r.context.0,
        kind: r.kind.raw(),
        operation: r.operation,
        internal_correlation_id: r.internal_correlation_id,
    }
}

pub fn callback_record_to_wit(r: &rc::CallbackRecord) -> wit::CallbackRecord {
    wit::CallbackRecord {
        context: r.context.0,
        kind: r.kind.raw(),
        operation: r.operation,
        phase: match r.phase {
            None => wit::Phase::None,
            Some(rc::CallbackPhase::Enter) => wit::Phase::Enter,
            Some(rc::CallbackPhase::Exit) => wit::Phase::Exit,
        },
        correlation: wit::Correlation {
            internal: r.correlation.internal,
            external: r.correlation.external,
            ancestor: r.correlation.ancestor,
        },
        thread_id: r.thread_id,
        timestamp: r.timestamp,
        payload: match &r.payload {
            rc::CallbackPayload::Api { args, retval } => {
                wit::CallbackPayload::Api(wit::ApiCallPayload {
                    args: args
                        .iter()
                        .map(|a| wit::Argument {
                            name: a.name.clone(),
                            type_name: a.type_name.clone(),
                            value: a.value.clone(),
                        })
                        .collect(),
                    retval: retval.clone(),
                })
            }
            rc::CallbackPayload::CodeObjectLoad(c) => {
                wit::CallbackPayload::CodeObjectLoad(code_object_to_wit(c.clone()))
            }
            rc::CallbackPayload::KernelSymbolRegister(k) => {
                wit::CallbackPayload::KernelSymbolRegister(kernel_symbol_to_wit(k.clone()))
            }
            // The WIT callback record has no dispatch or copy payload:
            // plugins read completed operations from their buffers.
            // Nor host-function registrations or runtime versions (the
            // published WIT has no case for them).
            rc::CallbackPayload::None
            | rc::CallbackPayload::KernelDispatch(_)
            | rc::CallbackPayload::MemoryCopy(_)
            | rc::CallbackPayload::HostKernelSymbolRegister(_)
            | rc::CallbackPayload::RuntimeInitialization { .. } => wit::CallbackPayload::None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_round_trips_through_wit_without_loss() {
        let mut b = rc::Batch::default();
        for i in 0..5u64 {
            b.kernel_dispatches.push(rc::KernelDispatch {
                correlation_id: i,
                start: 10 * i,
                end: 10 * i + 7,
                grid_z: i as u32,
                ..Default::default()
            });
            b.api_calls.push(rc::ApiCall {
                kind: 5,
                operation: i as u32,
                ..Default::default()
            });
        }
        b.retirements.push(rc::Retirement {
            timestamp: 1,
            correlation_id: 2,
        });
        let w = batch_to_wit(b.clone());
        assert!(wit_consistent(&w));
        assert_eq!(batch_from_wit(w), b);
    }

    #[test]
    fn projection_keeps_selected_columns_and_unmentioned_tables() {
        let mut b = rc::Batch::default();
        b.kernel_dispatches.push(rc::KernelDispatch {
            kernel_id: 3,
            start: 10,
            end: 20,
            grid_x: 64,
            ..Default::default()
        });
        b.api_calls.push(rc::ApiCall {
            kind: 5,
            ..Default::default()
        });
        let w = b;
        let mut p = Projection::default();
        let cols = |c: &[&str]| c.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        p.select("kernel-dispatches", &cols(&["kernel-id", "end"]))
            .unwrap();
        p.select("retirements", &[]).unwrap();
        let v = BatchView::project(&w, &p);
        assert_eq!(v.kernel_dispatches.kernel_id, [3]);
        assert_eq!(v.kernel_dispatches.end, [20]);
        assert!(v.kernel_dispatches.start.is_empty() && v.kernel_dispatches.grid_x.is_empty());
        assert_eq!(v.api_calls.kind, [5], "a table not mentioned arrives whole");
        assert_eq!(v.api_calls.end, [0]);

        // An unknown name is refused and changes nothing.
        let before = p.clone();
        assert_eq!(
            p.select("kernel-dispatches", &cols(&["kernel-id", "kernel-name"])),
            Err(ProjectionError::UnknownColumn {
                table: "kernel-dispatches".into(),
                column: "kernel-name".into()
            })
        );
        assert_eq!(
            p.select("kernels", &[]),
            Err(ProjectionError::UnknownTable("kernels".into()))
        );
        assert_eq!(p, before);
        // The last call for a table wins.
        p.select("kernel-dispatches", &cols(&["grid-x"])).unwrap();
        let v = BatchView::project(&w, &p);
        assert!(v.kernel_dispatches.kernel_id.is_empty());
        assert_eq!(v.kernel_dispatches.grid_x, [64]);
    }

    #[test]
    fn every_table_has_at_most_32_columns_for_its_mask() {
        assert_eq!(TABLES.len(), 7);
        assert!(TABLES.iter().all(|(_, cols)| cols.len() <= 32));
        assert_eq!(TABLES[1].0, "kernel-dispatches");
        assert_eq!(TABLES[1].1.len(), 18);
    }

    #[test]
    fn inconsistent_reply_is_detected() {
        let mut w = batch_to_wit(rc::Batch::default());
        w.memory_copies.bytes.push(1);
        assert!(!wit_consistent(&w));
    }
}
