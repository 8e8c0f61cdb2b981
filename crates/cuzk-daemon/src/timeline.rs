//! A timeline picture (SVG) of a run: one lane per worker showing when it was busy, then one
//! row per partition showing its stages, so waiting shows up as gaps.

use std::collections::BTreeMap;
use std::fmt::Write;

/// One stage span, as `cuzk.diag.v1.GetTrace` returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpanRec {
    pub job: String,
    pub partition: u32,
    pub stage: String,
    pub worker: u32,
    pub start_us: u64,
    pub end_us: u64,
}

const WIDTH: f64 = 1200.0;
const LEFT: f64 = 140.0;
const ROW: f64 = 14.0;
/// Partition rows drawn at most; later ones are summarised in a note.
const MAX_ROWS: usize = 300;

fn color(stage: &str) -> &'static str {
    match stage {
        "load" => "#9e9e9e",
        "synthesis" => "#4e79a7",
        "backend" => "#f28e2b",
        "verify" => "#59a14f",
        _ => "#bab0ac",
    }
}

/// Fraction of `[t0, t1]` covered by the union of `spans`.
pub fn busy_ratio(spans: &[&SpanRec], t0: u64, t1: u64) -> f64 {
    if t1 <= t0 {
        return 0.0;
    }
    let mut iv: Vec<(u64, u64)> = spans
        .iter()
        .map(|s| (s.start_us.max(t0), s.end_us.min(t1)))
        .filter(|(a, b)| a < b)
        .collect();
    iv.sort_unstable();
    let (mut covered, mut cur) = (0, None::<(u64, u64)>);
    for (a, b) in iv {
        cur = match cur {
            Some((ca, cb)) if a <= cb => Some((ca, cb.max(b))),
            Some((ca, cb)) => {
                covered += cb - ca;
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    if let Some((a, b)) = cur {
        covered += b - a;
    }
    covered as f64 / (t1 - t0) as f64
}

/// Renders `spans` between `t0` and `t1` (microseconds on the daemon's clock).
pub fn svg(spans: &[SpanRec], t0: u64, t1: u64, title: &str) -> String {
    let t1 = t1.max(t0 + 1);
    let x =
        |t: u64| LEFT + (t.clamp(t0, t1) - t0) as f64 / (t1 - t0) as f64 * (WIDTH - LEFT - 10.0);
    // Lanes: backend workers first (the resource that must stay busy), then CPU workers.
    let mut lanes: BTreeMap<(u8, u32), Vec<&SpanRec>> = BTreeMap::new();
    let mut rows: BTreeMap<(String, u32), Vec<&SpanRec>> = BTreeMap::new();
    for s in spans {
        let lane = match s.stage.as_str() {
            "backend" => (0, s.worker),
            "verify" => (2, 0),
            _ => (1, s.worker),
        };
        lanes.entry(lane).or_default().push(s);
        rows.entry((s.job.clone(), s.partition))
            .or_default()
            .push(s);
    }
    let mut rows: Vec<_> = rows.into_iter().collect();
    rows.sort_by_key(|(_, v)| v.iter().map(|s| s.start_us).min());
    let shown = rows.len().min(MAX_ROWS);
    let height = 60.0 + (lanes.len() + shown + 2) as f64 * ROW + 40.0;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="monospace" font-size="10">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="10" y="16" font-size="13">{}</text>"#,
        escape(title)
    );
    let secs = (t1 - t0) as f64 / 1e6;
    for i in 0..=10 {
        let t = t0 + (t1 - t0) * i / 10;
        let _ = writeln!(
            out,
            r##"<line x1="{0:.1}" y1="26" x2="{0:.1}" y2="{1}" stroke="#eee"/><text x="{0:.1}" y="36" text-anchor="middle">{2:.1}s</text>"##,
            x(t),
            height - 30.0,
            secs * i as f64 / 10.0
        );
    }
    let mut y = 44.0;
    for ((kind, worker), v) in &lanes {
        let name = match kind {
            0 => format!("backend {worker}"),
            1 => format!("cpu {worker}"),
            _ => "verify".to_string(),
        };
        let ratio = busy_ratio(v, t0, t1);
        let _ = writeln!(
            out,
            r#"<text x="4" y="{:.1}">{name} {:.0}%</text>"#,
            y + 10.0,
            ratio * 100.0
        );
        for s in v {
            rect(&mut out, x(s.start_us), x(s.end_us), y, s);
        }
        y += ROW;
    }
    y += ROW;
    for ((job, partition), v) in rows.iter().take(shown) {
        let _ = writeln!(
            out,
            r#"<text x="4" y="{:.1}">{} #{partition}</text>"#,
            y + 10.0,
            escape(job)
        );
        for s in v {
            rect(&mut out, x(s.start_us), x(s.end_us), y, s);
        }
        y += ROW;
    }
    if rows.len() > shown {
        let _ = writeln!(
            out,
            r#"<text x="4" y="{:.1}">… {} more partitions not drawn</text>"#,
            y + 10.0,
            rows.len() - shown
        );
    }
    let mut lx = LEFT;
    for stage in ["load", "synthesis", "backend", "verify"] {
        let _ = writeln!(
            out,
            r#"<rect x="{lx}" y="{:.1}" width="10" height="10" fill="{}"/><text x="{}" y="{:.1}">{stage}</text>"#,
            height - 20.0,
            color(stage),
            lx + 14.0,
            height - 11.0
        );
        lx += 90.0;
    }
    out.push_str("</svg>\n");
    out
}

fn rect(out: &mut String, x0: f64, x1: f64, y: f64, s: &SpanRec) {
    let _ = writeln!(
        out,
        r#"<rect x="{x0:.2}" y="{:.1}" width="{:.2}" height="{:.1}" fill="{}"><title>{} #{} {} {:.3}s</title></rect>"#,
        y + 1.0,
        (x1 - x0).max(0.5),
        ROW - 2.0,
        color(&s.stage),
        escape(&s.job),
        s.partition,
        s.stage,
        (s.end_us - s.start_us) as f64 / 1e6
    );
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(stage: &str, start_us: u64, end_us: u64) -> SpanRec {
        SpanRec {
            job: "job-1".into(),
            partition: 0,
            stage: stage.into(),
            worker: 0,
            start_us,
            end_us,
        }
    }

    #[test]
    fn busy_ratio_merges_overlaps_and_clips() {
        let s = [
            span("backend", 0, 40),
            span("backend", 20, 60),
            span("backend", 80, 200),
        ];
        let refs: Vec<&SpanRec> = s.iter().collect();
        assert!((busy_ratio(&refs, 0, 100) - 0.8).abs() < 1e-9);
        assert_eq!(busy_ratio(&refs, 60, 80), 0.0);
        assert_eq!(busy_ratio(&[], 0, 100), 0.0);
    }

    #[test]
    fn svg_has_a_lane_per_worker_and_a_row_per_partition() {
        let s = [
            span("synthesis", 0, 50),
            span("backend", 50, 90),
            span("verify", 90, 95),
        ];
        let out = svg(&s, 0, 100, "t <1>");
        assert!(out.starts_with("<svg") && out.ends_with("</svg>\n"));
        assert!(out.contains("backend 0 40%"));
        assert!(out.contains("job-1 #0"));
        assert!(out.contains("t &lt;1&gt;"));
        assert_eq!(out.matches("<title>").count(), 6); // each span in its lane and its row
    }
}
