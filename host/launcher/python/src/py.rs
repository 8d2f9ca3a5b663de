//! The PyO3 module `rocwasm._rocwasm`: [`crate::recording`] and
//! [`crate::session`] for Python. `rocwasm/__init__.py` wraps it in the
//! package's documented API; nothing here is meant to be called directly.
//!
//! Record batches cross into pyarrow through the Arrow C data interface
//! (`arrow-pyarrow`): the columns are handed over, not copied. Long work
//! (reading a recording, running plugins) runs with the interpreter
//! detached, so other Python threads (a Dask worker's) go on.

use std::path::PathBuf;
use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch, StringArray};
use arrow_pyarrow::{IntoPyArrow, Table};
use arrow_schema::{DataType, Field, Schema};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use rocwasm_plugin_host::{PartEnd, Partial, SummaryTable};

use crate::recording;
use crate::session::{Finished, Session, SessionOptions};

create_exception!(
    _rocwasm,
    RocwasmError,
    PyException,
    "A recording that cannot be read, a chain that cannot start (a policy refusal among them), a plugin that cannot be loaded."
);

fn error(e: anyhow::Error) -> PyErr {
    RocwasmError::new_err(format!("{e:#}"))
}

/// `read(path) -> (tables, meta, notes)`: the recording's tables as
/// `pyarrow.Table`s by name, its process as a dict, the reader's notes.
#[pyfunction]
fn read<'py>(
    py: Python<'py>,
    path: PathBuf,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>, Vec<String>)> {
    let r = py.detach(|| recording::read(&path)).map_err(error)?;
    let tables = PyDict::new(py);
    for t in r.tables {
        let table = Table::try_new(t.batches, t.schema)
            .map_err(|e| RocwasmError::new_err(e.to_string()))?;
        tables.set_item(t.name, table.into_pyarrow(py)?)?;
    }
    let meta = PyDict::new(py);
    meta.set_item("pid", r.meta.pid)?;
    meta.set_item("ppid", r.meta.ppid)?;
    meta.set_item("hostname", &r.meta.hostname)?;
    meta.set_item("command", &r.meta.command)?;
    meta.set_item("rank", r.meta.rank)?;
    meta.set_item("job", &r.meta.job)?;
    meta.set_item("start_ns", r.meta.start_ns)?;
    meta.set_item("end_ns", r.meta.end_ns)?;
    meta.set_item("records", r.records)?;
    Ok((tables, meta, r.notes))
}

/// `discover(paths) -> [path]`: the recordings under `paths`, as `rocwasm
/// replay` finds them (one per process: an MPI job's per-rank outputs).
#[pyfunction]
fn discover(paths: Vec<PathBuf>) -> PyResult<Vec<PathBuf>> {
    let inputs = rocwasm_formats::replay::discover(&paths)
        .map_err(|e| RocwasmError::new_err(e.to_string()))?;
    Ok(inputs.into_iter().map(|i| i.path).collect())
}

/// A summary table as a `pyarrow.Table` of strings, its title in the
/// schema's metadata (`b"title"`).
fn summary_to_pyarrow<'py>(py: Python<'py>, t: SummaryTable) -> PyResult<Bound<'py, PyAny>> {
    let fields: Vec<Field> = t
        .columns
        .iter()
        .map(|c| Field::new(c, DataType::Utf8, false))
        .collect();
    let schema = Arc::new(Schema::new_with_metadata(
        fields,
        [("title".to_string(), t.title.clone())]
            .into_iter()
            .collect::<std::collections::HashMap<String, String>>(),
    ));
    let columns: Vec<ArrayRef> = (0..t.columns.len())
        .map(|i| {
            Arc::new(StringArray::from_iter_values(
                t.rows.iter().map(|r| r.get(i).map_or("", String::as_str)),
            )) as ArrayRef
        })
        .collect();
    let batch = RecordBatch::try_new(schema.clone(), columns)
        .map_err(|e| RocwasmError::new_err(e.to_string()))?;
    Table::try_new(vec![batch], schema)
        .map_err(|e| RocwasmError::new_err(e.to_string()))?
        .into_pyarrow(py)
}

