//! The outputs of `eval compare`, all rendered from one [`Comparison`]: the console table,
//! the JSON document and the JUnit report.

use serde_json::json;

use super::compare::findings::Regression;
use super::compare::{Bucket, Comparison, Counts, Side, TaskDelta, Total, num, pct};
use super::results::SetKind;

/// The `format` of the JSON document `eval compare --json` writes.
pub const COMPARE_FORMAT: &str = "mcpspec-eval-compare/1";

/// Labels of the two runs (the file names as given).
pub struct Labels<'a> {
    pub base: &'a str,
    pub candidate: &'a str,
}

/// The console report. Unchanged passing tasks without findings are left out unless
/// `all` (they are counted in the summary).
pub fn to_text(c: &Comparison, labels: &Labels, all: bool) -> String {
    let mut s = String::new();
    let kind = match c.kind {
        SetKind::Regression => "regression set",
        SetKind::Capability => "capability set",
    };
    s.push_str(&format!(
        "eval compare: {} ({kind}, pass rate {})\n  base:      {}\n  candidate: {}\n  pairing:   {}\n",
        c.set,
        pct(c.pass_rate),
        labels.base,
        labels.candidate,
        c.pairing.description
    ));
    for w in &c.warnings {
        s.push_str(&format!("warning: {w}\n"));
    }
    let shown: Vec<&TaskDelta> = c
        .tasks
        .iter()
        .filter(|t| all || t.bucket != Bucket::UnchangedPass || !t.findings.is_empty())
        .collect();
    if !shown.is_empty() {
        let width = shown
            .iter()
            .map(|t| t.id.chars().count())
            .max()
            .unwrap_or(4)
            .clamp(4, 40);
        s.push('\n');
        s.push_str(&format!(
            "{:<width$}  {:<20}  {:<17}  {:<13}  {:<17}  {}\n",
            "task", "bucket", "success", "calls/trial", "tokens/trial", "tool errors/trial"
        ));
        for t in shown {
            let id = cut(&t.id, width);
            let side = |f: &dyn Fn(&Side) -> String| {
                arrow(t.base.as_ref().map(f), t.candidate.as_ref().map(f))
            };
            let mut bucket = t.bucket.label().to_string();
            if !t.findings.is_empty() {
                bucket = format!("{bucket} !");
            }
            s.push_str(&format!(
                "{id:<width$}  {bucket:<20}  {:<17}  {:<13}  {:<17}  {}\n",
                side(&|x| format!("{}/{}", x.successes, x.trials)),
                side(&|x| num(x.calls)),
                side(&|x| num(x.tokens())),
                side(&|x| num(x.tool_errors)),
            ));
            for f in &t.findings {
                s.push_str(&format!("{:width$}  ! {}\n", "", f.describe()));
            }
        }
    }
    let n = &c.counts;
    s.push('\n');
    s.push_str(&format!("tasks: {}\n", counts_text(n)));
    let st = &c.success;
    let ci = match st.ci95 {
        Some([lo, hi]) => format!(
            "95% CI {:+.1} to {:+.1} pp, paired t over tasks",
            lo * 100.0,
            hi * 100.0
        ),
        None => "no CI under two paired tasks".into(),
    };
    s.push_str(&format!(
        "success rate: {} → {} (Δ {:+.1} pp; {ci})\n",
        pct(st.base),
        pct(st.candidate),
        st.delta * 100.0
    ));
    s.push_str(&format!(
        "significance: McNemar exact p {} ({} improved vs {} regressed); sign test p {} ({} up vs {} down)\n",
        p_value(st.mcnemar.p),
        st.mcnemar.up,
        st.mcnemar.down,
        p_value(st.sign_test.p),
        st.sign_test.up,
        st.sign_test.down
    ));
    if let Some(j) = &c.judge {
        let ci = match j.ci95 {
            Some([lo, hi]) => format!("95% CI {lo:+.2} to {hi:+.2}, paired t over tasks"),
            None => "too few tasks for an interval".into(),
        };
        s.push_str(&format!(
            "judge score: {:.2} → {:.2} (Δ {:+.2}; {ci}; {} task(s) judged on both sides; {})\n",
            j.base,
            j.candidate,
            j.delta,
            j.tasks,
            match j.limit {
                Some(l) => format!("a task's drop past -{l:.2} is a regression"),
                None => "drops not gated".into(),
            }
        ));
    }
    for (label, total) in [
        ("tool calls", &c.totals.calls),
        ("tokens", &c.totals.tokens),
        ("tool errors", &c.totals.tool_errors),
    ] {
        s.push_str(&format!(
            "{label} per pass of the set: {}\n",
            total_text(total)
        ));
    }
    let verdict = verdict(c);
    let total_note = [
        ("tool calls", &c.totals.calls),
        ("tokens", &c.totals.tokens),
        ("tool errors", &c.totals.tool_errors),
    ]
    .iter()
    .filter(|(_, t)| t.exceeded)
    .map(|(l, _)| *l)
    .collect::<Vec<_>>();
    if total_note.is_empty() {
        s.push_str(&format!("{verdict}\n"));
    } else {
        s.push_str(&format!(
            "{verdict}; total {} over the limit\n",
            total_note.join(", ")
        ));
    }
    s
}

