//! The page: one HTML document with inline CSS and SVG, no scripts and
//! nothing fetched, so it opens the same offline, in a mail attachment or
//! from an archive.
//!
//! Sections (their element ids are part of the plugin's interface; the
//! browser test checks them): `meta`, `timeline`, `top-kernels`,
//! `top-apis`, `bandwidth`. Every kept interval is one
//! `<rect class="iv">` in the timeline's SVG; the element
//! `#timeline-count` states how many are drawn (`data-kept`) of how many
//! the run had (`data-seen`).
//!
//! The timeline spans the drawn intervals, from the first one's start to
//! the last one's end (not the API calls around them, which would squeeze
//! the GPU's work into a corner), and its axis reads time since the run's
//! first record. A slice is drawn at least [`MIN_SLICE_PX`] wide: a 4 µs
//! kernel in a 40 ms run would be a twentieth of a pixel.

use std::fmt::Write;

use crate::model::{Interval, Lane, What};

/// One bar of a bar chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub label: String,
    pub calls: u64,
    pub total_ns: u64,
}

/// One copy direction.
#[derive(Debug, Clone, PartialEq)]
pub struct Direction {
    pub name: String,
    pub copies: u64,
    pub bytes: u64,
    pub total_ns: u64,
}

impl Direction {
    /// Bytes per ns = decimal GB/s; 0 without duration.
    pub fn gbps(&self) -> f64 {
        if self.total_ns == 0 {
            0.0
        } else {
            self.bytes as f64 / self.total_ns as f64
        }
    }
}

/// A timeline interval with its names resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawn {
    pub lane: String,
    pub label: String,
    pub start: u64,
    pub end: u64,
    /// A CSS colour.
    pub color: String,
}

/// Everything rendered, names resolved.
#[derive(Debug, Clone, Default)]
pub struct Page {
    /// Key–value rows of the metadata table.
    pub meta: Vec<(String, String)>,
    pub span: Option<(u64, u64)>,
    pub intervals: Vec<Drawn>,
    pub seen: u64,
    pub limit: usize,
    pub kernels: Vec<Bar>,
    pub apis: Vec<Bar>,
    pub directions: Vec<Direction>,
}

const STYLE: &str =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fff}\
h1{font-size:22px;margin:0 0 12px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}\
table{border-collapse:collapse}td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:left}\
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}.note{color:#666;font-size:12px}\
svg text{font:11px system-ui,sans-serif;fill:#222}svg .axis{stroke:#999}";

/// Escapes text for HTML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `label`, cut to `max` characters with an ellipsis.
fn short(label: &str, max: usize) -> String {
    if label.chars().count() <= max {
        label.to_string()
    } else {
        label.chars().take(max - 1).chain(['…']).collect()
    }
}

/// Nanoseconds in a readable unit.
pub fn human_ns(ns: u64) -> String {
    let f = ns as f64;
    if ns >= 1_000_000_000 {
        format!("{:.3} s", f / 1e9)
    } else if ns >= 1_000_000 {
        format!("{:.3} ms", f / 1e6)
    } else if ns >= 1_000 {
        format!("{:.3} µs", f / 1e3)
    } else {
        format!("{ns} ns")
    }
}

/// A stable colour per key (kernel id, direction).
pub fn color_of(key: u64, saturation: u32) -> String {
    let hue = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) % 360;
    format!("hsl({hue},{saturation}%,55%)")
}

/// The lane label of an interval.
pub fn lane_label(lane: Lane, agent: &mut impl FnMut(u64) -> String) -> String {
    match lane {
        Lane::Queue { agent: a, queue } => format!("{} · queue {queue}", agent(a)),
        Lane::Stream(s) => format!("copies · stream {s}"),
    }
}

/// Resolves one interval's lane, label and colour.
pub fn draw(
    i: &Interval,
    agent: &mut impl FnMut(u64) -> String,
    kernel: &mut impl FnMut(u64) -> String,
    direction: &mut impl FnMut(u32) -> String,
) -> Drawn {
    let (label, color) = match i.what {
        What::Kernel(id) => (kernel(id), color_of(id, 65)),
        What::Copy {
            direction: d,
            bytes,
        } => (
            format!("{} ({bytes} B)", direction(d)),
            color_of(u64::from(d) + 0x1000, 25),
        ),
    };
    Drawn {
        lane: lane_label(i.lane, agent),
        label,
        start: i.start,
        end: i.end,
        color,
    }
}

/// The whole document.
pub fn render(page: &Page) -> String {
    let mut h = String::with_capacity(64 * 1024 + page.intervals.len() * 160);
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width\">");
    h.push_str("<title>rocwasm report</title><style>");
    h.push_str(STYLE);
    h.push_str("</style></head><body>\n<h1>rocwasm report</h1>\n");
    meta(&mut h, page);
    timeline(&mut h, page);
    bars(
        &mut h,
        "top-kernels",
        "Top kernels by total time",
        &page.kernels,
        "#3b7dd8",
    );
    bars(
        &mut h,
        "top-apis",
        "Top API calls by total time",
        &page.apis,
        "#d8843b",
    );
    bandwidth(&mut h, page);
    h.push_str("</body></html>\n");
    h
}

