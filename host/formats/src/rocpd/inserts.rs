//! The statements of a run's rows: the single-row `INSERT`s of the rows
//! written when first seen (strings, threads), and the record tables
//! (events, arguments, regions, dispatches, copies, allocations), whose rows are
//! gathered while a batch is mapped and written many to a statement
//! ([`super::rows`]).

use rusqlite::Connection;

use super::rows::TableRows;
use super::schema::{
    arg, event, info_pmc, info_thread, insert_sql, kernel_dispatch, memory_allocate, memory_copy,
    pmc_event, region, sample, string, track,
};

/// The single-row `INSERT`s of the rows written when first seen, and the
/// record tables, whose rows are written many per statement
/// ([`super::rows`]).
pub(super) struct Inserts {
    pub(super) string: String,
    pub(super) thread: String,
    pub(super) track: String,
    pub(super) info_pmc: String,
    pub(super) event: TableRows,
    pub(super) arg: TableRows,
    pub(super) region: TableRows,
    pub(super) sample: TableRows,
    pub(super) kernel_dispatch: TableRows,
    pub(super) memory_copy: TableRows,
    pub(super) memory_allocate: TableRows,
    pub(super) pmc_event: TableRows,
}

/// The record tables of [`Inserts`].
pub(super) const RECORD_TABLES: usize = 8;

impl Inserts {
    pub(super) fn new(s: &str) -> Self {
        Self {
            string: insert_sql(string::TABLE, s, &[string::ID, string::STRING]),
            thread: insert_sql(
                info_thread::TABLE,
                s,
                &[
                    info_thread::ID,
                    info_thread::NID,
                    info_thread::PPID,
                    info_thread::PID,
                    info_thread::TID,
                ],
            ),
            event: TableRows::new(
                event::TABLE,
                s,
                &[
                    event::ID,
                    event::CATEGORY_ID,
                    event::STACK_ID,
                    event::PARENT_STACK_ID,
                    event::CORRELATION_ID,
                    event::EXTDATA,
                ],
            ),
            arg: TableRows::new(
                arg::TABLE,
                s,
                &[
                    arg::EVENT_ID,
                    arg::POSITION,
                    arg::TYPE,
                    arg::NAME,
                    arg::VALUE,
                ],
            ),
            track: insert_sql(
                track::TABLE,
                s,
                &[
                    track::ID,
                    track::NID,
                    track::PID,
                    track::TID,
                    track::NAME_ID,
                ],
            ),
            info_pmc: {
                use info_pmc as p;
                insert_sql(
                    p::TABLE,
                    s,
                    &[
                        p::ID,
                        p::NID,
                        p::PID,
                        p::AGENT_ID,
                        p::TARGET_ARCH,
                        p::NAME,
                        p::SYMBOL,
                        p::DESCRIPTION,
                        p::COMPONENT,
                        p::VALUE_TYPE,
                        p::IS_CONSTANT,
                        p::IS_DERIVED,
                    ],
                )
            },
            pmc_event: TableRows::new(
                pmc_event::TABLE,
                s,
                &[pmc_event::EVENT_ID, pmc_event::PMC_ID, pmc_event::VALUE],
            ),
            sample: TableRows::new(
                sample::TABLE,
                s,
                &[sample::TRACK_ID, sample::TIMESTAMP, sample::EVENT_ID],
            ),
            region: {
                use region as r;
                TableRows::new(
                    r::TABLE,
                    s,
                    &[
                        r::NID,
                        r::PID,
                        r::TID,
                        r::START,
                        r::END,
                        r::NAME_ID,
                        r::EVENT_ID,
                    ],
                )
            },
            kernel_dispatch: {
                use kernel_dispatch as k;
                TableRows::new(
                    k::TABLE,
                    s,
                    &[
                        k::NID,
                        k::PID,
                        k::TID,
                        k::AGENT_ID,
                        k::KERNEL_ID,
                        k::DISPATCH_ID,
                        k::QUEUE_ID,
                        k::STREAM_ID,
                        k::START,
                        k::END,
                        k::PRIVATE_SEGMENT_SIZE,
                        k::GROUP_SEGMENT_SIZE,
                        k::WORKGROUP_SIZE_X,
                        k::WORKGROUP_SIZE_Y,
                        k::WORKGROUP_SIZE_Z,
                        k::GRID_SIZE_X,
                        k::GRID_SIZE_Y,
                        k::GRID_SIZE_Z,
                        k::REGION_NAME_ID,
                        k::EVENT_ID,
                    ],
                )
            },
            memory_copy: {
                use memory_copy as c;
                TableRows::new(
                    c::TABLE,
                    s,
                    &[
                        c::NID,
                        c::PID,
                        c::TID,
                        c::START,
                        c::END,
                        c::NAME_ID,
                        c::DST_AGENT_ID,
                        c::DST_ADDRESS,
                        c::SRC_AGENT_ID,
                        c::SRC_ADDRESS,
                        c::SIZE,
                        c::STREAM_ID,
                        c::EVENT_ID,
                    ],
                )
            },
            memory_allocate: {
                use memory_allocate as m;
                TableRows::new(
                    m::TABLE,
                    s,
                    &[
                        m::NID,
                        m::PID,
                        m::TID,
                        m::AGENT_ID,
                        m::TYPE,
                        m::LEVEL,
                        m::START,
                        m::END,
                        m::ADDRESS,
                        m::SIZE,
                        m::QUEUE_ID,
                        m::EVENT_ID,
                        m::EXTDATA,
                    ],
                )
            },
        }
    }

    /// The record tables, events first.
    fn record_tables(&mut self) -> [&mut TableRows; RECORD_TABLES] {
        [
            &mut self.event,
            &mut self.arg,
            &mut self.region,
            &mut self.sample,
            &mut self.kernel_dispatch,
            &mut self.memory_copy,
            &mut self.memory_allocate,
            &mut self.pmc_event,
        ]
    }

    /// Writes the batch's pending rows, events first.
    pub(super) fn flush(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        for t in self.record_tables() {
            t.flush(conn)?;
        }
        Ok(())
    }

    /// Writes the tables whose pending rows reached [`super::rows::FLUSH_AT`]
    /// (called after each record: bounds a batch's memory).
    pub(super) fn flush_full(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        for t in self.record_tables() {
            t.flush_if_full(conn)?;
        }
        Ok(())
    }

    /// Forgets the pending rows of a batch that failed.
    pub(super) fn discard(&mut self) {
        for t in self.record_tables() {
            t.discard();
        }
    }
}
