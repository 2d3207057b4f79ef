//! The HTML page of `eval compare --html`: the verdict, the counts, the success and judge
//! statistics, what each run spent, then the tasks by bucket ([`super::compare_view`]):
//! regressions first (with why), judge-score changes, improvements, missing or never
//! judged, unchanged. One self-contained page (inline CSS, no script), every text
//! redacted and escaped ([`crate::results::report::page`]).

use std::fmt::Write as _;

use super::compare::findings::Regression;
use super::compare::{Comparison, Side, TaskDelta, num, pct};
use super::compare_output::{Labels, arrow, counts_text, total_text, verdict};
use super::compare_view::{JudgeChange, Spend, View};
use super::report_html::EVAL_STYLE;
use super::results::SetKind;
use crate::results::report::page::{Page, TABLE_STYLE};

/// The page, every text redacted of `secrets` and escaped.
pub fn to_html(c: &Comparison, labels: &Labels, spend: &Spend, secrets: &[String]) -> String {
    let style = format!("{TABLE_STYLE}{EVAL_STYLE}");
    let (page, mut out) = Page::begin(secrets, "mcpspec eval compare", &c.set, &style, 16 * 1024);
    let badge = if c.incomplete.is_some() {
        "ERROR"
    } else if c.regression {
        "FAIL"
    } else {
        "PASS"
    };
    let _ = writeln!(
        out,
        "<h1>mcpspec eval compare</h1><div class=\"meta\">set {} ({} set, pass rate {}) · mcpspec {}</div>\
         <div class=\"totals\" id=\"verdict\"><span class=\"badge b-{badge}\">{badge}</span> <span>{}</span></div>",
        page.text(&c.set),
        match c.kind {
            SetKind::Regression => "regression",
            SetKind::Capability => "capability",
        },
        pct(c.pass_rate),
        env!("CARGO_PKG_VERSION"),
        page.text(&verdict(c)),
    );
    if let Some(why) = &c.incomplete {
        let _ = writeln!(out, "<p class=\"setup\">{}</p>", page.text(why));
    }
    for w in &c.warnings {
        let _ = writeln!(out, "<p class=\"warning\">warning: {}</p>", page.text(w));
    }
    summary(&page, &mut out, c, labels, spend);
    let view = View::of(c);
    let sections: [(&str, &str, &[&TaskDelta]); 4] = [
        ("regressions", "Regressions", &view.regressions),
        ("improvements", "Improvements", &view.improvements),
        ("missing", "Missing or never judged", &view.missing),
        ("unchanged", "Unchanged", &view.unchanged),
    ];
    for (i, (id, title, tasks)) in sections.into_iter().enumerate() {
        tasks_table(&page, &mut out, id, title, tasks);
        if i == 0 {
            judge_changes(&page, &mut out, &view.judge_changes);
        }
    }
    out.push_str("</body></html>\n");
    out
}

fn summary(page: &Page, out: &mut String, c: &Comparison, labels: &Labels, spend: &Spend) {
    let n = &c.counts;
    let st = &c.success;
    let mut rows = vec![
        ("base", labels.base.to_string()),
        ("candidate", labels.candidate.to_string()),
        ("pairing", c.pairing.description.clone()),
        (
            "tasks",
            format!("{}; {} flagged", counts_text(n), n.regressions),
        ),
        (
            "success rate",
            format!(
                "{} → {} (Δ {:+.1} pp; McNemar exact p {:.4})",
                pct(st.base),
                pct(st.candidate),
                st.delta * 100.0,
                st.mcnemar.p
            ),
        ),
    ];
    if let Some(j) = &c.judge {
        rows.push((
            "judge score",
            format!(
                "{:.2} → {:.2} (Δ {:+.2} over {} task(s) judged on both sides)",
                j.base, j.candidate, j.delta, j.tasks
            ),
        ));
    }
    rows.push(("tool calls per pass", total_text(&c.totals.calls)));
    rows.push(("tokens per pass", total_text(&c.totals.tokens)));
    rows.push(("tool errors per pass", total_text(&c.totals.tool_errors)));
    page.pairs(out, "summary", &rows);
    out.push_str("<h2>Spend</h2>\n<table class=\"spend\" id=\"spend\"><tr><th></th><th>base</th><th>candidate</th></tr>\n");
    for (label, base, cand) in spend.rows() {
        let _ = writeln!(
            out,
            "<tr><th>{label}</th><td>{}</td><td>{}</td></tr>",
            page.text(&base),
            page.text(&cand)
        );
    }
    out.push_str("</table>\n");
}

fn tasks_table(page: &Page, out: &mut String, id: &str, title: &str, tasks: &[&TaskDelta]) {
    let _ = writeln!(
        out,
        "<h2>{title} ({})</h2>\n<table class=\"bucket\" id=\"{id}\">",
        tasks.len()
    );
    if tasks.is_empty() {
        out.push_str("<tr><td>none</td></tr>\n</table>\n");
        return;
    }
    out.push_str("<tr><th>task</th><th>bucket</th><th>success</th><th>calls/trial</th><th>tokens/trial</th><th>judge</th><th>why</th></tr>\n");
    for t in tasks {
        let side = |f: &dyn Fn(&Side) -> String| {
            page.text(&arrow(t.base.as_ref().map(f), t.candidate.as_ref().map(f)))
        };
        let why: Vec<String> = t
            .findings
            .iter()
            .map(|f| page.text(&Regression::describe(f)))
            .collect();
        let _ = writeln!(
            out,
            "<tr{}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            if why.is_empty() {
                ""
            } else {
                " class=\"failed\""
            },
            page.text(&t.id),
            t.bucket.label(),
            side(&|x| format!("{}/{}", x.successes, x.trials)),
            side(&|x| num(x.calls)),
            side(&|x| num(x.tokens())),
            side(&|x| x.judge_score.map_or("-".into(), |s| format!("{s:.2}"))),
            why.join("<br>")
        );
    }
    out.push_str("</table>\n");
}

fn judge_changes(page: &Page, out: &mut String, changes: &[JudgeChange]) {
    let _ = writeln!(
        out,
        "<h2>Judge-score changes ({})</h2>\n<table class=\"bucket\" id=\"judge-changes\">",
        changes.len()
    );
    if changes.is_empty() {
        out.push_str("<tr><td>none</td></tr>\n</table>\n");
        return;
    }
    out.push_str("<tr><th>task</th><th class=\"num\">base</th><th class=\"num\">candidate</th><th class=\"num\">Δ</th><th></th></tr>\n");
    for j in changes {
        let _ = writeln!(
            out,
            "<tr{}><td>{}</td><td class=\"num\">{:.2}</td><td class=\"num\">{:.2}</td><td class=\"num\">{:+.2}</td><td>{}</td></tr>",
            if j.flagged { " class=\"failed\"" } else { "" },
            page.text(&j.task.id),
            j.base,
            j.candidate,
            j.candidate - j.base,
            if j.flagged { "drop past the limit" } else { "" }
        );
    }
    out.push_str("</table>\n");
}
