//! The two most frequent records (API calls, kernel dispatches) formatted
//! by hand, byte for byte as serde derives them from [`super::schema`].
//!
//! Why: serde writes every key through its string escaper, and keys were
//! most of a record's time (`perf` of the writers bench: `serialize_str`
//! 14 %, the largest entry). Here keys are literal bytes and numbers go
//! through [`crate::decimal`]; a test compares the output with serde's for edge values,
//! so the schema stays the one definition of the format.

use super::schema::{ApiRecord, Dim3, DispatchRecord, Handle};

/// A record that formats itself as its derived `Serialize` would.
pub(crate) trait FastJson {
    /// Appends the record's JSON object to `out`.
    fn write_json(&self, out: &mut Vec<u8>);
}

/// A JSON object being written: `{`, then fields separated by commas.
struct Obj<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> Obj<'a> {
    fn open(out: &'a mut Vec<u8>) -> Self {
        out.push(b'{');
        Obj { out, first: true }
    }

    /// `"key":` after a comma if a field came before (keys are plain ASCII
    /// names: nothing to escape).
    fn key(&mut self, k: &str) -> &mut Vec<u8> {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        self.out.push(b'"');
        self.out.extend_from_slice(k.as_bytes());
        self.out.extend_from_slice(b"\":");
        self.out
    }

    fn num(&mut self, k: &str, n: impl Into<u64>) -> &mut Self {
        let out = self.key(k);
        crate::decimal::decimal(out, n.into());
        self
    }

    /// A field holding an object that `fill` writes.
    fn obj(&mut self, k: &str, fill: impl FnOnce(&mut Obj<'_>)) -> &mut Self {
        let out = self.key(k);
        let mut inner = Obj::open(out);
        fill(&mut inner);
        inner.out.push(b'}');
        self
    }

    /// `{"handle":n}` under `k`.
    fn handle(&mut self, k: &str, h: &Handle) -> &mut Self {
        self.obj(k, |o| {
            o.num("handle", h.handle);
        })
    }

    fn dim3(&mut self, k: &str, d: &Dim3) -> &mut Self {
        self.obj(k, |o| {
            o.num("x", d.x).num("y", d.y).num("z", d.z);
        })
    }

    fn close(&mut self) {
        self.out.push(b'}');
    }
}

impl FastJson for ApiRecord {
    fn write_json(&self, out: &mut Vec<u8>) {
        let c = &self.correlation_id;
        Obj::open(out)
            .num("size", self.size)
            .num("kind", self.kind)
            .num("operation", self.operation)
            .obj("correlation_id", |o| {
                o.num("internal", c.internal)
                    .num("external", c.external)
                    .num("ancestor", c.ancestor);
            })
            .num("start_timestamp", self.start_timestamp)
            .num("end_timestamp", self.end_timestamp)
            .num("thread_id", self.thread_id)
            .close();
    }
}

impl FastJson for DispatchRecord {
    fn write_json(&self, out: &mut Vec<u8>) {
        let (c, d) = (&self.correlation_id, &self.dispatch_info);
        Obj::open(out)
            .num("size", self.size)
            .num("kind", self.kind)
            .num("operation", self.operation)
            .obj("correlation_id", |o| {
                o.num("internal", c.internal).num("external", c.external);
            })
            .num("thread_id", self.thread_id)
            .num("start_timestamp", self.start_timestamp)
            .num("end_timestamp", self.end_timestamp)
            .handle("stream_id", &self.stream_id)
            .obj("dispatch_info", |o| {
                o.num("size", d.size)
                    .handle("agent_id", &d.agent_id)
                    .handle("queue_id", &d.queue_id)
                    .num("kernel_id", d.kernel_id)
                    .num("dispatch_id", d.dispatch_id)
                    .num("private_segment_size", d.private_segment_size)
                    .num("group_segment_size", d.group_segment_size)
                    .dim3("workgroup_size", &d.workgroup_size)
                    .dim3("grid_size", &d.grid_size);
            })
            .close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::schema::{ApiCorrelation, Correlation, DispatchInfo};

    fn same_as_serde<T: FastJson + serde::Serialize>(r: &T) {
        let mut fast = Vec::new();
        r.write_json(&mut fast);
        assert_eq!(
            String::from_utf8(fast).unwrap(),
            serde_json::to_string(r).unwrap()
        );
    }

    #[test]
    fn hand_formatted_records_are_serdes_bytes() {
        for n in [0u64, 1, 4242, u64::from(u32::MAX), u64::MAX] {
            let m = n as u32;
            same_as_serde(&ApiRecord {
                size: ApiRecord::SIZE,
                kind: m,
                operation: m.wrapping_add(1),
                correlation_id: ApiCorrelation {
                    internal: n,
                    external: n.wrapping_add(1),
                    ancestor: n / 2,
                },
                start_timestamp: n,
                end_timestamp: n,
                thread_id: n,
            });
            let dim = Dim3 {
                x: m,
                y: 1,
                z: m / 3,
            };
            same_as_serde(&DispatchRecord {
                size: DispatchRecord::SIZE,
                kind: 11,
                operation: m,
                correlation_id: Correlation {
                    internal: n,
                    external: 7,
                },
                thread_id: n,
                start_timestamp: n / 3,
                end_timestamp: n,
                stream_id: Handle::from(n),
                dispatch_info: DispatchInfo {
                    size: DispatchInfo::SIZE,
                    agent_id: Handle::from(n / 5),
                    queue_id: Handle::from(3),
                    kernel_id: n,
                    dispatch_id: n / 7,
                    private_segment_size: m,
                    group_segment_size: m / 2,
                    workgroup_size: dim,
                    grid_size: Dim3 { x: 1, y: m, z: 2 },
                },
            });
        }
    }
}
