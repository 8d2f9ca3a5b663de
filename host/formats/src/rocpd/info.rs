//! The info tables that need the complete symbol tables, written when the
//! run finishes: the process, then every agent, code object, kernel symbol,
//! queue and stream the run's records (or other info rows) refer to. The
//! node row is written when the run begins ([`write_node`]).

use std::collections::{BTreeSet, HashMap, HashSet};

use anyhow::Result;
use rocwasm_core::{AgentType, CodeObjectStorage, KernelSymbol};
use rusqlite::{params, Connection};

use super::run::{Run, NID};
use super::schema::{
    self, info_agent, info_code_object, info_kernel_symbol, info_node, info_process, info_queue,
    info_stream, insert_or_ignore_sql, insert_sql,
};

use crate::json::schema as json;
use crate::sink::SinkContext;

/// Writes the run's node row (tables `suffix`): the machine the run is on.
pub(super) fn write_node(conn: &Connection, suffix: &str, ctx: &SinkContext<'_>) -> Result<()> {
    let machine_id = std::fs::read_to_string("/etc/machine-id")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| format!("{:016x}", ctx.meta.process_hash()));
    use info_node as n;
    conn.execute(
        &insert_sql(
            n::TABLE,
            suffix,
            &[
                n::ID,
                n::HASH,
                n::MACHINE_ID,
                n::HOSTNAME,
                n::SYSTEM_NAME,
                n::RELEASE,
                n::VERSION,
                n::HARDWARE_NAME,
                n::DOMAIN_NAME,
            ],
        ),
        params![
            NID,
            ctx.meta.process_hash() as i64,
            machine_id,
            ctx.meta.hostname,
            "Linux",
            kernel("osrelease"),
            kernel("version"),
            std::env::consts::ARCH,
            kernel("domainname"),
        ],
    )?;
    Ok(())
}

/// `uname`'s field `name` as Linux publishes it under
/// `/proc/sys/kernel/` (`osrelease`: the release, `version`, `domainname`);
/// `None` where it cannot be read.
fn kernel(name: &str) -> Option<String> {
    std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
        .ok()
        .map(|s| s.trim_end().to_string())
}

/// `value` as the JSON rocprofv3 writes into an `extdata` column.
fn extdata(value: &impl serde::Serialize) -> Result<String> {
    Ok(serde_json::to_string(value)?)
}