fn meta(h: &mut String, page: &Page) {
    h.push_str("<section id=\"meta\"><h2>Run</h2><table>");
    for (k, v) in &page.meta {
        let _ = write!(h, "<tr><th>{}</th><td>{}</td></tr>", escape(k), escape(v));
    }
    h.push_str("</table></section>\n");
}

const WIDTH: f64 = 1200.0;
const LABEL_W: f64 = 220.0;
const LANE_H: f64 = 22.0;
/// The narrowest a timeline slice is drawn, in pixels.
pub const MIN_SLICE_PX: f64 = 3.0;

fn timeline(h: &mut String, page: &Page) {
    h.push_str("<section id=\"timeline\"><h2>Timeline of kernels and memory copies</h2>");
    let kept = page.intervals.len();
    let _ = write!(
        h,
        "<p id=\"timeline-count\" class=\"note\" data-kept=\"{kept}\" data-seen=\"{}\">",
        page.seen
    );
    if kept as u64 == page.seen {
        let _ = write!(
            h,
            "All {kept} kernel dispatches and memory copies are drawn."
        );
    } else {
        let _ = write!(
            h,
            "{kept} of {} kernel dispatches and memory copies are drawn: the {} longest \
             (config key <code>max_intervals</code>); the tables below count them all.",
            page.seen, page.limit
        );
    }
    h.push_str("</p>");
    let Some((origin, _)) = page.span.filter(|_| kept > 0) else {
        h.push_str("<p>No kernels or copies were recorded.</p></section>\n");
        return;
    };
    // The drawn intervals' extent.
    let t0 = page
        .intervals
        .iter()
        .map(|d| d.start)
        .min()
        .unwrap_or(origin);
    let t1 = page.intervals.iter().map(|d| d.end).max().unwrap_or(t0);
    let _ = write!(
        h,
        "<p id=\"timeline-window\" class=\"note\">From {} to {} after the run's first record: \
         its first kernel or copy to its last. Slices shorter than {MIN_SLICE_PX} px are drawn \
         {MIN_SLICE_PX} px wide; hover one for its name and duration.</p>",
        human_ns(t0.saturating_sub(origin)),
        human_ns(t1.saturating_sub(origin)),
    );
    let mut lanes: Vec<&str> = page.intervals.iter().map(|d| d.lane.as_str()).collect();
    lanes.sort_unstable();
    lanes.dedup();
    let span = (t1 - t0).max(1) as f64;
    let plot = WIDTH - LABEL_W - 10.0;
    let x = |t: u64| LABEL_W + (t.saturating_sub(t0)) as f64 / span * plot;
    let height = lanes.len() as f64 * LANE_H + 30.0;
    let _ = write!(
        h,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"timeline\">"
    );
    for (n, lane) in lanes.iter().enumerate() {
        let y = n as f64 * LANE_H;
        let _ = write!(
            h,
            "<text x=\"4\" y=\"{:.1}\">{}</text><line class=\"axis\" x1=\"{LABEL_W}\" y1=\"{:.1}\" x2=\"{WIDTH}\" y2=\"{:.1}\"/>",
            y + 15.0,
            escape(&short(lane, 34)),
            y + LANE_H,
            y + LANE_H
        );
    }
    for d in &page.intervals {
        let lane = lanes.binary_search(&d.lane.as_str()).unwrap_or(0);
        let w = (x(d.end) - x(d.start)).max(MIN_SLICE_PX);
        // A widened slice at the end still ends on the plot.
        let x0 = x(d.start).min(LABEL_W + plot - w);
        let _ = write!(
            h,
            "<rect class=\"iv\" x=\"{x0:.2}\" y=\"{:.1}\" width=\"{w:.2}\" height=\"{:.1}\" fill=\"{}\"><title>{} — {}</title></rect>",
            lane as f64 * LANE_H + 3.0,
            LANE_H - 6.0,
            d.color,
            escape(&d.label),
            human_ns(d.end - d.start)
        );
    }
    let axis_y = lanes.len() as f64 * LANE_H + 20.0;
    for k in 0..=4 {
        let t = (span * k as f64 / 4.0) as u64;
        let _ = write!(
            h,
            "<text x=\"{:.1}\" y=\"{axis_y:.1}\" text-anchor=\"{}\">{}</text>",
            x(t0 + t),
            if k == 0 {
                "start"
            } else if k == 4 {
                "end"
            } else {
                "middle"
            },
            human_ns(t0 + t - origin)
        );
    }
    h.push_str("</svg></section>\n");
}

