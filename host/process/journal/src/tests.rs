use std::io::Write;

use rocwasm_core::{ApiCall, Batch, KernelSymbol};

use super::*;

fn batch(n: u64) -> Batch {
    let mut b = Batch::default();
    for i in 0..n {
        b.api_calls.push(ApiCall {
            kind: 5,
            operation: 3,
            correlation_id: i + 1,
            thread_id: 7,
            start: 10 * i,
            end: 10 * i + 5,
            ..ApiCall::default()
        });
    }
    b
}

fn kernel(id: u64) -> KernelSymbol {
    KernelSymbol {
        id,
        name: format!("_Z6kernel{id}v"),
        demangled_name: format!("kernel{id}()"),
        ..KernelSymbol::default()
    }
}

#[test]
fn frames_come_back_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = path_in(dir.path(), "42");
    let mut w = JournalWriter::create(&path).unwrap();
    w.meta(br#"{"pid":42}"#).unwrap();
    let symbols = Symbols {
        kernels: vec![kernel(1), kernel(2)],
        markers: vec![(rocwasm_core::ops::MARKER_MESSAGE_BASE, "a marker".into())],
        ..Symbols::default()
    };
    w.symbols(&symbols).unwrap();
    let args = vec![CallArgs {
        correlation_id: 7,
        args: vec![CallArg {
            type_name: "size_t".into(),
            name: "sizeBytes".into(),
            value: "4096".into(),
        }],
    }];
    w.args(&args).unwrap();
    w.batch(&batch(3)).unwrap();
    w.batch(&batch(5)).unwrap();
    w.end(br#"{"ok":true}"#).unwrap();
    assert_eq!(w.records(), 8);
    assert_eq!(journals_in(dir.path()).unwrap(), vec![path.clone()]);

    let mut r = JournalReader::open(&path).unwrap();
    let mut seen = Vec::new();
    while let Some(f) = r.next_frame().unwrap() {
        seen.push(match f {
            Frame::Meta(m) => format!("meta {}", String::from_utf8(m).unwrap()),
            Frame::Symbols(s) => {
                assert_eq!(s, symbols);
                "symbols".into()
            }
            Frame::Batch(b) => format!("batch {}", b.len()),
            Frame::End(e) => format!("end {}", String::from_utf8(e).unwrap()),
            Frame::Args(a) => {
                assert_eq!(a, args);
                "args".into()
            }
        });
    }
    assert_eq!(
        seen,
        [
            r#"meta {"pid":42}"#,
            "symbols",
            "args",
            "batch 3",
            "batch 5",
            r#"end {"ok":true}"#
        ]
    );
    assert_eq!(r.cut_short(), None);
}

/// A writer killed in the middle of a frame: every whole frame is read, and
/// the reader says how much of the last one there was.
#[test]
fn a_frame_cut_short_ends_the_journal_and_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = path_in(dir.path(), "1");
    let mut w = JournalWriter::create(&path).unwrap();
    w.meta(b"{}").unwrap();
    w.batch(&batch(4)).unwrap();
    let whole = w.bytes();
    w.batch(&batch(100)).unwrap();
    drop(w);
    // Keep 20 bytes of the second batch frame.
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(whole + 20).unwrap();

    let mut r = JournalReader::open(&path).unwrap();
    let mut batches = Vec::new();
    while let Some(f) = r.next_frame().unwrap() {
        if let Frame::Batch(b) = f {
            batches.push(b.len());
        }
    }
    assert_eq!(batches, [4]);
    assert_eq!(r.cut_short(), Some(20));
}

#[test]
fn other_files_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.journal");
    std::fs::File::create(&path)
        .unwrap()
        .write_all(b"SQLite format 3\0 and more bytes")
        .unwrap();
    let e = JournalReader::open(&path).err().unwrap().to_string();
    assert!(e.contains("not a rocwasm journal"), "{e}");

    let mut other = Vec::new();
    other.extend_from_slice(MAGIC);
    other.extend_from_slice(&VERSION.to_ne_bytes());
    other.extend_from_slice(&5u32.to_ne_bytes());
    other.extend_from_slice(b"other");
    std::fs::write(&path, other).unwrap();
    let e = JournalReader::open(&path).err().unwrap().to_string();
    assert!(e.contains("written by \"other\""), "{e}");
}

#[test]
fn a_damaged_frame_names_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let path = path_in(dir.path(), "2");
    let w = JournalWriter::create(&path).unwrap();
    let at = w.bytes();
    drop(w);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(&[9u8]).unwrap();
    f.write_all(&3u64.to_ne_bytes()).unwrap();
    f.write_all(b"abc").unwrap();
    let mut r = JournalReader::open(&path).unwrap();
    let e = r.next_frame().err().unwrap().to_string();
    assert!(
        e.contains(&format!("at byte {at}")) && e.contains("tag 9"),
        "{e}"
    );
}

/// Following a journal as it is written: a frame read while incomplete is
/// read again, whole, once the writer finished it.
#[test]
fn a_follower_reads_a_frame_again_once_it_is_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = path_in(dir.path(), "3");
    let mut w = JournalWriter::create(&path).unwrap();
    w.meta(b"{}").unwrap();
    w.batch(&batch(2)).unwrap();
    let whole = w.bytes();
    w.batch(&batch(7)).unwrap();
    let full = std::fs::read(&path).unwrap();
    // The reader sees the file with half of the second batch frame.
    std::fs::write(&path, &full[..(whole as usize + 30)]).unwrap();
    let mut r = JournalReader::open(&path).unwrap();
    let mut batches = Vec::new();
    let mut read_all = |r: &mut JournalReader| {
        while let Some(f) = r.next_frame().unwrap() {
            if let Frame::Batch(b) = f {
                batches.push(b.len());
            }
        }
    };
    read_all(&mut r);
    assert_eq!(r.cut_short(), Some(30));
    r.retry_incomplete().unwrap();
    // The writer finishes the frame.
    std::fs::write(&path, &full).unwrap();
    read_all(&mut r);
    assert_eq!(batches, [2, 7]);
    assert_eq!(r.cut_short(), None);
}

/// After an `exec` the same pid has a second journal: stems say which
/// image ran first, and the journals are listed in that order.
#[test]
fn stems_order_the_images_of_a_process() {
    assert_eq!(stem(7, 0), "7");
    assert_eq!(stem(7, 2), "7-2");
    assert_eq!(parse_stem("7-12"), Some((7, 12)));
    assert_eq!(parse_stem("7"), Some((7, 0)));
    assert_eq!(parse_stem("x"), None);
    let dir = tempfile::tempdir().unwrap();
    for s in ["12-10", "12-2", "12", "9"] {
        JournalWriter::create(&path_in(dir.path(), s)).unwrap();
    }
    let names: Vec<String> = journals_in(dir.path())
        .unwrap()
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["9", "12", "12-2", "12-10"]);
}