impl Run {
    /// Writes the info tables that need the complete symbol tables: the
    /// process, then every agent, code object, kernel symbol, queue and
    /// stream the run's records (or other info rows) refer to.
    pub(super) fn write_info(&mut self, ctx: &SinkContext<'_>) -> Result<()> {
        let m = ctx.meta;
        let s = self.suffix.clone();
        let pid = self.pid;
        {
            use info_process as p;
            let sql = insert_sql(
                p::TABLE,
                &s,
                &[
                    p::ID,
                    p::NID,
                    p::PPID,
                    p::PID,
                    p::INIT,
                    p::FINI,
                    p::START,
                    p::END,
                    p::COMMAND,
                    p::ENVIRONMENT,
                ],
            );
            let (start, end) = (m.start_ns as i64, m.end_ns as i64);
            self.conn.execute(
                &sql,
                params![
                    pid,
                    NID,
                    self.ppid,
                    pid,
                    start,
                    end,
                    start,
                    end,
                    m.command.join(" "),
                    serde_json::to_string(&m.environment).expect("text serialises")
                ],
            )?;
        }

        let code_objects = ctx.symbols.code_objects();
        let kernels = symbols_to_write(ctx.symbols.kernels(), &code_objects, &self.kernels);
        // Code objects referred to but not described (a host-registered
        // kernel the loader never reported): a placeholder row each.
        let known: HashSet<u64> = code_objects.iter().map(|c| c.id).collect();
        let missing_code_objects: BTreeSet<u64> = kernels
            .iter()
            .map(|k| k.code_object_id)
            .filter(|id| !known.contains(id))
            .collect();
        self.agents.extend(code_objects.iter().map(|c| c.agent_id));

        {
            use info_agent as a;
            let sql = insert_sql(
                a::TABLE,
                &s,
                &[
                    a::ID,
                    a::NID,
                    a::PID,
                    a::TYPE,
                    a::ABSOLUTE_INDEX,
                    a::LOGICAL_INDEX,
                    a::TYPE_INDEX,
                    a::UUID,
                    a::NAME,
                    a::MODEL_NAME,
                    a::VENDOR_NAME,
                    a::PRODUCT_NAME,
                    a::USER_NAME,
                    a::EXTDATA,
                ],
            );
            for a in ctx.symbols.agents() {
                self.agents.remove(&a.id);
                let ty = match a.agent_type {
                    AgentType::Cpu => schema::AGENT_CPU,
                    AgentType::Gpu => schema::AGENT_GPU,
                };
                let index = a.node_id;
                // Only AMD's GPUs are agents a HIP/HSA run names; a CPU's
                // vendor is not in the engine's agent.
                let vendor = (a.agent_type == AgentType::Gpu).then_some("AMD");
                self.conn.execute(
                    &sql,
                    params![
                        a.id as i64,
                        NID,
                        pid,
                        ty,
                        index,
                        index,
                        index,
                        // As rocprofv3: the PCI device id.
                        a.properties.chip_id,
                        a.name,
                        a.name,
                        vendor,
                        a.product_name,
                        a.product_name,
                        extdata(&json::Agent::of(&a))?
                    ],
                )?;
            }
            // Agents referenced by records but never described still get a
            // row, so joins do not silently drop records.
            let sql =
                insert_or_ignore_sql(a::TABLE, &s, &[a::ID, a::NID, a::PID, a::LOGICAL_INDEX]);
            for id in std::mem::take(&mut self.agents) {
                self.conn
                    .execute(&sql, params![id as i64, NID, pid, id as i64])?;
            }
        }
        {
            use info_code_object as c;
            let sql = insert_sql(
                c::TABLE,
                &s,
                &[
                    c::ID,
                    c::NID,
                    c::PID,
                    c::AGENT_ID,
                    c::URI,
                    c::LOAD_BASE,
                    c::LOAD_SIZE,
                    c::LOAD_DELTA,
                    c::STORAGE_TYPE,
                    c::EXTDATA,
                ],
            );
            for c in &code_objects {
                let storage = match c.storage {
                    CodeObjectStorage::File { .. } => Some(schema::STORAGE_FILE),
                    CodeObjectStorage::Memory { .. } => Some(schema::STORAGE_MEMORY),
                    CodeObjectStorage::None => None,
                };
                self.conn.execute(
                    &sql,
                    params![
                        c.id as i64,
                        NID,
                        pid,
                        c.agent_id as i64,
                        c.uri,
                        c.load_base as i64,
                        c.load_size as i64,
                        c.load_delta,
                        storage,
                        extdata(&json::CodeObject::of(c))?
                    ],
                )?;
            }
            let sql = insert_sql(c::TABLE, &s, &[c::ID, c::NID, c::PID]);
            for id in missing_code_objects {
                self.conn.execute(&sql, params![id as i64, NID, pid])?;
            }
        }
        {
            use info_kernel_symbol as k;
            // The first six are those of an undescribed kernel's row.
            let columns = [
                k::ID,
                k::NID,
                k::PID,
                k::CODE_OBJECT_ID,
                k::KERNEL_NAME,
                k::DISPLAY_NAME,
                k::KERNEL_OBJECT,
                k::KERNARG_SEGMENT_SIZE,
                k::KERNARG_SEGMENT_ALIGNMENT,
                k::GROUP_SEGMENT_SIZE,
                k::PRIVATE_SEGMENT_SIZE,
                k::SGPR_COUNT,
                k::ARCH_VGPR_COUNT,
                k::ACCUM_VGPR_COUNT,
                k::EXTDATA,
            ];
            let sql = insert_sql(k::TABLE, &s, &columns);
            for k in &kernels {
                self.kernels.remove(&k.id);
                let display = k.display_name();
                self.conn.execute(
                    &sql,
                    params![
                        k.id as i64,
                        NID,
                        pid,
                        k.code_object_id as i64,
                        k.name,
                        display,
                        k.kernel_object as i64,
                        k.kernarg_segment_size,
                        k.kernarg_segment_alignment,
                        k.group_segment_size,
                        k.private_segment_size,
                        k.sgpr_count,
                        k.arch_vgpr_count,
                        k.accum_vgpr_count,
                        extdata(&json::KernelSymbol::of(k))?
                    ],
                )?;
            }
            // Kernels dispatched but never described: a row named after the
            // id, under a placeholder code object.
            let undescribed = std::mem::take(&mut self.kernels);
            if !undescribed.is_empty() {
                use info_code_object as c;
                let placeholder = (0..)
                    .find(|id| {
                        !known.contains(id) && !kernels.iter().any(|k| k.code_object_id == *id)
                    })
                    .expect("ids left") as i64;
                self.conn.execute(
                    &insert_or_ignore_sql(c::TABLE, &s, &[c::ID, c::NID, c::PID]),
                    params![placeholder, NID, pid],
                )?;
                let sql = insert_sql(k::TABLE, &s, &columns[..6]);
                for id in undescribed {
                    let name = rocwasm_core::unknown_kernel_name(id);
                    self.conn
                        .execute(&sql, params![id as i64, NID, pid, placeholder, name, name])?;
                }
            }
        }
        {
            use info_queue as q;
            let queues = std::mem::take(&mut self.queues);
            let sql = insert_sql(q::TABLE, &s, &[q::ID, q::NID, q::PID, q::NAME]);
            self.write_handles(&sql, queues, "Queue")?;
        }
        {
            use info_stream as st;
            let streams = std::mem::take(&mut self.streams);
            let sql = insert_sql(st::TABLE, &s, &[st::ID, st::NID, st::PID, st::NAME]);
            self.write_handles(&sql, streams, "Stream")?;
        }
        Ok(())
    }

