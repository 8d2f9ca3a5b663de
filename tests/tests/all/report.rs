//! The `report` plugin's page in a real browser: a replay of
//! `examples/traces/sample` (its `results.json`, which records the agents
//! and code objects too) through the default chain writes `report.html`;
//! headless Chromium (Debian's `chromium`, installed by `cargo xtask test`)
//! renders it. The rendered DOM must have every section, the run's facts
//! (the program its code objects name, the runtime, the GPUs; what the
//! plugin interface does not deliver said so, never "unknown"), one
//! timeline rect per kept interval (as many as the page states, and as the
//! trace has kernels and copies), each wide enough to see, and the top
//! kernel's name; a screenshot must not be blank. A missing `chromium`
//! fails the test, it never skips.

use std::path::{Path, PathBuf};
use std::process::Command;

use rocwasm_tests::*;

/// The `chromium` on PATH; fails with the command that installs it.
fn chromium() -> PathBuf {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join("chromium"))
            .find(|p| p.is_file())
    });
    found.unwrap_or_else(|| {
        panic!(
            "chromium is not installed: the report test renders the page in headless Chromium; \
             run `cargo xtask test` (it installs Debian's `chromium`) or `apt-get install chromium`"
        )
    })
}

/// `chromium --headless … EXTRA file://PAGE` with a fresh profile directory.
fn headless(page: &Path, extra: &[&str]) -> std::process::Output {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(
        out.status.success(),
        "chromium {extra:?} failed with {}:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Text as the DOM serialiser writes it inside an element.
fn in_dom(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The number in `attr="N"` of the DOM.
fn attr(dom: &str, attr: &str) -> u64 {
    let at = dom
        .find(&format!("{attr}=\""))
        .unwrap_or_else(|| panic!("no {attr} in the page"))
        + attr.len()
        + 2;
    let len = dom[at..].find('"').unwrap();
    dom[at..at + len].parse().unwrap()
}

/// The `width` of every timeline slice (`<rect class="iv" …>`) of a page.
pub(super) fn slice_widths(page: &str) -> Vec<f64> {
    page.split("<rect class=\"iv\"")
        .skip(1)
        .map(|rect| {
            let at = rect.find(" width=\"").expect("a slice without a width") + 8;
            let len = rect[at..].find('"').unwrap();
            rect[at..at + len].parse().expect("a numeric width")
        })
        .collect()
}

/// The narrowest a slice may be drawn and still be seen, in CSS pixels
/// (the page's SVG is drawn 1:1).
pub(super) const VISIBLE_PX: f64 = 2.0;

/// The text of the `#meta` row headed `key`.
pub(super) fn meta_row<'a>(page: &'a str, key: &str) -> &'a str {
    let head = format!("<th>{key}</th><td>");
    let at = page
        .find(&head)
        .unwrap_or_else(|| panic!("no `{key}` row in the page's #meta"))
        + head.len();
    &page[at..at + page[at..].find("</td>").unwrap()]
}

fn copies_in(path: &Path) -> u64 {
    csv::Reader::from_path(path).unwrap().records().count() as u64
}

#[test]
fn the_report_renders_in_headless_chromium() {
    let browser = chromium();
    plugins_dir(&["report", "kernel-stats", "api-stats", "memcpy-bandwidth"]);
    let tmp = tempfile::tempdir().unwrap();
    let sample = workspace().join("examples/traces/sample");
    let recording = sample.join("sample_results.json");
    let chain = workspace().join("examples/chains/default.toml");
    let o = rocwasm(
        &[
            "replay",
            recording.to_str().unwrap(),
            "-c",
            chain.to_str().unwrap(),
            "-d",
            "out",
        ],
        tmp.path(),
    );
    assert_success(&o, "rocwasm replay -c default.toml");
    let page = tmp.path().join("out/report.html");
    assert!(
        page.is_file(),
        "the default chain wrote no {}",
        page.display()
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<script"), "the page runs no scripts");
    assert!(
        !html.contains(" src=") && !html.contains("<link") && !html.contains("url("),
        "the page fetches nothing"
    );

    // The DOM as Chromium built it.
    let out = headless(&page, &["--dump-dom"]);
    let dom = String::from_utf8_lossy(&out.stdout);
    for id in ["meta", "timeline", "top-kernels", "top-apis", "bandwidth"] {
        assert!(
            dom.contains(&format!("<section id=\"{id}\">")),
            "no section #{id} in the rendered page ({} bytes, {browser:?})",
            dom.len()
        );
    }
    let kernels = kernel_durations(&sample.join("sample_kernel_trace.csv"));
    let dispatches: u64 = kernels.values().map(|d| d.len() as u64).sum();
    let copies = copies_in(&sample.join("sample_memory_copy_trace.csv"));
    let rects = dom.matches("<rect class=\"iv\"").count() as u64;
    assert_eq!(
        rects,
        attr(&dom, "data-kept"),
        "one rect per interval the page states"
    );
    assert_eq!(
        attr(&dom, "data-seen"),
        dispatches + copies,
        "every kernel and copy seen"
    );
    assert_eq!(rects, dispatches + copies, "under the limit, all are drawn");
    let (top, _) = kernels
        .iter()
        .max_by_key(|(_, d)| d.iter().sum::<u64>())
        .unwrap();
    let top_kernels = &dom[dom.find("<section id=\"top-kernels\">").unwrap()..];
    assert!(
        top_kernels.contains(&in_dom(top)),
        "the top kernel {top:?} is not in #top-kernels"
    );
    assert!(
        dom.contains("hipLaunchKernel"),
        "the top API calls name hipLaunchKernel"
    );
    assert!(dom.contains("HOST_TO_DEVICE"), "bandwidth per direction");

    // The run's facts: what results.json records (command `/opt/app/bin/app
    // --size 80`, two MI210s, node01, pid 4266); rocprofv3's JSON does not
    // name a back end.
    let meta = &dom[dom.find("<section id=\"meta\">").unwrap()..];
    let meta = &meta[..meta.find("</section>").unwrap()];
    assert_eq!(meta_row(meta, "Program"), "/opt/app/bin/app", "{meta}");
    assert!(
        meta_row(meta, "Runtime")
            .starts_with("replayed recording of a run on the AMD ROCm runtime"),
        "{meta}"
    );
    assert_eq!(meta_row(meta, "Arguments"), "--size 80");
    assert_eq!(
        meta_row(meta, "Back end"),
        "not recorded: the records were read from a recording that does not name it"
    );
    assert_eq!(meta_row(meta, "GPUs"), "2 × gfx90a (AMD Instinct MI210)");
    assert_eq!(meta_row(meta, "Host"), "node01");
    assert_eq!(meta_row(meta, "Process"), "pid 4266");
    assert!(!meta.contains("unknown"), "no fact is `unknown`: {meta}");

    // Every slice visible: the sample's 1.2 µs kernels in a 5.3 ms run
    // would be a fifth of a pixel wide.
    let widths = slice_widths(&dom);
    assert_eq!(widths.len() as u64, rects);
    let thin: Vec<&f64> = widths.iter().filter(|w| **w < VISIBLE_PX).collect();
    assert!(
        thin.is_empty(),
        "{} of {} timeline slices are narrower than {VISIBLE_PX} px: {thin:?}",
        thin.len(),
        widths.len()
    );

    // A screenshot that is not blank.
    let png = tmp.path().join("report.png");
    headless(
        &page,
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1280,2000",
            "--hide-scrollbars",
        ],
    );
    let bytes = std::fs::read(&png).expect("chromium wrote the screenshot");
    assert!(
        bytes.len() > 10_000,
        "a {}-byte screenshot is blank",
        bytes.len()
    );
    let mut reader = png::Decoder::new(std::io::Cursor::new(&bytes))
        .read_info()
        .expect("the screenshot is a PNG");
    let mut pixels = vec![0; reader.output_buffer_size().expect("a sane PNG")];
    let frame = reader.next_frame(&mut pixels).expect("PNG pixel data");
    assert_eq!((frame.width, frame.height), (1280, 2000));
    let mut colours = std::collections::HashSet::new();
    let stride = frame.color_type.samples() * usize::from(frame.bit_depth as u8).div_ceil(8);
    for px in pixels[..frame.buffer_size()].chunks(stride) {
        colours.insert(px.to_vec());
        if colours.len() > 50 {
            break;
        }
    }
    assert!(
        colours.len() > 50,
        "the screenshot has {} colours: blank",
        colours.len()
    );
    // `ROCWASM_SAVE_REPORT_PNG=1` refreshes the README's screenshot.
    if std::env::var_os("ROCWASM_SAVE_REPORT_PNG").is_some() {
        std::fs::copy(&png, workspace().join("docs/report.png")).unwrap();
    }
}
