//! The CSV writer: [`CsvSink`].
//!
//! One file per record family, created on its first record, with the header
//! of [`TraceFile::header`] and each row's fields in [`TraceFile::columns`]
//! order. Kinds and operations are written by name; agents by their logical
//! node index (the number rocprofv3 prints in `Agent_Id`), or the raw id when
//! the agent is unknown ([`crate::resolve`]).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rocwasm_core::{Batch, BufferTracingKind};

use super::schema::TraceFile;
use crate::names::kind_name;
use crate::paths::output_path;
use crate::resolve::{ByOperation, Resolver, UNCACHED_OP};
use crate::sink::claim_file;
use crate::sink::{Sink, SinkContext};
use crate::unfiled::Unfiled;
use rocwasm_plan::claims::OutputClaims;

/// One trace file's rows, in rocprofv3's CSV dialect: text fields quoted
/// (a `"` inside doubled), numbers bare, `\n` after each row.
///
/// Hand-written rather than `csv::Writer` because every column's type is
/// known here: the crate's `QuoteStyle::NonNumeric` decides each field's
/// quoting by parsing it as a number, and with a `String` allocated per
/// number that was most of the delivery thread's time per record (perf:
/// float parsing, UTF-8 checks and allocation ≈ 30 % of it).
///
/// A writer without a file (`out: None`) stands for a file whose claim was
/// refused: rows are built and dropped, so the rest of the sink goes on.
///
/// Debug builds check that every row has as many fields as the header, so a
/// row written out of step with the file's columns fails the tests.
///
/// Rows are formatted straight into one buffer of [`FLUSH_AT`] bytes, which
/// goes to the file in one `write(2)` when full: each byte is copied once
/// before the kernel's copy (a row buffer and then a `BufWriter` copied it
/// twice, ≈ 17 % of the writer's time in `memmove`).
struct TraceWriter {
    out: Option<File>,
    /// Whole rows not written yet, then the row being built.
    buf: Vec<u8>,
    /// Fields of the header (and so of every row).
    columns: usize,
    /// Fields of the row being built.
    fields: usize,
}

/// Bytes of formatted rows after which they are written to the file.
const FLUSH_AT: usize = 1 << 18;

impl TraceWriter {
    fn create(path: &Path, header: &[&str]) -> Result<TraceWriter> {
        let f = File::create(path).with_context(|| format!("creating {}", path.display()))?;
        let mut w = TraceWriter {
            out: Some(f),
            buf: Vec::with_capacity(FLUSH_AT + 4096),
            columns: header.len(),
            fields: 0,
        };
        for name in header {
            w.text(name);
        }
        w.end_row()?;
        Ok(w)
    }

    /// A writer for a file of `columns` columns this sink may not write.
    fn refused(columns: usize) -> TraceWriter {
        TraceWriter {
            out: None,
            buf: Vec::new(),
            columns,
            fields: 0,
        }
    }

    /// Ends a field: every field is followed by a `,`, and [`Self::end_row`]
    /// turns the last one into the row's `\n` (no test per field for the
    /// first one).
    fn field_done(&mut self) {
        self.buf.push(b',');
        if cfg!(debug_assertions) {
            self.fields += 1;
        }
    }

    fn text(&mut self, s: &str) -> &mut Self {
        self.buf.push(b'"');
        if s.contains('"') {
            for part in s.split_inclusive('"') {
                self.buf.extend_from_slice(part.as_bytes());
                if part.ends_with('"') {
                    self.buf.push(b'"');
                }
            }
        } else {
            self.buf.extend_from_slice(s.as_bytes());
        }
        self.buf.push(b'"');
        self.field_done();
        self
    }

    /// `n` in decimal: see [`crate::decimal`]. Inlined, so that the short
    /// path of a small number is too (not left to the compiler: +6 %).
    #[inline]
    fn num(&mut self, n: impl Into<u64>) -> &mut Self {
        crate::decimal::decimal(&mut self.buf, n.into());
        self.field_done();
        self
    }

    /// `n` as rocprofv3 prints an address: quoted, `0x` and lower-case hex
    /// (`"0x7f00"`, `"0x0"`), formatted into the row rather than into a
    /// `String` per row.
    fn hex(&mut self, n: u64) -> &mut Self {
        use std::io::Write as _;
        // Writing into a `Vec` never fails.
        let _ = write!(self.buf, "\"{n:#x}\"");
        self.field_done();
        self
    }

