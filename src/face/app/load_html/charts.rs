//! The SVG charts of a load page: the numbers over time and the latency by percentile.

use std::fmt::Write as _;

use super::{LoadPage, ms};
use crate::results::report::page::escape_html;
use crate::run::load::record::summary::SecondSummary;

/// The chart's size and plot area (SVG user units).
const WIDTH: f64 = 900.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 64.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 34.0;

/// Points of a second are marked with dots up to this many seconds.
const DOTS_UP_TO: usize = 60;

/// A round upper bound of an axis holding `max` (1, 2 or 5 times a power of ten), and its
/// tick step.
pub(super) fn axis(max: f64) -> (f64, f64) {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let magnitude = 10f64.powf(max.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        let top = m * magnitude;
        if top >= max {
            return (top, top / 4.0);
        }
    }
    (10.0 * magnitude, 2.5 * magnitude)
}

/// A number for an axis label: no needless decimals.
fn tick(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

/// A quantile as a percentile's number: `99.9` of 0.999.
fn percent(q: f64) -> String {
    let text = format!("{:.2}", q * 100.0);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `x,y` pairs of a polyline.
fn points(pts: &[(f64, f64)]) -> String {
    pts.iter()
        .map(|(x, y)| format!("{x:.1},{y:.1}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Latency over time: the p50 and p99 of each second's iterations (left axis, ms) and the
/// iterations that ended in it (right axis, /s); the stages of a stepped load as bands.
pub(super) fn over_time(out: &mut String, p: &LoadPage<'_>) {
    let series = p.series;
    if series.is_empty() {
        out.push_str("<p class=\"where\">nothing was measured</p>\n");
        return;
    }
    let staged: f64 = p.stages.iter().map(|s| s.duration.as_secs_f64()).sum();
    let span = (series.len() as f64).max(staged).max(1.0);
    let top_ms = series
        .iter()
        .filter_map(|s| s.p99_ms.or(s.p50_ms))
        .fold(0.0, f64::max);
    let (ms_top, ms_step) = axis(top_ms);
    let top_rate = series
        .iter()
        .map(|s| s.iterations as f64)
        .fold(0.0, f64::max);
    let (rate_top, rate_step) = axis(top_rate);
    let (w, h) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let x = |t: f64| LEFT + w * t / span;
    let y_ms = |v: f64| TOP + h * (1.0 - v / ms_top);
    let y_rate = |v: f64| TOP + h * (1.0 - v / rate_top);
    let _ = writeln!(
        out,
        "<svg class=\"chart\" id=\"latency-over-time\" \
         viewBox=\"0 0 {WIDTH} {HEIGHT}\" width=\"{WIDTH}\" height=\"{HEIGHT}\" role=\"img\" \
         aria-label=\"p50 and p99 latency and achieved rate, per second of the measured run\">"
    );
    let mut start = 0.0;
    for (i, stage) in p.stages.iter().enumerate() {
        let end = start + stage.duration.as_secs_f64();
        let _ = writeln!(
            out,
            "<rect class=\"band{}\" x=\"{:.1}\" y=\"{TOP}\" width=\"{:.1}\" height=\"{h}\"><title>step {}: {}</title></rect>\
             <text x=\"{:.1}\" y=\"{:.1}\">step {}: {}</text>",
            if i % 2 == 1 { " odd" } else { "" },
            x(start),
            x(end) - x(start),
            i + 1,
            escape_html(&stage.pace.describe()),
            x(start) + 4.0,
            TOP + 12.0,
            i + 1,
            escape_html(&stage.pace.describe()),
        );
        start = end;
    }
    for k in 0..=4 {
        let (v, r) = (ms_step * k as f64, rate_step * k as f64);
        let yy = y_ms(v);
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{LEFT}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}ms</text>\
             <text x=\"{:.1}\" y=\"{:.1}\">{}/s</text>",
            LEFT + w,
            LEFT - 6.0,
            yy + 4.0,
            tick(v),
            LEFT + w + 6.0,
            yy + 4.0,
            tick(r)
        );
    }
    let every = ((span / 10.0).ceil() as u64).max(1);
    let mut t = 0;
    while t as f64 <= span {
        let _ = writeln!(
            out,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{t}s</text>",
            x(t as f64),
            TOP + h + 16.0
        );
        t += every;
    }
    let _ = writeln!(
        out,
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/>\
         <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">seconds of the measured run</text>",
        TOP + h,
        LEFT + w,
        TOP + h,
        LEFT + w / 2.0,
        HEIGHT - 4.0
    );
    // The middle of each second.
    let mid = |s: &SecondSummary| x(s.second as f64 + 0.5);
    let rate: Vec<(f64, f64)> = series
        .iter()
        .map(|s| (mid(s), y_rate(s.iterations as f64)))
        .collect();
    let _ = writeln!(
        out,
        "<polyline class=\"rate\" points=\"{}\"/>",
        points(&rate)
    );
    for class in ["p50", "p99"] {
        let value = |s: &SecondSummary| if class == "p50" { s.p50_ms } else { s.p99_ms };
        // A second with no iteration has no latency: the line breaks there.
        let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for s in series {
            match value(s) {
                Some(v) => runs.last_mut().expect("one run").push((mid(s), y_ms(v))),
                None if runs.last().is_some_and(|r| !r.is_empty()) => runs.push(Vec::new()),
                None => {}
            }
        }
        for run in runs.iter().filter(|r| !r.is_empty()) {
            let _ = writeln!(
                out,
                "<polyline class=\"{class}\" points=\"{}\"/>",
                points(run)
            );
        }
        if series.len() <= DOTS_UP_TO {
            for (s, (px, py)) in series
                .iter()
                .filter_map(|s| value(s).map(|v| (s, (mid(s), y_ms(v)))))
            {
                let _ = writeln!(
                    out,
                    "<circle class=\"{class}\" cx=\"{px:.1}\" cy=\"{py:.1}\" r=\"2.5\"><title>second {}: {class} {}</title></circle>",
                    s.second,
                    ms(value(s))
                );
            }
        }
    }
    out.push_str("</svg>\n");
    out.push_str(
        "<div class=\"legend\"><span><i class=\"p50\"></i>p50 (left axis)</span>\
         <span><i class=\"p99\"></i>p99 (left axis)</span>\
         <span><i class=\"rate\"></i>iterations ended a second (right axis)</span></div>\n",
    );
}

/// The percentiles the distribution chart marks, as fractions.
const QUANTILES: [f64; 11] = [
    0.0, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9995, 0.9999,
];

/// The latency of quantile `q` of a histogram's `[microseconds, count]` pairs, in ms.
fn quantile(counts: &[[u64; 2]], total: u64, q: f64) -> Option<f64> {
    let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
    let mut seen = 0;
    for [micros, count] in counts {
        seen += count;
        if seen >= rank {
            return Some(*micros as f64 / 1000.0);
        }
    }
    counts.last().map(|[micros, _]| *micros as f64 / 1000.0)
}

/// The latency of the whole run by percentile, on a "nines" axis (0 %, 90 %, 99 %, 99.9 %,
/// 99.99 %), to the percentiles the iterations can tell (with n of them, up to 1 - 1/n).
pub(super) fn by_percentile(out: &mut String, counts: &[[u64; 2]]) {
    let total: u64 = counts.iter().map(|[_, c]| c).sum();
    if total == 0 {
        out.push_str("<p class=\"where\">nothing was measured</p>\n");
        return;
    }
    let nines = |q: f64| -(1.0 - q).log10();
    let told: Vec<f64> = QUANTILES
        .iter()
        .copied()
        .filter(|q| *q <= 1.0 - 1.0 / total as f64 || *q == 0.0)
        .collect();
    let span = told.last().map_or(1.0, |q| nines(*q)).max(1.0);
    let values: Vec<(f64, f64)> = told
        .iter()
        .filter_map(|q| quantile(counts, total, *q).map(|v| (*q, v)))
        .collect();
    let top = values.iter().map(|(_, v)| *v).fold(0.0, f64::max);
    let (ms_top, ms_step) = axis(top);
    let (w, h) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
    let x = |q: f64| LEFT + w * nines(q) / span;
    let y = |v: f64| TOP + h * (1.0 - v / ms_top);
    let _ = writeln!(
        out,
        "<svg class=\"chart\" id=\"latency-by-percentile\" \
         viewBox=\"0 0 {WIDTH} {HEIGHT}\" width=\"{WIDTH}\" height=\"{HEIGHT}\" role=\"img\" \
         aria-label=\"latency of the iterations by percentile\">"
    );
    for k in 0..=4 {
        let v = ms_step * k as f64;
        let _ = writeln!(
            out,
            "<line class=\"grid\" x1=\"{LEFT}\" y1=\"{yy:.1}\" x2=\"{:.1}\" y2=\"{yy:.1}\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}ms</text>",
            LEFT + w,
            LEFT - 6.0,
            y(v) + 4.0,
            tick(v),
            yy = y(v)
        );
    }
    for (q, label) in [
        (0.0, "0%"),
        (0.9, "90%"),
        (0.99, "99%"),
        (0.999, "99.9%"),
        (0.9999, "99.99%"),
    ] {
        if nines(q) <= span + 1e-9 {
            let _ = writeln!(
                out,
                "<line class=\"grid\" x1=\"{xx:.1}\" y1=\"{TOP}\" x2=\"{xx:.1}\" y2=\"{:.1}\"/>\
                 <text x=\"{xx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{label}</text>",
                TOP + h,
                TOP + h + 16.0,
                xx = x(q)
            );
        }
    }
    let line: Vec<(f64, f64)> = values.iter().map(|(q, v)| (x(*q), y(*v))).collect();
    let _ = writeln!(
        out,
        "<polyline class=\"p99\" points=\"{}\"/>",
        points(&line)
    );
    for (q, v) in &values {
        let _ = writeln!(
            out,
            "<circle class=\"p99\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"2.5\"><title>p{} {}</title></circle>",
            x(*q),
            y(*v),
            percent(*q),
            ms(Some(*v))
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">percentile of the iterations</text></svg>",
        LEFT + w / 2.0,
        HEIGHT - 4.0
    );
}

#[cfg(test)]
mod tests {
    use super::{axis, percent, quantile};

    #[test]
    fn axes_round_up_and_quantiles_read_the_counts() {
        assert_eq!(axis(7.3), (10.0, 2.5));
        assert_eq!(axis(130.0), (200.0, 50.0));
        assert_eq!(axis(0.0), (1.0, 0.25));
        let counts = [[1000, 50], [2000, 49], [9000, 1]];
        assert_eq!(quantile(&counts, 100, 0.5), Some(1.0));
        assert_eq!(quantile(&counts, 100, 0.99), Some(2.0));
        assert_eq!(quantile(&counts, 100, 1.0), Some(9.0));
        assert_eq!(quantile(&counts, 100, 0.0), Some(1.0));
        assert_eq!(
            (percent(0.0), percent(0.9995), percent(0.5)),
            ("0".into(), "99.95".into(), "50".into())
        );
    }
}
