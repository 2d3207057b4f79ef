//! `--find-limit`: step the load up until a budget fails, and report the highest rate that held.

use std::time::Duration;

use serde::Serialize;

use super::emit;
use super::live::LiveView;
use super::render::ms;
use crate::face::app::inputs::usage;
use crate::face::app::runtime::runtime_for;
use crate::face::cli::{LoadArgs, UsageError, exit};
use crate::language::dsl::workload::Budget;
use crate::language::dsl::workload::Pace;
use crate::results::junit::{Flavor, Policy, TestCaseStatus, TestSuite};
use crate::run::engine::{self, RunConfig};
use crate::run::load::budget::Verdict;
use crate::run::load::profile::Profile;
use crate::run::load::{self, Work};

/// Steps of `--find-limit`, at most: the rate doubles each time, so 12 reach 2048 times
/// the first.
const FIND_LIMIT_STEPS: u32 = 12;

/// One step of `--find-limit`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LimitStep {
    rate: f64,
    iterations: u64,
    iterations_per_second: f64,
    error_rate: f64,
    p50_ms: Option<f64>,
    p99_ms: Option<f64>,
    budgets: Vec<Verdict>,
    held: bool,
    /// Why the step ended early (an interrupt, a server gone), if it did.
    ended_early: Option<String>,
}

