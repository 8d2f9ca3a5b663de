//! Every malformed chain under `tests/bad/` fails with exactly the one-line
//! message in its `.expected` file (what `rocwasm check` prints on stderr
//! when run from this crate's directory).
//!
//! To add a case: write `tests/bad/NAME.toml`, run the tests with
//! `ROCWASM_BLESS=1` to create `NAME.expected`, and check that its line,
//! column and wording are what a user should see.

use std::path::{Path, PathBuf};

use rocwasm_config::{Chain, LoadOptions};

fn bad_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir("tests/bad")
        .expect("tests/bad exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| Path::new("tests/bad").join(p.file_name().unwrap()))
        .collect();
    files.sort();
    files
}

#[test]
fn every_bad_chain_gives_its_expected_line() {
    let files = bad_files();
    assert!(files.len() >= 15, "only {} bad chains", files.len());
    let bless = std::env::var_os("ROCWASM_BLESS").is_some();
    let mut failures = Vec::new();
    for file in &files {
        let expected_path = file.with_extension("expected");
        let actual = match Chain::load(file, &LoadOptions::default()) {
            Ok(_) => format!("(no error for {})", file.display()),
            Err(e) => format!("error: {e}"),
        };
        assert!(
            !actual.contains('\n'),
            "{}: message is not one line: {actual}",
            file.display()
        );
        if bless && !expected_path.exists() {
            std::fs::write(&expected_path, format!("{actual}\n")).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path)
            .unwrap_or_else(|_| panic!("{} has no .expected file", file.display()));
        if expected.trim_end() != actual {
            failures.push(format!(
                "{}\n  expected: {}\n  actual:   {actual}",
                file.display(),
                expected.trim_end()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
