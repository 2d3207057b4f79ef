//! Diff reports: grouped text (breaking first), JSON in the reference's shape, JUnit.

use serde_json::{Value, json};

use super::diff::{Change, DiffReport};
use super::rules::{ChangeDecision, Judged, Judgement};
use super::schema_diff::{Breaks, Models};
use crate::language::contract_rules::change_kind::ChangeKind;

fn describe(c: &Change) -> String {
    let mut s = format!("{}/{}  {}", c.list, c.name, c.kind);
    if let Some(p) = &c.path {
        s.push_str(&format!("  at {p}"));
    }
    s
}

/// A change as its JUnit testcase is named: single spaces, nothing that moves when a
/// file is edited, so the name stays the same from run to run (trend history).
fn case_name(c: &Change) -> String {
    let mut s = format!("{}/{} {}", c.list, c.name, c.kind);
    if let Some(p) = &c.path {
        s.push_str(&format!(" at {p}"));
    }
    s
}

fn short(v: &Option<Value>) -> String {
    match v {
        None => "—".into(),
        Some(v) => crate::ground::redact::shorten(&v.to_string(), 160),
    }
}

/// Text for a terminal: breaking (failing) changes first, then review, then the rest.
/// A heading of the text report and which judged changes go under it.
type Group<'a> = (&'a str, Box<dyn Fn(&Judged) -> bool>);

pub fn to_text(report: &DiffReport, judgement: &Judgement) -> String {
    let mut out = String::new();
    let count = |f: &dyn Fn(&Judged) -> bool| judgement.changes.iter().filter(|j| f(j)).count();
    let failing = count(&|j| j.verdict == ChangeDecision::Fail);
    let breaking = count(&|j| j.change.breaks_clients == Breaks::Yes);
    let unknown = count(&|j| j.change.breaks_clients == Breaks::Unknown);
    out.push_str(&format!(
        "Contract diff {} → {}: {} change(s), {breaking} breaking, {unknown} to review, {failing} failing\n",
        report.baseline,
        report.candidate,
        judgement.changes.len()
    ));
    for w in &report.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    let groups: [Group; 4] = [
        (
            "FAIL (breaks clients or fails by rule)",
            Box::new(|j: &Judged| j.verdict == ChangeDecision::Fail),
        ),
        (
            "REVIEW (the comparator cannot decide)",
            Box::new(|j: &Judged| {
                j.verdict != ChangeDecision::Fail
                    && j.change.breaks_clients == Breaks::Unknown
                    && !matches!(j.verdict, ChangeDecision::Accepted { .. })
            }),
        ),
        (
            "ACCEPTED",
            Box::new(|j: &Judged| matches!(j.verdict, ChangeDecision::Accepted { .. })),
        ),
        (
            "OTHER",
            Box::new(|j: &Judged| {
                j.verdict == ChangeDecision::Report && j.change.breaks_clients != Breaks::Unknown
            }),
        ),
    ];
    for (title, pick) in groups.iter() {
        let items: Vec<&Judged> = judgement.changes.iter().filter(|j| pick(j)).collect();
        if items.is_empty() {
            continue;
        }
        out.push_str(&format!("\n{title}\n"));
        for j in items {
            let c = &j.change;
            out.push_str(&format!("  {}\n", describe(c)));
            if (c.before.is_some() || c.after.is_some())
                && c.kind != ChangeKind::Removed
                && c.kind != ChangeKind::Added
            {
                out.push_str(&format!(
                    "      before: {}\n      after:  {}\n",
                    short(&c.before),
                    short(&c.after)
                ));
            }
            if let ChangeDecision::Accepted { reason } = &j.verdict {
                out.push_str(&format!("      accepted: {reason}\n"));
            }
            if let Some(n) = &j.note {
                out.push_str(&format!("      note: {n}\n"));
            }
        }
    }
    let models: Vec<&Judged> = judgement
        .changes
        .iter()
        .filter(|j| j.change.affects_models != Models::No)
        .collect();
    if !models.is_empty() {
        out.push_str("\nRE-EVALUATE WITH MODELS (affectsModels)\n");
        for j in models {
            let how = if j.change.affects_models == Models::Yes {
                "yes"
            } else {
                "possibly"
            };
            out.push_str(&format!("  {} ({how})\n", describe(&j.change)));
        }
    }
    if !judgement.stale.is_empty() {
        out.push_str("\nSTALE ACCEPTANCES (fail until removed)\n");
        for s in &judgement.stale {
            out.push_str(&format!("  {}\n", s.message()));
        }
    }
    if judgement.changes.is_empty() && judgement.stale.is_empty() {
        out.push_str("no changes\n");
    }
    out
}

/// The reference's report shape, plus each change's verdict.
pub fn to_json(report: &DiffReport, judgement: &Judgement) -> String {
    let changes: Vec<Value> = judgement
        .changes
        .iter()
        .map(|j| {
            let mut v = serde_json::to_value(&j.change).expect("change serializes");
            let (verdict, reason) = match &j.verdict {
                ChangeDecision::Fail => ("fail", None),
                ChangeDecision::Report => ("report", None),
                ChangeDecision::Accepted { reason } => ("accepted", Some(reason.clone())),
            };
            v["verdict"] = json!(verdict);
            if let Some(r) = reason {
                v["acceptedReason"] = json!(r);
            }
            if let Some(n) = &j.note {
                v["note"] = json!(n);
            }
            v
        })
        .collect();
    let out = json!({
        "baseline": report.baseline,
        "candidate": report.candidate,
        "changes": changes,
        "modelReview": judgement.changes.iter().filter(|j| j.change.affects_models != Models::No)
            .map(|j| json!({"list": j.change.list, "name": j.change.name, "kind": j.change.kind})).collect::<Vec<_>>(),
        "stale": judgement.stale.iter().map(|s| s.message()).collect::<Vec<_>>(),
        "warnings": report.warnings,
        "fails": judgement.fails(),
    });
    let mut s = serde_json::to_string_pretty(&out).expect("JSON serializes");
    s.push('\n');
    s
}

/// One testcase per change (failing changes are failures) and per stale acceptance,
/// under the one JUnit policy (see [`crate::results::junit`]).
pub fn to_junit(
    report: &DiffReport,
    judgement: &Judgement,
    flavor: crate::results::junit::Flavor,
) -> String {
    use crate::results::junit::{Policy, TestCaseStatus, TestSuite};
    let policy = Policy::known();
    let mut suite = TestSuite::new(policy.text(&format!(
        "contract {} → {}",
        report.baseline, report.candidate
    )));
    for j in &judgement.changes {
        let c = &j.change;
        let status = match &j.verdict {
            ChangeDecision::Fail => policy.failure(
                c.kind.as_str(),
                &describe(c),
                Some(&format!(
                    "before: {}\nafter:  {}",
                    short(&c.before),
                    short(&c.after)
                )),
            ),
            _ => TestCaseStatus::success(),
        };
        let mut tc = policy.case(&case_name(c), &format!("contract.{}", c.list), status);
        if let ChangeDecision::Accepted { reason } = &j.verdict {
            policy.system_out(&mut tc, &format!("accepted: {reason}"));
        }
        suite.add_test_case(tc);
    }
    for s in &judgement.stale {
        let status = policy.failure("stale_acceptance", &s.message(), None);
        suite.add_test_case(policy.case(
            &format!("stale acceptance: {}", s.change()),
            "contract.rules",
            status,
        ));
    }
    crate::results::junit::document("mcpspec diff", None, None, [suite], flavor)
}