impl LimitStep {
    /// The budgets it broke (with what was measured), and why it ended early.
    fn broke(&self) -> Vec<String> {
        self.budgets
            .iter()
            .filter(|b| !b.passed)
            .map(|b| format!("{}: measured {}", b.title(), b.measured))
            .chain(self.ended_early.clone())
            .collect()
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LimitReport {
    mcpspec_version: &'static str,
    target: String,
    era: String,
    started_at: String,
    /// The last rate whose every budget held; `None`: not even the first.
    last_held: Option<f64>,
    /// The rate at which a budget broke; `None`: none broke up to the last step.
    broke_at: Option<f64>,
    steps: Vec<LimitStep>,
}

/// `--find-limit`: the open loop's rate doubled step by step until a budget breaks (or the
/// run ends early); the last rate that held, and the step table. Exit 0 when a rate held,
/// 1 when not even the first did.
pub(super) fn find_limit(
    args: &LoadArgs,
    work: &[Work<'_>],
    era: &crate::protocol::era::Era,
    config: &RunConfig,
    profile: &Profile,
    budgets: &[Budget],
    secrets: &[String],
) -> i32 {
    let Pace::Rate(first) = profile.pace else {
        return usage(UsageError(
            "--find-limit steps an open loop's rate up: give --rate".into(),
        ));
    };
    let started_at = engine::now_rfc3339();
    let mut steps = Vec::new();
    let mut unreachable = None;
    let mut view = LiveView::new();
    runtime_for(1).block_on(async {
        crate::ground::signals::install();
        crate::ground::signals::defer_exit();
        for i in 0..FIND_LIMIT_STEPS {
            let rate = first * f64::from(1u32 << i);
            let mut step_profile = profile.clone();
            step_profile.pace = Pace::Rate(rate);
            step_profile.stages.clear();
            step_profile.ramp = None;
            if i > 0 {
                step_profile.warmup = Duration::ZERO;
            }
            let measured = load::run(
                work,
                era,
                config,
                &step_profile,
                crate::ground::signals::interrupted(),
                |now| view.show(&now),
            )
            .await;
            view.clear();
            if let Some(e) = measured.unreachable {
                unreachable = Some(e);
                return;
            }
            let summary = measured.recorder.summary(measured.measured, &[]);
            let verdicts: Vec<Verdict> = budgets.iter().map(|b| b.judge(&summary)).collect();
            let early = measured.ended.early.then(|| measured.ended.why.clone());
            let held = early.is_none() && verdicts.iter().all(|v| v.passed);
            steps.push(LimitStep {
                rate,
                iterations: summary.iterations,
                iterations_per_second: summary.iterations_per_second,
                error_rate: summary.error_rate,
                p50_ms: summary.latency.p50_ms,
                p99_ms: summary.latency.p99_ms,
                budgets: verdicts,
                held,
                ended_early: early,
            });
            if !held {
                return;
            }
        }
    });
    if let Some(e) = &unreachable {
        return crate::face::app::connect::connect_failed(e, secrets);
    }
    let last_held = steps.iter().take_while(|s| s.held).last().map(|s| s.rate);
    let broke_at = steps.iter().find(|s| !s.held).map(|s| s.rate);
    let report = LimitReport {
        mcpspec_version: env!("CARGO_PKG_VERSION"),
        target: config.target.describe(),
        era: era.label.clone(),
        started_at,
        last_held,
        broke_at,
        steps,
    };
    let mut out = vec![
        format!("load: {} (era {})", report.target, report.era),
        format!(
            "find limit: from {first}/s, doubling, {} a step",
            profile.describe_length()
        ),
        "steps:".to_string(),
    ];
    for s in &report.steps {
        let broke = s.broke();
        out.push(format!(
            "  {} {}/s: {} iterations, {:.1}/s, {:.2}% failed, p50 {}  p99 {}{}",
            if s.held { "✓" } else { "✗" },
            s.rate,
            s.iterations,
            s.iterations_per_second,
            s.error_rate,
            ms(s.p50_ms),
            ms(s.p99_ms),
            if broke.is_empty() {
                String::new()
            } else {
                format!(" — broke: {}", broke.join("; "))
            }
        ));
    }
    out.push(match (report.last_held, report.broke_at) {
        (Some(held), Some(broke)) => format!("limit: {held}/s held, {broke}/s broke a budget"),
        (Some(held), None) => format!("limit: not reached — every step held, up to {held}/s"),
        (None, _) => format!("limit: below {first}/s — the first step broke a budget"),
    });
    if let Err(code) = emit(
        &out.join("\n"),
        args.json.as_deref(),
        args.junit.as_deref().map(|p| {
            (
                p,
                limit_junit(&report, args.junit_flavor.unwrap_or_default()),
            )
        }),
        args.html.as_deref().map(|p| {
            let search = out[1].trim_start_matches("find limit: ").to_string();
            let limit = out[out.len() - 1].trim_start_matches("limit: ").to_string();
            (p, limit_html(&report, search, limit, secrets))
        }),
        &report,
        secrets,
    ) {
        return code;
    }
    if let Some(signal) = crate::ground::signals::received() {
        crate::ground::signals::kill_all();
        return signal;
    }
    if report.last_held.is_some() {
        exit::OK
    } else {
        exit::FAILED
    }
}

/// The HTML page of `--find-limit`: its step table.
fn limit_html(r: &LimitReport, search: String, limit: String, secrets: &[String]) -> String {
    crate::face::app::load_html::limit_to_html(
        &crate::face::app::load_html::LimitPage {
            target: &r.target,
            era: &r.era,
            started_at: &r.started_at,
            mcpspec_version: r.mcpspec_version,
            search,
            limit,
            held: r.last_held.is_some(),
            rows: r
                .steps
                .iter()
                .map(|s| crate::face::app::load_html::LimitRow {
                    rate: s.rate,
                    iterations: s.iterations,
                    per_second: s.iterations_per_second,
                    error_rate: s.error_rate,
                    p50_ms: s.p50_ms,
                    p99_ms: s.p99_ms,
                    held: s.held,
                    broke: s.broke(),
                })
                .collect(),
        },
        secrets,
    )
}

/// A test case per step of `--find-limit`: held, or the budgets it broke.
fn limit_junit(r: &LimitReport, flavor: Flavor) -> String {
    let policy = Policy::known();
    let mut suite = TestSuite::new(policy.text("load --find-limit"));
    for s in &r.steps {
        let status = if s.held {
            TestCaseStatus::success()
        } else {
            policy.failure("budget", &s.broke().join("; "), None)
        };
        suite.add_test_case(policy.case(
            &format!("rate {}/s", s.rate),
            "mcpspec.load.limit",
            status,
        ));
    }
    crate::results::junit::document("mcpspec load", Some(&r.started_at), None, [suite], flavor)
}