    /// A counter value as rocprofv3 prints one: 1 and above with six
    /// decimals (`16384.000000`), below 1 in C's `%.8e` (`5.00000000e-01`).
    fn counter_value(&mut self, v: f64) -> &mut Self {
        use std::io::Write as _;
        if v >= 1.0 || !v.is_finite() {
            let _ = write!(self.buf, "{v:.6}");
        } else {
            // Rust's `{:e}` writes `5.00000000e-1`: C pads the exponent to
            // two digits and always signs it.
            let text = format!("{v:.8e}");
            let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
            let exp: i32 = exp.parse().unwrap_or(0);
            let sign = if exp < 0 { '-' } else { '+' };
            let _ = write!(self.buf, "{mantissa}e{sign}{:02}", exp.unsigned_abs());
        }
        self.field_done();
        self
    }

    /// Fields formatted before (`fields` of them, each followed by its `,`).
    fn preformatted(&mut self, bytes: &[u8], fields: usize) -> &mut Self {
        self.buf.extend_from_slice(bytes);
        if cfg!(debug_assertions) {
            self.fields += fields;
        }
        self
    }

    fn end_row(&mut self) -> std::io::Result<()> {
        debug_assert_eq!(self.fields, self.columns, "fields of a row vs. the header");
        self.fields = 0;
        match self.buf.last_mut() {
            Some(last @ b',') => *last = b'\n',
            _ => self.buf.push(b'\n'),
        }
        if self.buf.len() >= FLUSH_AT {
            self.write_out()?;
        }
        Ok(())
    }

    /// Writes the buffered rows (none are kept after an error: the sink is
    /// dropped then).
    fn write_out(&mut self) -> std::io::Result<()> {
        let result = match &mut self.out {
            Some(out) => out.write_all(&self.buf),
            None => Ok(()),
        };
        self.buf.clear();
        result
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.write_out()
    }
}

/// Writes the rocprofv3 CSV trace files. See the module docs.
pub struct CsvSink {
    files: Files,
    resolve: Resolver,
    /// API calls of kinds rocprofv3 writes no CSV file for (OpenMP):
    /// reported by [`Sink::notes`].
    unfiled: Unfiled,
    api_prefixes: ApiPrefixes,
}

/// The first three fields of an API call's row, `"<domain>","<function>",
/// <pid>,`, formatted once per kind and operation of the run instead of
/// two name look-ups, two quoted strings and a number on every row (the
/// writers bench's CSV rate went from 9.3 to 10.8 M records/s with it).
///
/// Names are those of the [`Resolver`], which also keeps an operation's
/// first name for the run; operations from [`UNCACHED_OP`] up (not table
/// slots) are formatted on each row, and a new pid starts over.
#[derive(Default)]
struct ApiPrefixes {
    /// The pid of the prefixes kept.
    pid: u32,
    /// Each field followed by its `,`.
    prefixes: ByOperation<Box<[u8]>>,
    /// The last uncached one.
    scratch: Vec<u8>,
}

impl ApiPrefixes {
    /// Fields of a prefix.
    const FIELDS: usize = 3;

    fn get(&mut self, resolve: &mut Resolver, ctx: &SinkContext<'_>, kind: u32, op: u32) -> &[u8] {
        let pid = ctx.meta.pid;
        let format = |resolve: &mut Resolver| {
            let mut row = TraceWriter::refused(Self::FIELDS);
            row.text(&kind_name(kind))
                .text(resolve.op_name_ref(ctx, kind, op))
                .num(pid);
            row.buf
        };
        if op >= UNCACHED_OP {
            self.scratch = format(resolve);
            return &self.scratch;
        }
        if pid != self.pid {
            self.prefixes.clear();
            self.pid = pid;
        }
        self.prefixes
            .get_or_insert_with(kind, op, || format(resolve).into_boxed_slice())
    }
}

/// The sink's trace files, opened (and claimed) as their first row comes.
/// Apart from the resolver, so that a row can borrow a resolved name while
/// its file is written.
struct Files {
    dir: PathBuf,
    name: Option<String>,
    /// Indexed by `TraceFile as usize` (a lookup per row: no hashing).
    writers: [Option<(PathBuf, TraceWriter)>; TraceFile::ALL.len()],
    claims: OutputClaims,
}