fn bars(h: &mut String, id: &str, title: &str, rows: &[Bar], fill: &str) {
    let _ = write!(h, "<section id=\"{id}\"><h2>{}</h2>", escape(title));
    if rows.is_empty() {
        h.push_str("<p>None recorded.</p></section>\n");
        return;
    }
    let max = rows.iter().map(|b| b.total_ns).max().unwrap_or(0).max(1) as f64;
    let label_w = 420.0;
    let bar_w = WIDTH - label_w - 200.0;
    let height = rows.len() as f64 * LANE_H + 4.0;
    let _ = write!(
        h,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\">"
    );
    for (n, b) in rows.iter().enumerate() {
        let y = n as f64 * LANE_H;
        let w = (b.total_ns as f64 / max * bar_w).max(1.0);
        let _ = write!(
            h,
            "<g class=\"bar\"><title>{}</title><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\
             <rect x=\"{label_w}\" y=\"{:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"{fill}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\">{} · {} call(s)</text></g>",
            escape(&b.label),
            label_w - 6.0,
            y + 15.0,
            escape(&short(&b.label, 64)),
            y + 3.0,
            LANE_H - 6.0,
            label_w + w + 6.0,
            y + 15.0,
            human_ns(b.total_ns),
            b.calls
        );
    }
    h.push_str("</svg></section>\n");
}