/// `4 paired: 1 improved, …; 0 missing in candidate, 0 missing in base`.
pub(crate) fn counts_text(n: &Counts) -> String {
    format!(
        "{} paired: {} improved, {} regressed, {} unchanged-pass, {} unchanged-fail; {} missing in candidate, {} missing in base",
        n.paired,
        n.improved,
        n.regressed,
        n.unchanged_pass,
        n.unchanged_fail,
        n.missing_in_candidate,
        n.missing_in_base
    )
}

/// The comparison's one-line verdict (`REGRESSION: …`, `OK: …`, `INCOMPLETE: …`), as the
/// console, the Markdown summary and the HTML page say it.
pub fn verdict(c: &Comparison) -> String {
    let n = c.counts.regressions;
    if c.incomplete.is_some() {
        "INCOMPLETE: a partial run cannot clear the gate".to_string()
    } else if c.regression {
        format!("REGRESSION: {n} task(s) flagged (!)")
    } else if c.kind == SetKind::Capability && n > 0 {
        format!("OK: {n} task(s) flagged (!), not gated (capability set)")
    } else if n > 0 {
        format!("OK: {n} task(s) flagged (!)")
    } else {
        "OK: no regression".into()
    }
}

pub(crate) fn total_text(t: &Total) -> String {
    let change = match t.increase {
        Some(i) => format!("{}%", signed(i)),
        None if t.candidate > 0.0 => "up from 0".into(),
        None => "unchanged".into(),
    };
    let limit = match t.limit {
        Some(l) => format!("limit +{}%", num(l)),
        None => "no limit".into(),
    };
    let over = if t.exceeded { ", OVER THE LIMIT" } else { "" };
    format!(
        "{} → {} ({change}; {limit}{over})",
        num(t.base),
        num(t.candidate)
    )
}

pub(crate) fn arrow(a: Option<String>, b: Option<String>) -> String {
    format!(
        "{} → {}",
        a.unwrap_or_else(|| "-".into()),
        b.unwrap_or_else(|| "-".into())
    )
}

fn cut(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(width - 1).collect();
        t.push('…');
        t
    }
}

fn signed(v: f64) -> String {
    let s = num(v);
    if s.starts_with('-') || s == "0" {
        s
    } else {
        format!("+{s}")
    }
}

fn p_value(p: f64) -> String {
    if p < 0.0001 {
        "< 0.0001".into()
    } else {
        format!("= {p:.4}")
    }
}