impl CsvSink {
    /// Files go to `<dir>/[<name>_]<stem>.csv`.
    pub fn new(dir: impl Into<PathBuf>, name: Option<String>) -> Self {
        Self {
            files: Files {
                dir: dir.into(),
                name,
                writers: Default::default(),
                claims: OutputClaims::new(),
            },
            resolve: Resolver::default(),
            unfiled: Unfiled::default(),
            api_prefixes: ApiPrefixes::default(),
        }
    }
}

impl Files {
    fn writer(&mut self, file: TraceFile) -> Result<&mut TraceWriter> {
        let slot = &mut self.writers[file as usize];
        if slot.is_none() {
            let path = output_path(&self.dir, self.name.as_deref(), file.file_name());
            let w = claim_file(&self.claims, &path, "CSV", |p| {
                TraceWriter::create(p, file.header())
            })?
            .unwrap_or_else(|| TraceWriter::refused(file.columns().len()));
            *slot = Some((path, w));
        }
        Ok(&mut slot.as_mut().expect("created above").1)
    }
}

impl Sink for CsvSink {
    fn name(&self) -> &'static str {
        "csv"
    }

    fn set_claims(&mut self, claims: &OutputClaims) {
        self.files.claims = claims.clone();
    }

    fn begin(&mut self, _ctx: &SinkContext<'_>) -> Result<()> {
        std::fs::create_dir_all(&self.files.dir)
            .with_context(|| format!("creating {}", self.files.dir.display()))
    }

    fn claim_for(&mut self, batch: &Batch) -> Result<()> {
        for file in TraceFile::of_batch(batch) {
            self.files.writer(file)?;
        }
        Ok(())
    }

    fn write_batch(&mut self, batch: &Batch, ctx: &SinkContext<'_>) -> Result<()> {
        let symbols = ctx.symbols;
        // Names are borrowed from the resolver's caches while a row is
        // written (no reference count touched per row).
        let Self {
            files,
            resolve,
            unfiled,
            api_prefixes,
        } = self;
        // Every table by name: one the schema gains fails to compile here
        // until CSV writes it or counts it as left out.
        let Batch {
            api_calls: a,
            kernel_dispatches: k,
            memory_copies: c,
            memory_allocations: m,
            scratch_memory: s,
            retirements,
            runtime_initializations,
            counter_samples: p,
        } = batch;
        unfiled.count_unplaced(retirements, runtime_initializations);

        for i in 0..p.len() {
            let agent = resolve.agent(symbols, p.agent_id[i]);
            let pid = ctx.meta.pid;
            let counter = symbols.counter_name(p.counter_id[i]);
            let facts = resolve.kernel_ref(symbols, p.kernel_id[i]);
            let grid = u64::from(p.grid_x[i]) * u64::from(p.grid_y[i]) * u64::from(p.grid_z[i]);
            let workgroup = u64::from(p.workgroup_x[i])
                * u64::from(p.workgroup_y[i])
                * u64::from(p.workgroup_z[i]);
            // rocprofv3 writes LDS in its allocation granularity, 512 bytes.
            let lds = p.group_segment_size[i].div_ceil(512) * 512;
            let w = files.writer(TraceFile::CounterCollection)?;
            w.num(p.correlation_id[i])
                .num(p.dispatch_id[i])
                .num(agent)
                .num(p.queue_id[i])
                .num(pid)
                .num(p.thread_id[i])
                .num(grid)
                .num(p.kernel_id[i])
                .text(&facts.name)
                .num(workgroup)
                .num(lds)
                .num(p.private_segment_size[i])
                .num(facts.vgpr)
                .num(facts.accum_vgpr)
                .num(facts.sgpr)
                .text(counter.as_deref().unwrap_or("unknown_counter"))
                .counter_value(f64::from_bits(p.value[i]))
                .num(p.start[i])
                .num(p.end[i])
                .end_row()?;
        }

        for i in 0..k.len() {
            let agent = resolve.agent(symbols, k.agent_id[i]);
            let facts = resolve.kernel_ref(symbols, k.kernel_id[i]);
            let w = files.writer(TraceFile::KernelTrace)?;
            w.text("KERNEL_DISPATCH")
                .num(agent)
                .num(k.queue_id[i])
                .num(k.stream_id[i])
                .num(k.thread_id[i])
                .num(k.dispatch_id[i])
                .num(k.kernel_id[i])
                .text(&facts.name)
                .num(k.correlation_id[i])
                .num(k.start[i])
                .num(k.end[i])
                .num(k.group_segment_size[i])
                .num(k.private_segment_size[i])
                .num(facts.vgpr)
                .num(facts.accum_vgpr)
                .num(facts.sgpr)
                .num(k.workgroup_x[i])
                .num(k.workgroup_y[i])
                .num(k.workgroup_z[i])
                .num(k.grid_x[i])
                .num(k.grid_y[i])
                .num(k.grid_z[i])
                .end_row()?;
        }

        for i in 0..a.len() {
            let Some(file) = TraceFile::of_api_kind(a.kind[i]) else {
                unfiled.count(a.kind[i]);
                continue;
            };
            let prefix = api_prefixes.get(resolve, ctx, a.kind[i], a.operation[i]);
            files
                .writer(file)?
                .preformatted(prefix, ApiPrefixes::FIELDS)
                .num(a.thread_id[i])
                .num(a.correlation_id[i])
                .num(a.start[i])
                .num(a.end[i])
                .end_row()?;
        }

        let copy_kind = BufferTracingKind::MemoryCopy.raw();
        for i in 0..c.len() {
            let src = resolve.agent(symbols, c.src_agent_id[i]);
            let dst = resolve.agent(symbols, c.dst_agent_id[i]);
            let dir = resolve.op_name_ref(ctx, copy_kind, c.operation[i]);
            files
                .writer(TraceFile::MemoryCopy)?
                .text("MEMORY_COPY")
                .text(dir)
                .num(c.stream_id[i])
                .num(src)
                .num(dst)
                .num(c.correlation_id[i])
                .num(c.start[i])
                .num(c.end[i])
                .end_row()?;
        }

        let alloc_kind = BufferTracingKind::MemoryAllocation.raw();
        for i in 0..m.len() {
            let agent = resolve.agent(symbols, m.agent_id[i]);
            let op = resolve.op_name_ref(ctx, alloc_kind, m.operation[i]);
            files
                .writer(TraceFile::MemoryAllocation)?
                .text("MEMORY_ALLOCATION")
                .text(op)
                .num(agent)
                .num(m.allocation_size[i])
                .hex(m.address[i])
                .num(m.correlation_id[i])
                .num(m.start[i])
                .num(m.end[i])
                .end_row()?;
        }

        let scratch_kind = BufferTracingKind::ScratchMemory.raw();
        for i in 0..s.len() {
            let agent = resolve.agent(symbols, s.agent_id[i]);
            let op = resolve.op_name_ref(ctx, scratch_kind, s.operation[i]);
            files
                .writer(TraceFile::ScratchMemory)?
                .text("SCRATCH_MEMORY")
                .text(op)
                .num(agent)
                .num(s.queue_id[i])
                .num(s.thread_id[i])
                .num(s.flags[i])
                .num(s.start[i])
                .num(s.end[i])
                .num(s.allocation_size[i])
                .end_row()?;
        }
        Ok(())
    }

    fn finish(&mut self, _ctx: &SinkContext<'_>) -> Result<Vec<PathBuf>> {
        let mut written = Vec::new();
        for (path, mut w) in self.files.writers.iter_mut().filter_map(Option::take) {
            if w.out.is_none() {
                continue;
            }
            w.flush()
                .with_context(|| format!("writing {}", path.display()))?;
            written.push(path);
        }
        Ok(written)
    }

    fn notes(&mut self) -> Vec<String> {
        self.unfiled.take_notes("CSV")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows read back by the csv crate give the fields written; text is
    /// quoted (quotes doubled) and numbers are bare, as rocprofv3 writes them.
    #[test]
    fn trace_rows_quote_text_and_leave_numbers_bare() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let mut w = TraceWriter::create(&path, &["Name", "Value"]).unwrap();
        w.text("f(int, \"x\")").num(u64::MAX).end_row().unwrap();
        w.text("").num(7u32).end_row().unwrap();
        w.hex(0x7f00_dead_beef).num(0u64).end_row().unwrap();
        w.hex(0).hex(u64::MAX).end_row().unwrap();
        w.flush().unwrap();
        drop(w);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "\"Name\",\"Value\"\n\"f(int, \"\"x\"\")\",18446744073709551615\n\"\",7\n\
             \"0x7f00deadbeef\",0\n\"0x0\",\"0xffffffffffffffff\"\n"
        );
        let rows: Vec<csv::StringRecord> = csv::Reader::from_path(&path)
            .unwrap()
            .records()
            .map(Result::unwrap)
            .collect();
        assert_eq!(&rows[0][0], "f(int, \"x\")");
        assert_eq!(&rows[0][1], "18446744073709551615");
        assert_eq!(&rows[1][0], "");
    }
}
