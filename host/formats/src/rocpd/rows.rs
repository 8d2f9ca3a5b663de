//! Multi-row `INSERT`s: a table's rows gathered while a batch is mapped and
//! written many to a statement when it ends (or, in a large batch, each
//! time a table has [`FLUSH_AT`] rows waiting).
//!
//! One `INSERT … VALUES (…)` per record spends most of its time around the
//! row rather than on it: the statement is looked up, reset and run, and
//! every rocpd table is `AUTOINCREMENT`, so each run of a statement also
//! reads and rewrites the table's `sqlite_sequence` row. Writing
//! [`CHUNK`] rows per statement pays that once per chunk: the rocpd writer
//! went from 0.25 M to 0.65 M records/s with it (`cargo bench -p
//! rocwasm-formats --bench writers -- --only rocpd`, 400 k records; 256 rows
//! per statement gained another 5 %, a 64 KiB page size lost 15 %). What is
//! left is SQLite's own B-tree insert, twice per record (the event row and
//! the record's row, as rocpd's schema has them). A batch's last rows go out in
//! power-of-two chunks, so each table uses at most `log2(CHUNK) + 1`
//! statement shapes, all kept in the connection's statement cache.
//!
//! Values are bound by position as they were pushed; nothing is formatted
//! into the SQL.

use rusqlite::types::Value;
use rusqlite::Connection;

use super::schema::insert_sql;

/// Rows per statement: 64 rows of the widest table (kernel dispatches, 20
/// columns) are 1280 parameters, far below SQLite's limit (32766).
pub const CHUNK: usize = 64;

/// Pending rows at which [`TableRows::flush_if_full`] writes a table's rows
/// before the batch ends, so a large batch never holds more than this many
/// rows' values in memory (≈ 650 KB for the widest table).
pub const FLUSH_AT: usize = 16 * CHUNK;

/// The statement shapes: `CHUNK`, `CHUNK / 2`, …, 1 rows.
const SHAPES: usize = CHUNK.trailing_zeros() as usize + 1;

/// The statement cache capacity a connection needs for `tables` tables
/// written through [`TableRows`], and a few single-row statements besides.
pub fn statement_cache_capacity(tables: usize) -> usize {
    tables * SHAPES + 16
}

/// One table's pending rows and its `INSERT` for each chunk size.
pub struct TableRows {
    columns: usize,
    /// `sql[i]` inserts `CHUNK >> i` rows.
    sql: Vec<String>,
    values: Vec<Value>,
}

impl TableRows {
    /// Rows of `table` + `suffix`, each giving `columns` in this order.
    pub fn new(table: &str, suffix: &str, columns: &[&str]) -> Self {
        let one = insert_sql(table, suffix, columns);
        let row = format!(
            "({})",
            (0..columns.len())
                .map(|_| "?")
                .collect::<Vec<_>>()
                .join(", ")
        );
        let head = one
            .split_once(" VALUES ")
            .map(|(head, _)| head.to_string())
            .expect("insert_sql writes `… VALUES (…)`");
        let sql = (0..SHAPES)
            .map(|i| {
                let rows = CHUNK >> i;
                format!("{head} VALUES {}", vec![row.as_str(); rows].join(", "))
            })
            .collect();
        Self {
            columns: columns.len(),
            sql,
            values: Vec::new(),
        }
    }

    /// Adds one row: exactly as many values as the table's columns.
    pub fn push<const N: usize>(&mut self, row: [Value; N]) {
        debug_assert_eq!(
            N, self.columns,
            "a row of {N} values for {} columns",
            self.columns
        );
        self.values.extend(row);
    }

    /// Rows pushed and not yet written.
    pub fn pending(&self) -> usize {
        self.values.len() / self.columns
    }

    /// Writes every pending row (within the caller's transaction).
    pub fn flush(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        let mut at = 0;
        let mut rows = self.pending();
        for (shape, sql) in self.sql.iter().enumerate() {
            let size = CHUNK >> shape;
            while rows >= size {
                let mut stmt = conn.prepare_cached(sql)?;
                let end = at + size * self.columns;
                for (i, value) in self.values[at..end].iter().enumerate() {
                    stmt.raw_bind_parameter(i + 1, value)?;
                }
                stmt.raw_execute()?;
                at = end;
                rows -= size;
            }
        }
        self.values.clear();
        Ok(())
    }

    /// Writes the pending rows when there are [`FLUSH_AT`] or more.
    pub fn flush_if_full(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        if self.pending() >= FLUSH_AT {
            self.flush(conn)?;
        }
        Ok(())
    }

    /// Drops the pending rows (their batch failed and was rolled back).
    pub fn discard(&mut self) {
        self.values.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pending_row_is_written_in_order_whatever_the_count() {
        for count in [0usize, 1, 2, 3, 63, 64, 65, 127, 128, 200] {
            let conn = Connection::open_in_memory().unwrap();
            conn.execute_batch("CREATE TABLE \"t_x\" (\"id\" INTEGER PRIMARY KEY AUTOINCREMENT, \"a\" INTEGER, \"b\" TEXT)")
                .unwrap();
            let mut rows = TableRows::new("t", "_x", &["a", "b"]);
            for i in 0..count {
                rows.push([Value::Integer(i as i64), Value::Text(format!("r{i}"))]);
            }
            assert_eq!(rows.pending(), count);
            rows.flush(&conn).unwrap();
            assert_eq!(rows.pending(), 0);
            let got: Vec<(i64, i64, String)> = conn
                .prepare("SELECT id, a, b FROM t_x ORDER BY id")
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let want: Vec<(i64, i64, String)> = (0..count)
                .map(|i| (i as i64 + 1, i as i64, format!("r{i}")))
                .collect();
            assert_eq!(got, want, "{count} rows");
        }
    }

    #[test]
    fn a_table_is_written_early_only_when_full() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE \"t\" (\"a\" INTEGER)")
            .unwrap();
        let mut rows = TableRows::new("t", "", &["a"]);
        for i in 0..FLUSH_AT - 1 {
            rows.push([Value::Integer(i as i64)]);
        }
        rows.flush_if_full(&conn).unwrap();
        assert_eq!(rows.pending(), FLUSH_AT - 1, "not full yet");
        rows.push([Value::Integer(-1)]);
        rows.flush_if_full(&conn).unwrap();
        assert_eq!(rows.pending(), 0);
        let n: i64 = conn
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, FLUSH_AT as i64);
    }

    #[test]
    fn each_table_needs_few_statement_shapes() {
        let rows = TableRows::new("t", "", &["a"]);
        assert_eq!(rows.sql.len(), 7);
        assert!(rows.sql[0].matches("(?)").count() == CHUNK);
        assert!(rows.sql[6].ends_with("VALUES (?)"));
    }
}
