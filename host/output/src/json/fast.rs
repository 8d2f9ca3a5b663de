//! The two most frequent records (API calls, kernel dispatches) formatted
//! by hand, byte for byte as serde derives them from [`super::schema`].
//!
//! Why: serde writes every key through its string escaper, and keys were
//! most of a record's time (`perf` of the writers bench: `serialize_str`
//! 14 %, the largest entry). Here keys are literal bytes and numbers go
//! through `itoa`; a test compares the output with serde's for edge values,
//! so the schema stays the one definition of the format.

use super::schema::{ApiRecord, DispatchRecord};

/// A record that formats itself as its derived `Serialize` would.
pub(crate) trait FastJson {
    /// Appends the record's JSON object to `out`.
    fn write_json(&self, out: &mut Vec<u8>);
}

/// Appends `"key":` (keys are plain ASCII names).
fn key(out: &mut Vec<u8>, k: &str) {
    out.push(b'"');
    out.extend_from_slice(k.as_bytes());
    out.extend_from_slice(b"\":");
}

fn num(out: &mut Vec<u8>, k: &str, n: impl itoa::Integer) {
    key(out, k);
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

impl FastJson for ApiRecord {
    fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        num(out, "size", self.size);
        out.push(b',');
        num(out, "kind", self.kind);
        out.push(b',');
        num(out, "operation", self.operation);
        out.push(b',');
        key(out, "correlation_id");
        out.push(b'{');
        num(out, "internal", self.correlation_id.internal);
        out.push(b',');
        num(out, "external", self.correlation_id.external);
        out.push(b',');
        num(out, "ancestor", self.correlation_id.ancestor);
        out.extend_from_slice(b"},");
        num(out, "start_timestamp", self.start_timestamp);
        out.push(b',');
        num(out, "end_timestamp", self.end_timestamp);
        out.push(b',');
        num(out, "thread_id", self.thread_id);
        out.push(b'}');
    }
}

impl FastJson for DispatchRecord {
    fn write_json(&self, out: &mut Vec<u8>) {
        let d = &self.dispatch_info;
        out.push(b'{');
        num(out, "size", self.size);
        out.push(b',');
        num(out, "kind", self.kind);
        out.push(b',');
        num(out, "operation", self.operation);
        out.push(b',');
        key(out, "correlation_id");
        out.push(b'{');
        num(out, "internal", self.correlation_id.internal);
        out.push(b',');
        num(out, "external", self.correlation_id.external);
        out.extend_from_slice(b"},");
        num(out, "thread_id", self.thread_id);
        out.push(b',');
        num(out, "start_timestamp", self.start_timestamp);
        out.push(b',');
        num(out, "end_timestamp", self.end_timestamp);
        out.push(b',');
        key(out, "stream_id");
        out.push(b'{');
        num(out, "handle", self.stream_id.handle);
        out.extend_from_slice(b"},");
        key(out, "dispatch_info");
        out.push(b'{');
        num(out, "size", d.size);
        out.push(b',');
        key(out, "agent_id");
        out.push(b'{');
        num(out, "handle", d.agent_id.handle);
        out.extend_from_slice(b"},");
        key(out, "queue_id");
        out.push(b'{');
        num(out, "handle", d.queue_id.handle);
        out.extend_from_slice(b"},");
        num(out, "kernel_id", d.kernel_id);
        out.push(b',');
        num(out, "dispatch_id", d.dispatch_id);
        out.push(b',');
        num(out, "private_segment_size", d.private_segment_size);
        out.push(b',');
        num(out, "group_segment_size", d.group_segment_size);
        out.push(b',');
        for (name, dim) in [
            ("workgroup_size", &d.workgroup_size),
            ("grid_size", &d.grid_size),
        ] {
            key(out, name);
            out.push(b'{');
            num(out, "x", dim.x);
            out.push(b',');
            num(out, "y", dim.y);
            out.push(b',');
            num(out, "z", dim.z);
            out.push(b'}');
            if name == "workgroup_size" {
                out.push(b',');
            }
        }
        out.extend_from_slice(b"}}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::schema::{ApiCorrelation, Correlation, Dim3, DispatchInfo, Handle};

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
