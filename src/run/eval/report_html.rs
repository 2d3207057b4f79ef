//! The HTML report of an eval run (`mcpspec eval run --html`): one self-contained page
//! (inline CSS, no script, no external resource). Per model run, per task its verdict and
//! spend; per trial the expectations (with the judge's score and reason), the tool calls the
//! model made with their arguments, and its final answer. Answers and arguments are the
//! model's untrusted text: every text is redacted, escaped for HTML and cut
//! ([`crate::results::report::page`]), failed tasks open, passing ones collapsed.

use std::fmt::Write as _;

use super::report::{judge_score, mark, mean_score, rates};
use super::results::{EvalResults, ExpectationOutcome, SetKind, TaskResult, TrialResult};
use crate::results::report::page::{Page, TABLE_STYLE};

/// Largest answer, argument or message shown (the rest is cut with a marker).
pub(crate) const MAX_TEXT_BYTES: usize = 16 * 1024;

/// The eval pages' own styles, after the run report's and the tables'.
pub(crate) const EVAL_STYLE: &str = r#"
section.run{border:1px solid var(--line);border-radius:8px;margin:10px 0;padding:8px 12px}
details.trial{margin:4px 0 4px 16px}details.trial>summary{cursor:pointer}
.b-NOT{background:var(--skip)}.answer{border-left:3px solid var(--line);padding-left:10px}
.judge{color:var(--muted)}.warning{color:var(--warn);font-weight:600}
"#;

/// The page of one or several runs (one per `--model`), every text redacted of `secrets`.
pub fn to_html(runs: &[EvalResults], secrets: &[String]) -> String {
    let set = runs.first().map_or("", |r| r.set.name.as_str());
    let style = format!("{TABLE_STYLE}{EVAL_STYLE}");
    let (page, mut out) = Page::begin(secrets, "mcpspec eval report", set, &style, 32 * 1024);
    let _ = writeln!(
        out,
        "<h1>mcpspec eval report</h1><div class=\"meta\">set {} · mcpspec {}</div>",
        page.text(set),
        env!("CARGO_PKG_VERSION")
    );
    for run in runs {
        run_section(&page, &mut out, run);
    }
    out.push_str("</body></html>\n");
    out
}

fn run_section(page: &Page, out: &mut String, r: &EvalResults) {
    let failed = r.tasks.iter().any(TaskResult::failed);
    let verdict = match (r.partial, failed) {
        (true, _) => "ERROR",
        (_, true) if r.set.kind == SetKind::Regression => "FAIL",
        _ => "PASS",
    };
    let _ = writeln!(
        out,
        "<section class=\"run\" id=\"model-{}\"><header><span class=\"badge b-{verdict}\">{verdict}</span> \
         <h2 style=\"display:inline\">model {} ({})</h2></header>",
        page.text(&r.model.profile),
        page.text(&r.model.profile),
        page.text(&r.model.model),
    );
    let mut rows = vec![
        (
            "set",
            format!("{} ({}) from {}", r.set.name, kind(r.set.kind), r.set.file),
        ),
        (
            "server",
            format!(
                "{} {} · {} {} · {} tools",
                r.server.name,
                r.server.version,
                r.server.era,
                r.server.revision,
                r.server.tool_count
            ),
        ),
        (
            "model",
            format!("{} at {}", r.model.model, r.model.base_url),
        ),
        (
            "started",
            format!("{} · {:.1}s", r.started, r.duration_ms as f64 / 1000.0),
        ),
        ("model spend", r.usage.describe()),
    ];
    if let Some(j) = &r.judge {
        let spend = r.judge_usage.as_ref().map(|u| u.describe());
        rows.push((
            "judge",
            format!(
                "{} ({}){}",
                j.profile,
                j.model,
                spend.map(|s| format!(" · {s}")).unwrap_or_default()
            ),
        ));
    }
    if let Some(dir) = &r.model.replayed_from {
        rows.push(("replayed from", dir.clone()));
    }
    if let Some(why) = &r.aborted {
        rows.push(("aborted", why.clone()));
    } else if r.partial {
        rows.push((
            "partial",
            "the run stopped early: some trials are missing".into(),
        ));
    }
    page.pairs(out, &format!("run-{}", r.model.profile), &rows);
    for t in &r.tasks {
        task(page, out, t);
    }
    out.push_str("</section>\n");
}

