//! The load report's console, JUnit and HTML forms.

use std::time::Duration;

use super::LoadReport;
use crate::results::junit::{Flavor, Policy, TestCaseStatus, TestSuite};

pub(super) fn ms(v: Option<f64>) -> String {
    v.map_or("-".into(), |ms| format!("{ms:.1}ms"))
}

pub(super) fn console(r: &LoadReport) -> String {
    let s = &r.summary;
    let mut out = vec![
        format!("load: {} (era {})", r.target, r.era),
        format!("profile: {}", r.profile),
        format!(
            "ended: {} at {:.1}s{}",
            r.ended.why,
            r.ended.at_seconds,
            if r.ended.early {
                " (early: the numbers are those measured up to then)"
            } else {
                ""
            }
        ),
        format!(
            "iterations: {} ({} failed) in {:.1}s: {:.1}/s{}; requests: {}, {:.1}/s",
            s.iterations,
            s.failed_iterations,
            s.measured_seconds,
            s.iterations_per_second,
            r.target_rate
                .map_or(String::new(), |t| if r.stages.is_empty() {
                    format!(" (target {t}/s)")
                } else {
                    format!(" (target up to {t}/s, by stage below)")
                }),
            s.requests,
            s.requests_per_second
        ),
        format!(
            "latency: p50 {}  p90 {}  p95 {}  p99 {}  max {}",
            ms(s.latency.p50_ms),
            ms(s.latency.p90_ms),
            ms(s.latency.p95_ms),
            ms(s.latency.p99_ms),
            ms(s.latency.max_ms)
        ),
    ];
    if let Some(cpu) = &r.generator_cpu {
        out.push(format!(
            "generator CPU: {:.0}% of one core ({:.1}s user, {:.1}s system)",
            cpu.percent, cpu.user_seconds, cpu.system_seconds
        ));
    }
    if s.skipped_iterations > 0 {
        out.push(format!(
            "skipped: {} iteration(s) ran no step ({}), not in the numbers",
            s.skipped_iterations,
            s.skip_reason.as_deref().unwrap_or("")
        ));
    }
    if r.unfinished > 0 {
        out.push(format!(
            "unfinished: {} iteration(s) in flight or due and not started when the run ended (not in the numbers)",
            r.unfinished
        ));
    }
    if s.errors.is_empty() {
        out.push("errors: none".into());
    } else {
        out.push("errors:".into());
        for (kind, n) in &s.errors {
            let first = s.first_errors.get(kind).map_or("", String::as_str);
            out.push(format!("  {kind}: {n} (first: {first})"));
        }
    }
    out.push("steps:".into());
    for step in &s.steps {
        out.push(format!(
            "  {} / {}: {} requests, {} errors, p50 {}  p99 {}  max {}",
            step.scenario,
            step.step,
            step.requests,
            step.errors,
            ms(step.latency.p50_ms),
            ms(step.latency.p99_ms),
            ms(step.latency.max_ms)
        ));
    }
    if !s.stages.is_empty() {
        out.push("load steps:".into());
        for st in &s.stages {
            out.push(format!(
                "  {}. {} for {:.0}s: {} iterations, {:.1}/s, {} failed ({:.2}%), p50 {}  p99 {}",
                st.stage,
                st.pace,
                st.seconds,
                st.iterations,
                st.iterations_per_second,
                st.failed_iterations,
                st.error_rate,
                ms(st.latency.p50_ms),
                ms(st.latency.p99_ms)
            ));
        }
    }
    out.push("budgets:".into());
    for b in &r.budgets {
        out.push(format!(
            "  {} {}: measured {}",
            if b.passed { "✓" } else { "✗" },
            b.title(),
            b.measured
        ));
    }
    for w in &r.warnings {
        out.push(format!("warning: {w}"));
    }
    if r.sandboxed {
        let note = crate::results::report::console::sandbox_note(&r.reached_out);
        out.push(note.trim_end().to_string());
    }
    let broke = r.budgets.iter().filter(|b| !b.passed).count();
    out.push(match (broke, r.ended.early) {
        (0, false) => format!("result: passed ({} budgets held)", r.budgets.len()),
        (0, true) => "result: failed (the run ended early)".into(),
        (n, _) => format!("result: failed ({n} of {} budgets broke)", r.budgets.len()),
    });
    out.join("\n")
}

/// A test case per budget (with the measured value), and one that the run went its length.
pub(super) fn junit(r: &LoadReport, flavor: Flavor) -> String {
    let policy = Policy::known();
    let mut suite = TestSuite::new(policy.text(&format!("load {}", r.profile)));
    let classname = "mcpspec.load";
    let mut completed = if r.ended.early {
        policy.case(
            "completed",
            classname,
            policy.error("ended-early", &r.ended.why, None),
        )
    } else {
        policy.case("completed", classname, TestCaseStatus::success())
    };
    policy.system_out(&mut completed, &r.ended.why);
    suite.add_test_case(completed);
    for b in &r.budgets {
        let name = b.title();
        let status = if b.passed {
            TestCaseStatus::success()
        } else {
            policy.failure(
                "budget",
                &format!("{}: measured {}", b.title(), b.measured),
                None,
            )
        };
        let mut case = policy.case(&name, classname, status);
        case.add_property(policy.property("measured", &b.measured));
        policy.system_out(&mut case, &format!("measured {}", b.measured));
        suite.add_test_case(case);
    }
    crate::results::junit::document(
        "mcpspec load",
        Some(&r.started_at),
        Some(Duration::from_secs_f64(r.ended.at_seconds)),
        [suite],
        flavor,
    )
}

/// The HTML page of a load run (or of merged shards).
pub(super) fn html(r: &LoadReport, secrets: &[String]) -> String {
    crate::face::app::load_html::to_html(
        &crate::face::app::load_html::LoadPage {
            target: &r.target,
            transport: &r.transport,
            era: &r.era,
            started_at: &r.started_at,
            mcpspec_version: &r.mcpspec_version,
            profile: &r.profile,
            target_rate: r.target_rate,
            shards: r
                .shard
                .map(|s| format!("shard {}/{}", s.index, s.count))
                .or(r.merged_shards.map(|n| format!("merged from {n} shards"))),
            ended_why: &r.ended.why,
            ended_at: r.ended.at_seconds,
            ended_early: r.ended.early,
            unfinished: r.unfinished,
            summary: &r.summary,
            budgets: &r.budgets,
            warnings: &r.warnings,
            stages: &r.stages,
            series: &r.series,
            generator_cpu: r.generator_cpu.as_ref().map(|cpu| {
                format!(
                    "{:.0}% of one core ({:.1}s user, {:.1}s system)",
                    cpu.percent, cpu.user_seconds, cpu.system_seconds
                )
            }),
            passed: r.passed(),
        },
        secrets,
    )
}