fn tables_to_py<'py>(py: Python<'py>, tables: Vec<SummaryTable>) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for t in tables {
        list.append(summary_to_pyarrow(py, t)?)?;
    }
    Ok(list)
}

/// A chain of plugins over one recording (see `crate::session`).
#[pyclass(unsendable, module = "rocwasm._rocwasm")]
struct Chain {
    session: Option<Session>,
}

impl Chain {
    fn live(&self) -> PyResult<&Session> {
        self.session
            .as_ref()
            .ok_or_else(|| RocwasmError::new_err("this chain has finished"))
    }

    fn take(&mut self) -> PyResult<Session> {
        self.session
            .take()
            .ok_or_else(|| RocwasmError::new_err("this chain has finished"))
    }
}

#[pymethods]
impl Chain {
    #[new]
    #[pyo3(signature = (chain, plugin_path = None, output_dir = None))]
    fn new(
        py: Python<'_>,
        chain: PathBuf,
        plugin_path: Option<Vec<PathBuf>>,
        output_dir: Option<PathBuf>,
    ) -> PyResult<Self> {
        let options = SessionOptions {
            plugin_path: plugin_path.unwrap_or_default(),
            output_dir,
        };
        let session = py
            .detach(|| Session::open(&chain, &options).map_err(|e| format!("{e:#}")))
            .map_err(RocwasmError::new_err)?;
        Ok(Chain {
            session: Some(session),
        })
    }

    /// The stages, in chain order.
    #[getter]
    fn stages(&self) -> PyResult<Vec<String>> {
        Ok(self.live()?.stages().to_vec())
    }

    /// True when `stage` exports `merge`.
    fn merges(&self, stage: &str) -> PyResult<bool> {
        Ok(self.live()?.merges(stage))
    }

    /// Delivers the recording at `path`; its record count.
    fn replay(&mut self, path: PathBuf) -> PyResult<u64> {
        let session = self
            .session
            .as_mut()
            .ok_or_else(|| RocwasmError::new_err("this chain has finished"))?;
        session.replay(&path).map_err(error)
    }

    /// Folds a partial result into `stage`.
    fn merge(&self, stage: &str, partial: &[u8], offered: u64, taken: u64) -> PyResult<()> {
        let partial = Partial {
            bytes: partial.to_vec(),
            offered,
            taken,
        };
        self.live()?.merge(stage, &partial).map_err(error)
    }

    /// `({stage: [pyarrow.Table]}, failures, notes)`.
    fn finish<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyDict>, Vec<String>, Vec<String>)> {
        let f: Finished = self.take()?.finish().map_err(error)?;
        let tables = PyDict::new(py);
        for (stage, t) in f.tables {
            tables.set_item(stage, tables_to_py(py, t)?)?;
        }
        Ok((tables, f.failures, f.notes))
    }

    /// `({stage: ("partial", bytes, offered, taken) | ("tables", [Table])
    /// | ("lost", why)}, failures, notes)`.
    fn finish_partial<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyDict>, Vec<String>, Vec<String>)> {
        let f: Finished = self.take()?.finish_partial().map_err(error)?;
        let ends = PyDict::new(py);
        for (stage, end) in f.parts {
            let value: Bound<'py, PyAny> = match end {
                PartEnd::Partial(p) => ("partial", PyBytes::new(py, &p.bytes), p.offered, p.taken)
                    .into_pyobject(py)?
                    .into_any(),
                PartEnd::Tables(t) => ("tables", tables_to_py(py, t)?)
                    .into_pyobject(py)?
                    .into_any(),
                PartEnd::Lost(why) => ("lost", why).into_pyobject(py)?.into_any(),
            };
            ends.set_item(stage, value)?;
        }
        Ok((ends, f.failures, f.notes))
    }
}

#[pymodule]
fn _rocwasm(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("RocwasmError", m.py().get_type::<RocwasmError>())?;
    m.add_function(wrap_pyfunction!(read, m)?)?;
    m.add_function(wrap_pyfunction!(discover, m)?)?;
    m.add_class::<Chain>()?;
    Ok(())
}