    /// A row `(id, nid, pid, name)` of `sql` for each of `ids` (queue or
    /// stream handles), named `<what> <id>`, or `Default <what>` for 0.
    fn write_handles(&self, sql: &str, ids: HashSet<u64>, what: &str) -> Result<()> {
        for id in ids {
            let name = match id {
                0 => format!("Default {what}"),
                id => format!("{what} {id}"),
            };
            self.conn
                .execute(sql, params![id as i64, NID, self.pid, name])?;
        }
        Ok(())
    }
}

/// The kernel symbols to write, given the ids dispatches refer to.
///
/// A symbol whose code object is known is written as it is. One without
/// (HIP's host-side registration, `code_object_id` 0) is completed from
/// the HSA loader's symbol of the same name (its code object, kernel object
/// and descriptor fields) and written only if a dispatch refers to it;
/// with no such loader symbol it is written as it is (its code object then
/// gets a placeholder row).
fn symbols_to_write(
    kernels: Vec<KernelSymbol>,
    code_objects: &[rocwasm_core::CodeObject],
    dispatched: &HashSet<u64>,
) -> Vec<KernelSymbol> {
    let known: HashSet<u64> = code_objects.iter().map(|c| c.id).collect();
    let mut loaded: HashMap<String, KernelSymbol> = HashMap::new();
    for k in kernels.iter().filter(|k| known.contains(&k.code_object_id)) {
        loaded.entry(k.name.clone()).or_insert_with(|| k.clone());
    }
    kernels
        .into_iter()
        .filter_map(|k| {
            if known.contains(&k.code_object_id) {
                return Some(k);
            }
            match loaded.get(&k.name) {
                None => Some(k),
                Some(_) if !dispatched.contains(&k.id) => None,
                Some(l) => Some(KernelSymbol {
                    id: k.id,
                    name: k.name,
                    demangled_name: k.demangled_name,
                    kernel_address: k.kernel_address,
                    ..l.clone()
                }),
            }
        })
        .collect()
}