fn kind(k: SetKind) -> &'static str {
    match k {
        SetKind::Regression => "regression",
        SetKind::Capability => "capability",
    }
}

fn task(page: &Page, out: &mut String, t: &TaskResult) {
    let mark = mark(t);
    let rt = rates(t);
    let judge = mean_score(t, judge_score)
        .map(|s| format!(" · judge {s:.2}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "<details class=\"step\" data-task=\"{}\" data-status=\"{mark}\"{}><summary>\
         <span class=\"badge b-{}\">{mark}</span><span>{}</span>\
         <span class=\"where\">{}/{} trials{} · {}</span></summary>",
        page.text(&t.id),
        if matches!(mark, "FAIL" | "WARN") {
            " open"
        } else {
            ""
        },
        mark.split(' ').next().unwrap_or(mark),
        page.text(&t.id),
        rt.successes,
        rt.trials,
        judge,
        page.text(&t.usage.describe()),
    );
    if !t.expected_tools.is_empty() || !t.tags.is_empty() {
        let _ = writeln!(
            out,
            "<div class=\"where\">expects {} · tags {}</div>",
            page.text(&t.expected_tools.join(", ")),
            page.text(&t.tags.join(", "))
        );
    }
    if let Some(cut) = &t.cut {
        let _ = writeln!(
            out,
            "<p class=\"warning\">{} trial(s) cut short by the run's stop: no outcome, their spend ({}) is counted</p>",
            cut.trials.len(),
            page.text(&cut.usage.describe())
        );
    }
    for trial in &t.trials {
        self::trial(page, out, trial);
    }
    out.push_str("</details>\n");
}

fn trial(page: &Page, out: &mut String, r: &TrialResult) {
    let status = if r.success { "PASS" } else { "FAIL" };
    let judge_cost = r
        .judge_usage
        .as_ref()
        .and_then(|u| u.cost_usd)
        .map(|c| format!(" · judge ${c:.4}"))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "<details class=\"trial\"{}><summary><span class=\"badge b-{status}\">{status}</span> \
         trial {} · {} turn(s) · {} call(s) · {} in / {} out tokens{}{judge_cost} · {:.1}s</summary>",
        if r.success { "" } else { " open" },
        r.index + 1,
        r.turns,
        r.tool_calls.len(),
        r.input_tokens,
        r.output_tokens,
        if r.estimated_tokens {
            " (estimated)"
        } else {
            ""
        },
        r.latency_ms as f64 / 1000.0,
    );
    if let Some(e) = &r.error {
        let _ = writeln!(
            out,
            "<div class=\"failure\"><div class=\"msg\">{}</div></div>",
            page.body(e, MAX_TEXT_BYTES)
        );
    }
    expectations(page, out, &r.expectations);
    calls(page, out, r);
    if let Some(answer) = &r.final_answer {
        let _ = writeln!(
            out,
            "<div>final answer:</div><pre class=\"answer\">{}</pre>",
            page.body(answer, MAX_TEXT_BYTES)
        );
    }
    out.push_str("</details>\n");
}

