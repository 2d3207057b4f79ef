//! The HTML report of a load run (`mcpspec load --html`, `report merge --html`): one
//! self-contained page (inline CSS and SVG, no script, no external resource) with the
//! profile, the totals, the budgets and their verdicts, the latency percentiles of the run,
//! each step, method, tool and scenario, the stages of a stepped load, and two charts:
//! latency over time (p50 and p99 a second, with the achieved rate) and the latency by
//! percentile of the whole run. Every text is redacted and escaped as in the run's HTML
//! report ([`crate::results::report::html`]).

mod charts;

use std::fmt::Write as _;

use crate::language::dsl::workload::Stage;
use crate::results::report::page::{Page, TABLE_STYLE};
use crate::run::load::budget::Verdict;
use crate::run::load::record::summary::{Latency, SecondSummary, Summary};

use charts::{by_percentile, over_time};

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
