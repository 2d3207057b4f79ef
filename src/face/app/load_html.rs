//! The HTML report of a load run (`mcpspec load --html`, `report merge --html`): one
//! self-contained page (inline CSS and SVG, no script, no external resource) with the
//! profile, the totals, the budgets and their verdicts, the latency percentiles of the run,
//! each step, method, tool and scenario, the stages of a stepped load, and two charts:
//! latency over time (p50 and p99 a second, with the achieved rate) and the latency by
//! percentile of the whole run. Every text is redacted and escaped as in the run's HTML
//! report ([`crate::results::report::html`]).

use std::fmt::Write as _;

use crate::language::dsl::workload::Stage;
use crate::results::report::page::escape_html;
use crate::results::report::page::{Page, TABLE_STYLE};
use crate::run::load::budget::Verdict;
use crate::run::load::record::{Latency, SecondSummary, Summary};

/// The load section's own styles, after the run report's and the tables'.
const LOAD_STYLE: &str = r#"
section.load{border:1px solid var(--line);border-radius:8px;margin:10px 0;padding:8px 12px}
section.load h2{margin:12px 0 6px}
svg.chart{display:block;max-width:100%;height:auto;border:1px solid var(--line);border-radius:6px;background:#fff}
svg.chart text{font:11px system-ui,sans-serif;fill:var(--muted)}
svg.chart .grid{stroke:#eaeef2;stroke-width:1}svg.chart .axis{stroke:var(--line);stroke-width:1}
svg.chart .band{fill:#f6f8fa}svg.chart .band.odd{fill:#eef2f6}
svg.chart polyline{fill:none;stroke-width:2;stroke-linejoin:round}
.p50{stroke:#0969da;fill:#0969da}.p99{stroke:var(--fail);fill:var(--fail)}.rate{stroke:var(--pass);fill:var(--pass)}
polyline.rate{stroke-dasharray:5 3}
.legend span{display:inline-block;margin-right:14px}.legend i{display:inline-block;width:18px;height:3px;vertical-align:middle;margin-right:4px}
.legend i.p50{background:#0969da}.legend i.p99{background:var(--fail)}.legend i.rate{background:var(--pass)}
.warning{color:var(--warn);font-weight:600}
"#;

/// What the page shows of one load run (or of merged shards).
pub(super) struct LoadPage<'a> {
    pub target: &'a str,
    pub transport: &'a str,
    pub era: &'a str,
    pub started_at: &'a str,
    pub mcpspec_version: &'a str,
    /// The profile as the console says it (pace, length, warm-up, ...).
    pub profile: &'a str,
    pub target_rate: Option<f64>,
    /// `shard 2/3`, `merged from 3 shards`.
    pub shards: Option<String>,
    pub ended_why: &'a str,
    pub ended_at: f64,
    pub ended_early: bool,
    pub unfinished: u64,
    pub summary: &'a Summary,
    pub budgets: &'a [Verdict],
    pub warnings: &'a [String],
    /// The stages of a stepped load as paced (their lengths place the bands on the chart).
    pub stages: &'a [Stage],
    pub series: &'a [SecondSummary],
    /// mcpspec's own CPU use, as the console says it.
    pub generator_cpu: Option<String>,
    pub passed: bool,
}

/// The page, every text redacted of `secrets` and escaped.
pub(super) fn to_html(p: &LoadPage<'_>, secrets: &[String]) -> String {
    let (page, mut out) = begin(secrets, p.target, 32 * 1024);
    let _ = writeln!(
        out,
        "<h1>mcpspec load report</h1><div class=\"meta\">{} · {} · era {} · started {} · mcpspec {}</div>",
        page.text(p.target),
        page.text(p.transport),
        page.text(p.era),
        page.text(p.started_at),
        page.text(p.mcpspec_version),
    );
    let s = p.summary;
    let verdict = if p.passed { "PASS" } else { "FAIL" };
    let broke = p.budgets.iter().filter(|b| !b.passed).count();
    let _ = writeln!(
        out,
        "<div class=\"totals\" id=\"totals\"><span class=\"badge b-{verdict}\">{verdict}</span>\
         <span>{} iterations</span><span>{} failed ({:.2}%)</span><span>{} requests</span>\
         <span>{:.1} iterations/s</span><span>{} of {} budgets broke</span></div>",
        s.iterations,
        s.failed_iterations,
        s.error_rate,
        s.requests,
        s.iterations_per_second,
        broke,
        p.budgets.len()
    );
    out.push_str("<section class=\"load\" id=\"load\">\n");
    page.profile(&mut out, p);
    page.totals(&mut out, p);
    page.budgets(&mut out, p.budgets);
    page.percentiles(&mut out, s);
    page.stages(&mut out, p);
    out.push_str("<h2>Latency over time</h2>\n");
    over_time(&mut out, p);
    out.push_str("<h2>Latency by percentile</h2>\n");
    by_percentile(&mut out, &s.histogram);
    out.push_str("</section>\n</body></html>\n");
    out
}

/// A load page: its head, titled with the target.
fn begin(secrets: &[String], target: &str, capacity: usize) -> (Page, String) {
    let style = format!("{TABLE_STYLE}{LOAD_STYLE}");
    Page::begin(secrets, "mcpspec load report", target, &style, capacity)
}

fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), |ms| format!("{ms:.1}ms"))
}

impl Page {
    fn profile(&self, out: &mut String, p: &LoadPage<'_>) {
        out.push_str("<h2>Profile</h2>\n");
        let mut rows = vec![
            ("profile", p.profile.to_string()),
            ("era", p.era.to_string()),
            ("transport", p.transport.to_string()),
            ("target", p.target.to_string()),
        ];
        // A stepped load's target is each step's (the step table).
        if let Some(rate) = p.target_rate.filter(|_| p.stages.is_empty()) {
            rows.push(("target rate", format!("{rate}/s")));
        }
        if let Some(shards) = &p.shards {
            rows.push(("shards", shards.clone()));
        }
        rows.push((
            "ended",
            format!(
                "{} at {:.1}s{}",
                p.ended_why,
                p.ended_at,
                if p.ended_early {
                    " (early: the numbers are those measured up to then)"
                } else {
                    ""
                }
            ),
        ));
        if let Some(cpu) = &p.generator_cpu {
            rows.push(("generator CPU", cpu.clone()));
        }
        self.pairs(out, "profile", &rows);
    }

    fn totals(&self, out: &mut String, p: &LoadPage<'_>) {
        let s = p.summary;
        out.push_str("<h2>Totals</h2>\n");
        let mut rows = vec![
            (
                "iterations",
                format!(
                    "{} ({} failed, {:.2}%) in {:.1}s",
                    s.iterations, s.failed_iterations, s.error_rate, s.measured_seconds
                ),
            ),
            ("requests", s.requests.to_string()),
            (
                "achieved rate",
                format!(
                    "{:.1} iterations/s{}, {:.1} requests/s",
                    s.iterations_per_second,
                    p.target_rate
                        .filter(|_| p.stages.is_empty())
                        .map_or(String::new(), |t| format!(" (target {t}/s)")),
                    s.requests_per_second
                ),
            ),
        ];
        if s.errors.is_empty() {
            rows.push(("errors", "none".into()));
        }
        for (kind, n) in &s.errors {
            let first = s.first_errors.get(kind).map_or("", String::as_str);
            rows.push(("errors", format!("{kind}: {n} (first: {first})")));
        }
        if s.skipped_iterations > 0 {
            rows.push((
                "skipped",
                format!(
                    "{} iteration(s) ran no step ({}), not in the numbers",
                    s.skipped_iterations,
                    s.skip_reason.as_deref().unwrap_or("")
                ),
            ));
        }
        if p.unfinished > 0 {
            rows.push((
                "unfinished",
                format!(
                    "{} iteration(s) in flight or due and not started when the run ended (not in the numbers)",
                    p.unfinished
                ),
            ));
        }
        self.pairs(out, "totals-table", &rows);
        for w in p.warnings {
            let _ = writeln!(out, "<p class=\"warning\">warning: {}</p>", self.text(w));
        }
    }

    fn budgets(&self, out: &mut String, budgets: &[Verdict]) {
        out.push_str("<h2>Budgets</h2>\n<table class=\"budgets\" id=\"budgets\">\n<tr><th>verdict</th><th>budget</th><th>holds for</th><th class=\"num\">limit</th><th class=\"num\">measured</th></tr>\n");
        for b in budgets {
            let (status, label) = if b.passed {
                ("passed", "PASS")
            } else {
                ("failed", "FAIL")
            };
            let _ = writeln!(
                out,
                "<tr class=\"{status}\" data-status=\"{status}\"><td><span class=\"badge b-{label}\">{label}</span></td>\
                 <td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                self.text(&b.name),
                self.text(&b.scope),
                self.text(&b.limit),
                self.text(&b.measured)
            );
        }
        out.push_str("</table>\n");
    }

    /// p50/p90/p95/p99/max of the iterations, each step, method, tool and scenario.
    fn percentiles(&self, out: &mut String, s: &Summary) {
        out.push_str(
            "<h2>Latency percentiles</h2>\n<table class=\"percentiles\" id=\"percentiles\">\n\
             <tr><th>kind</th><th>name</th><th class=\"num\">count</th><th class=\"num\">errors</th>\
             <th class=\"num\">p50</th><th class=\"num\">p90</th><th class=\"num\">p95</th>\
             <th class=\"num\">p99</th><th class=\"num\">max</th></tr>\n",
        );
        let mut row = |kind: &str, name: &str, count: u64, errors: u64, l: &Latency| {
            let _ = writeln!(
                out,
                "<tr data-kind=\"{kind}\"><td>{kind}</td><td>{}</td><td class=\"num\">{count}</td>\
                 <td class=\"num\">{errors}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                self.text(name),
                ms(l.p50_ms),
                ms(l.p90_ms),
                ms(l.p95_ms),
                ms(l.p99_ms),
                ms(l.max_ms)
            );
        };
        row(
            "run",
            "all iterations",
            s.iterations,
            s.failed_iterations,
            &s.latency,
        );
        for st in &s.steps {
            let name = format!("{} / {}", st.scenario, st.step);
            row("step", &name, st.requests, st.errors, &st.latency);
        }
        for (kind, groups) in [
            ("method", &s.methods),
            ("tool", &s.tools),
            ("scenario", &s.scenarios),
        ] {
            for g in groups {
                row(kind, &g.name, g.count, g.errors, &g.latency);
            }
        }
        out.push_str("</table>\n");
    }

    /// The stages of a stepped load, each with its numbers.
    fn stages(&self, out: &mut String, p: &LoadPage<'_>) {
        let stages = &p.summary.stages;
        if stages.is_empty() {
            return;
        }
        out.push_str(
            "<h2>Load steps</h2>\n<table class=\"stages\" id=\"stages\">\n<tr><th>step</th><th>pace</th>\
             <th class=\"num\">seconds</th><th class=\"num\">iterations</th><th class=\"num\">achieved</th>\
             <th class=\"num\">failed</th><th class=\"num\">p50</th><th class=\"num\">p99</th></tr>\n",
        );
        for st in stages {
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{:.0}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{:.1}/s</td><td class=\"num\">{} ({:.2}%)</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td></tr>",
                st.stage,
                self.text(&st.pace),
                st.seconds,
                st.iterations,
                st.iterations_per_second,
                st.failed_iterations,
                st.error_rate,
                ms(st.latency.p50_ms),
                ms(st.latency.p99_ms)
            );
        }
        out.push_str("</table>\n");
    }
}

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
fn axis(max: f64) -> (f64, f64) {
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
fn over_time(out: &mut String, p: &LoadPage<'_>) {
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
fn by_percentile(out: &mut String, counts: &[[u64; 2]]) {
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

/// One step of `--find-limit`, as its table shows it.
pub(super) struct LimitRow {
    pub rate: f64,
    pub iterations: u64,
    pub per_second: f64,
    pub error_rate: f64,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub held: bool,
    /// The budgets it broke (with what was measured), and why it ended early.
    pub broke: Vec<String>,
}

/// What the page of `--find-limit` shows: the search and its step table.
pub(super) struct LimitPage<'a> {
    pub target: &'a str,
    pub era: &'a str,
    pub started_at: &'a str,
    pub mcpspec_version: &'a str,
    /// `from 3/s, doubling, 3s a step`.
    pub search: String,
    /// `6/s held, 12/s broke a budget`.
    pub limit: String,
    pub held: bool,
    pub rows: Vec<LimitRow>,
}

/// The page of `--find-limit`: the last rate that held, and a row per step.
pub(super) fn limit_to_html(p: &LimitPage<'_>, secrets: &[String]) -> String {
    let (page, mut out) = begin(secrets, p.target, 8 * 1024);
    let _ = writeln!(
        out,
        "<h1>mcpspec load report: find limit</h1><div class=\"meta\">{} · era {} · started {} · mcpspec {}</div>",
        page.text(p.target),
        page.text(p.era),
        page.text(p.started_at),
        page.text(p.mcpspec_version),
    );
    let verdict = if p.held { "PASS" } else { "FAIL" };
    let _ = writeln!(
        out,
        "<div class=\"totals\" id=\"totals\"><span class=\"badge b-{verdict}\">{verdict}</span>\
         <span>limit: {}</span><span>{}</span></div>",
        page.text(&p.limit),
        page.text(&p.search)
    );
    out.push_str(
        "<section class=\"load\" id=\"load\">\n<h2>Steps</h2>\n<table class=\"stages\" id=\"stages\">\n\
         <tr><th>verdict</th><th class=\"num\">rate</th><th class=\"num\">iterations</th>\
         <th class=\"num\">achieved</th><th class=\"num\">failed</th><th class=\"num\">p50</th>\
         <th class=\"num\">p99</th><th>broke</th></tr>\n",
    );
    for r in &p.rows {
        let (status, label) = if r.held {
            ("passed", "PASS")
        } else {
            ("failed", "FAIL")
        };
        let _ = writeln!(
            out,
            "<tr class=\"{status}\" data-status=\"{status}\"><td><span class=\"badge b-{label}\">{label}</span></td>\
             <td class=\"num\">{}/s</td><td class=\"num\">{}</td><td class=\"num\">{:.1}/s</td>\
             <td class=\"num\">{:.2}%</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            r.rate,
            r.iterations,
            r.per_second,
            r.error_rate,
            ms(r.p50_ms),
            ms(r.p99_ms),
            page.text(&r.broke.join("; "))
        );
    }
    out.push_str("</table>\n</section>\n</body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