fn bandwidth(h: &mut String, page: &Page) {
    h.push_str("<section id=\"bandwidth\"><h2>Copy bandwidth per direction</h2>");
    if page.directions.is_empty() {
        h.push_str("<p>No memory copies were recorded.</p></section>\n");
        return;
    }
    h.push_str(
        "<table><tr><th>Direction</th><th class=\"n\">Copies</th><th class=\"n\">Bytes</th>\
         <th class=\"n\">Copy time</th><th class=\"n\">GB/s</th><th></th></tr>",
    );
    let max = page
        .directions
        .iter()
        .map(Direction::gbps)
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    for d in &page.directions {
        let w = (d.gbps() / max * 300.0).max(1.0);
        let _ = write!(
            h,
            "<tr class=\"direction\"><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{:.3}</td><td><svg width=\"310\" height=\"14\">\
             <rect x=\"0\" y=\"2\" width=\"{w:.1}\" height=\"10\" fill=\"#4caf7a\"/></svg></td></tr>",
            escape(&d.name),
            d.copies,
            d.bytes,
            human_ns(d.total_ns),
            d.gbps()
        );
    }
    h.push_str(
        "</table><p class=\"note\">GB/s = bytes / summed copy time (decimal GB/s); \
         overlapping copies each count their own time.</p></section>\n",
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_names_and_draws_one_rect_per_interval() {
        let page = Page {
            meta: vec![("Stage".into(), "<r&d>".into())],
            span: Some((100, 300)),
            intervals: vec![
                Drawn {
                    lane: "GPU 1 · queue 0".into(),
                    label: "void k<int>(int*)".into(),
                    start: 100,
                    end: 200,
                    color: "red".into(),
                },
                Drawn {
                    lane: "copies · stream 0".into(),
                    label: "H2D".into(),
                    start: 150,
                    end: 300,
                    color: "blue".into(),
                },
            ],
            seen: 5,
            limit: 2,
            kernels: vec![Bar {
                label: "void k<int>(int*)".into(),
                calls: 3,
                total_ns: 1500,
            }],
            ..Default::default()
        };
        let h = render(&page);
        assert_eq!(h.matches("<rect class=\"iv\"").count(), 2);
        assert!(h.contains("&lt;r&amp;d&gt;"));
        assert!(h.contains("void k&lt;int&gt;(int*)"));
        assert!(!h.contains("<script"));
        assert!(h.contains("data-kept=\"2\" data-seen=\"5\""));
        assert!(h.contains("2 of 5"));
        for id in ["meta", "timeline", "top-kernels", "top-apis", "bandwidth"] {
            assert!(h.contains(&format!("<section id=\"{id}\">")), "{id}");
        }
    }

    /// The `width` attributes of the timeline's rects.
    fn slice_widths(h: &str) -> Vec<f64> {
        h.split("<rect class=\"iv\"")
            .skip(1)
            .map(|r| {
                let at = r.find(" width=\"").unwrap() + 8;
                r[at..at + r[at..].find('"').unwrap()].parse().unwrap()
            })
            .collect()
    }

    #[test]
    fn short_slices_stay_visible_and_the_timeline_spans_the_gpus_work() {
        // A 40 ms run whose 4 µs kernels all come in its second half.
        let kernel = |start: u64| Drawn {
            lane: "GPU 1 · queue 0".into(),
            label: "k".into(),
            start,
            end: start + 4_000,
            color: "red".into(),
        };
        let page = Page {
            span: Some((0, 40_000_000)),
            intervals: vec![kernel(20_000_000), kernel(25_000_000), kernel(30_000_000)],
            seen: 3,
            limit: 10,
            ..Default::default()
        };
        let h = render(&page);
        let widths = slice_widths(&h);
        assert_eq!(widths.len(), 3);
        assert!(widths.iter().all(|&w| w >= MIN_SLICE_PX), "{widths:?}");
        // The axis runs from the first kernel to the last, in time since
        // the run's first record.
        assert!(
            h.contains("From 20.000 ms to 30.004 ms after the run"),
            "{h}"
        );
        assert!(h.contains(">20.000 ms</text>") && h.contains(">30.004 ms</text>"));
        // The last slice, widened, still ends on the plot.
        let last_x: f64 = {
            let r = h.rsplit("<rect class=\"iv\" x=\"").next().unwrap();
            r[..r.find('"').unwrap()].parse().unwrap()
        };
        assert!(last_x + MIN_SLICE_PX <= WIDTH - 10.0 + 1e-9, "{last_x}");
    }

    #[test]
    fn units_and_shortening() {
        assert_eq!(human_ns(999), "999 ns");
        assert_eq!(human_ns(1_500), "1.500 µs");
        assert_eq!(human_ns(2_000_000_000), "2.000 s");
        assert_eq!(short("abcdef", 4), "abc…");
    }
}