fn expectations(page: &Page, out: &mut String, list: &[ExpectationOutcome]) {
    if list.is_empty() {
        return;
    }
    out.push_str("<table class=\"expectations\"><tr><th>expectation</th><th>verdict</th><th class=\"num\">score</th><th>why</th></tr>\n");
    for e in list {
        let verdict = if !e.passed {
            "FAIL"
        } else if e.warning.is_some() {
            "WARN"
        } else {
            "PASS"
        };
        let score = match (e.score, e.threshold) {
            (Some(s), Some(t)) => format!("{s:.2} (needs {t:.2})"),
            (Some(s), None) => format!("{s:.2}"),
            _ => String::new(),
        };
        let mut why = Vec::new();
        why.extend(e.message.iter().map(|m| page.body(m, MAX_TEXT_BYTES)));
        why.extend(e.warning.iter().map(|w| page.body(w, MAX_TEXT_BYTES)));
        if let Some(j) = &e.judge {
            why.push(judge(page, j));
        }
        for c in &e.critics {
            why.push(format!(
                "{} {} {}: {}",
                if c.matched { "✓" } else { "✗" },
                page.text(&c.path),
                page.text(&c.critic),
                page.text(c.detail.as_deref().unwrap_or(""))
            ));
        }
        let _ = writeln!(
            out,
            "<tr{}><td>{}</td><td><span class=\"badge b-{verdict}\">{verdict}</span></td><td class=\"num\">{}</td><td>{}</td></tr>",
            if e.passed { "" } else { " class=\"failed\"" },
            page.text(&e.name),
            page.text(&score),
            why.join("<br>")
        );
    }
    out.push_str("</table>\n");
}

/// The judge's verdict: its profile, score and reason (or why it gave none).
fn judge(page: &Page, j: &super::results::JudgeVerdict) -> String {
    let score = j.score.map(|s| format!(" {s:.2}")).unwrap_or_default();
    let said = match (&j.reason, &j.error) {
        (_, Some(e)) => format!("no verdict: {}", page.body(e, MAX_TEXT_BYTES)),
        (Some(r), None) => page.body(r, MAX_TEXT_BYTES),
        (None, None) => String::new(),
    };
    format!(
        "<span class=\"judge\">judge {}{score}: {said}</span>",
        page.text(&j.profile)
    )
}

fn calls(page: &Page, out: &mut String, r: &TrialResult) {
    if r.tool_calls.is_empty() {
        out.push_str("<div class=\"where\">no tool call</div>\n");
        return;
    }
    out.push_str("<table class=\"calls\"><tr><th class=\"num\">#</th><th>tool</th><th>arguments</th><th>result</th></tr>\n");
    for (i, c) in r.tool_calls.iter().enumerate() {
        let args = serde_json::to_string_pretty(&c.arguments).unwrap_or_default();
        let result = match (&c.protocol_error, c.is_error) {
            (Some(e), _) => page.body(e, MAX_TEXT_BYTES),
            (None, true) => "isError".into(),
            (None, false) => "ok".into(),
        };
        let _ = writeln!(
            out,
            "<tr{}><td class=\"num\">{}</td><td>{}</td><td><pre>{}</pre></td><td>{result}</td></tr>",
            if c.is_error || c.protocol_error.is_some() {
                " class=\"failed\""
            } else {
                ""
            },
            i + 1,
            page.text(&c.name),
            page.body(&args, MAX_TEXT_BYTES),
        );
    }
    out.push_str("</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A secret in the model's answer or arguments is masked, markup escaped.
    #[test]
    fn answers_and_arguments_are_redacted_and_escaped() {
        let mut run: EvalResults = serde_json::from_str(include_str!(
            "../../../tests/eval_compare/unchanged/base.json"
        ))
        .expect("a results file");
        let trial = &mut run.tasks[0].trials[0];
        trial.final_answer = Some("key sekret-value-42 <img src=x onerror=alert(1)>".into());
        trial
            .tool_calls
            .push(super::super::results::ToolCallRecord {
                name: "echo".into(),
                arguments: serde_json::json!({"text": "sekret-value-42</pre><script>"}),
                is_error: false,
                protocol_error: None,
            });
        let page = to_html(&[run], &["sekret-value-42".to_string()]);
        assert!(!page.contains("sekret"), "{page}");
        assert!(
            !page.contains("<img") && !page.contains("<script"),
            "{page}"
        );
        assert!(
            page.contains("key *** &lt;img src=x onerror=alert(1)&gt;"),
            "{page}"
        );
        assert!(page.contains("***&lt;/pre&gt;&lt;script&gt;"), "{page}");
    }
}