/// The JSON document: the comparison plus the format and the two files.
pub fn to_json(c: &Comparison, labels: &Labels) -> String {
    let mut doc = json!({
        "format": COMPARE_FORMAT,
        "base": labels.base,
        "candidate": labels.candidate,
    });
    if let (Some(obj), Ok(serde_json::Value::Object(rest))) =
        (doc.as_object_mut(), serde_json::to_value(c))
    {
        obj.extend(rest);
    }
    let mut s = serde_json::to_string_pretty(&doc).expect("JSON serializes");
    s.push('\n');
    s
}

/// JUnit: one testcase per task (a failure per regression, skipped when missing on one
/// side), one per total over its limit; the statistics as suite properties (the one JUnit
/// policy: see [`crate::results::junit`]).
pub fn to_junit(c: &Comparison, labels: &Labels, flavor: crate::results::junit::Flavor) -> String {
    use crate::results::junit::{Policy, TestCaseStatus, TestSuite};
    let policy = Policy::known();
    let mut suite = TestSuite::new(policy.text(&format!("eval compare {}", c.set)));
    let st = &c.success;
    for (k, v) in [
        ("base", labels.base.to_string()),
        ("candidate", labels.candidate.to_string()),
        ("pairing", format!("{:?}", c.pairing.kind).to_lowercase()),
        ("passRate", num(c.pass_rate)),
        ("successRate.base", format!("{:.4}", st.base)),
        ("successRate.candidate", format!("{:.4}", st.candidate)),
        ("successRate.delta", format!("{:.4}", st.delta)),
        ("mcnemar.p", format!("{:.6}", st.mcnemar.p)),
        ("signTest.p", format!("{:.6}", st.sign_test.p)),
    ] {
        suite.add_property(policy.property(k, &v));
    }
    if let Some([lo, hi]) = st.ci95 {
        suite.add_property(policy.property("successRate.ci95", &format!("{lo:.4}..{hi:.4}")));
    }
    for w in &c.warnings {
        suite.add_property(policy.property("warning", w));
    }
    let classname = format!("eval.{}", c.set);
    for t in &c.tasks {
        let status = match (t.bucket, t.findings.first()) {
            (Bucket::MissingInBase | Bucket::MissingInCandidate, _) => {
                policy.skipped(None, t.bucket.label())
            }
            (_, Some(first)) if c.kind == SetKind::Regression => {
                let all: Vec<String> = t.findings.iter().map(Regression::describe).collect();
                policy.failure(
                    finding_type(first),
                    &first.describe(),
                    Some(&all.join("\n")),
                )
            }
            _ => TestCaseStatus::success(),
        };
        let mut tc = policy.case(&t.id, &classname, status);
        let side = |x: &Option<Side>| {
            x.as_ref()
                .map(|x| format!("{}/{}", x.successes, x.trials))
                .unwrap_or_else(|| "-".into())
        };
        tc.add_property(policy.property("bucket", t.bucket.label()));
        tc.add_property(policy.property("success.base", &side(&t.base)));
        tc.add_property(policy.property("success.candidate", &side(&t.candidate)));
        suite.add_test_case(tc);
    }
    for (label, total) in [
        ("tool calls", &c.totals.calls),
        ("tokens", &c.totals.tokens),
        ("tool errors", &c.totals.tool_errors),
    ] {
        let status = if total.exceeded && c.kind == SetKind::Regression {
            let message = format!("{label}: {}", total_text(total));
            policy.failure("total_cost", &message, None)
        } else {
            TestCaseStatus::success()
        };
        suite.add_test_case(policy.case(&format!("total {label}"), &classname, status));
    }
    crate::results::junit::document("mcpspec eval compare", None, None, [suite], flavor)
}

fn finding_type(f: &Regression) -> &'static str {
    match f {
        Regression::SuccessDropped { .. } => "success_dropped",
        Regression::CallsATool { .. } => "no_tool_call",
        Regression::CostRose { .. } => "cost_rose",
        Regression::JudgeScoreDropped { .. } => "judge_score_dropped",
    }
}
