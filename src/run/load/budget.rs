//! Budgets: limits on what a load run measured — of the whole run, a scenario, a step, a
//! method or a tool — each judged like an expectation (pass or fail, with the measured
//! value) and reported as a test case.

use serde::{Deserialize, Serialize};

use crate::language::dsl::workload::{Budget, BudgetScope, Limit};

use super::record::summary::{GroupSummary, Latency, Summary};

/// A budget judged.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    /// `p99`, `max`, `errorRate`, `throughput`, `stepFailureRate`.
    pub name: String,
    /// What it holds for: `the run`, `step `s / a``, `tool `slow``, ...
    pub scope: String,
    /// What it asks, e.g. `<= 300ms`.
    pub limit: String,
    /// What was measured, e.g. `12.3ms`; `none` when nothing was.
    pub measured: String,
    pub passed: bool,
}

impl Verdict {
    /// `p99 <= 300ms`, or `p99 of tool `slow` <= 300ms`: the test case's name.
    pub fn title(&self) -> String {
        if self.scope == BudgetScope::Run.describe() {
            format!("{} {}", self.name, self.limit)
        } else {
            format!("{} of {} {}", self.name, self.scope, self.limit)
        }
    }
}

/// What a scope measured: its latency, its count and failures, its rate (a second).
struct Part<'a> {
    latency: &'a Latency,
    count: u64,
    failed: u64,
    error_rate: f64,
    per_second: f64,
    /// `iterations` or `requests`.
    unit: &'static str,
}

impl<'a> Part<'a> {
    fn of_group(g: &'a GroupSummary, unit: &'static str) -> Part<'a> {
        Part {
            latency: &g.latency,
            count: g.count,
            failed: g.errors,
            error_rate: g.error_rate,
            per_second: g.per_second,
            unit,
        }
    }
}

fn find<'a>(groups: &'a [GroupSummary], name: &str) -> Option<&'a GroupSummary> {
    groups.iter().find(|g| g.name == name)
}

/// The part of the run `scope` names, as `summary` measured it; `None`: nothing ran there.
fn part<'a>(summary: &'a Summary, scope: &BudgetScope) -> Option<Part<'a>> {
    match scope {
        BudgetScope::Run => Some(Part {
            latency: &summary.latency,
            count: summary.iterations,
            failed: summary.failed_iterations,
            error_rate: summary.error_rate,
            // The run's throughput is its requests', as `--min-throughput` says.
            per_second: summary.requests_per_second,
            unit: "iterations",
        }),
        BudgetScope::Scenario(s) => {
            find(&summary.scenarios, s).map(|g| Part::of_group(g, "iterations"))
        }
        BudgetScope::Method(m) => find(&summary.methods, m).map(|g| Part::of_group(g, "requests")),
        BudgetScope::Tool(t) => find(&summary.tools, t).map(|g| Part::of_group(g, "requests")),
        BudgetScope::Step { scenario, step } => summary
            .steps
            .iter()
            .find(|s| &s.scenario == scenario && &s.step == step)
            .map(|s| Part {
                latency: &s.latency,
                count: s.requests,
                failed: s.errors,
                error_rate: if s.requests == 0 {
                    0.0
                } else {
                    100.0 * s.errors as f64 / s.requests as f64
                },
                per_second: s.requests as f64 / summary.measured_seconds.max(1e-9),
                unit: "requests",
            }),
    }
}

/// Nothing measured holds no budget.
const NONE: &str = "none (nothing was measured)";

impl Budget {
    pub fn judge(&self, summary: &Summary) -> Verdict {
        let part = part(summary, &self.scope);
        let verdict =
            |name: String, limit: String, measured: Option<String>, passed: bool| Verdict {
                name,
                scope: self.scope.describe(),
                limit,
                passed: passed && measured.is_some(),
                measured: measured.unwrap_or_else(|| NONE.into()),
            };
        match self.limit {
            Limit::Percentile { at_most, .. } | Limit::Max(at_most) => {
                let l = part.as_ref().map(|p| p.latency);
                let (name, got) = match self.limit {
                    Limit::Percentile { quantile, .. } => {
                        let name = format!("p{}", (quantile * 100.0).round());
                        let got = l.and_then(|l| match name.as_str() {
                            "p50" => l.p50_ms,
                            "p90" => l.p90_ms,
                            "p95" => l.p95_ms,
                            _ => l.p99_ms,
                        });
                        (name, got)
                    }
                    _ => ("max".to_string(), l.and_then(|l| l.max_ms)),
                };
                verdict(
                    name,
                    format!("<= {}", humantime::format_duration(at_most)),
                    got.map(|ms| format!("{ms:.1}ms")),
                    got.is_some_and(|ms| ms <= at_most.as_secs_f64() * 1000.0),
                )
            }
            Limit::ErrorRate(pct) => verdict(
                "errorRate".into(),
                format!("<= {pct}%"),
                part.as_ref().filter(|p| p.count > 0).map(|p| {
                    format!(
                        "{:.2}% ({} of {} {})",
                        p.error_rate, p.failed, p.count, p.unit
                    )
                }),
                part.as_ref().is_some_and(|p| p.error_rate <= pct)
                    // Nothing sent is nothing shown to hold.
                    && summary.requests > 0,
            ),
            Limit::MinThroughput(rps) => verdict(
                "throughput".into(),
                format!(
                    ">= {rps} {}/s",
                    match self.scope {
                        BudgetScope::Scenario(_) => "iterations",
                        _ => "requests",
                    }
                ),
                part.as_ref().map(|p| format!("{:.1}/s", p.per_second)),
                part.as_ref().is_some_and(|p| p.per_second >= rps),
            ),
            Limit::StepFailureRate(pct) => {
                let worst = summary
                    .steps
                    .iter()
                    .filter(|s| match &self.scope {
                        BudgetScope::Scenario(id) | BudgetScope::Step { scenario: id, .. } => {
                            &s.scenario == id
                        }
                        _ => true,
                    })
                    .filter(|s| s.requests > 0)
                    .map(|s| (100.0 * s.errors as f64 / s.requests as f64, s))
                    .max_by(|a, b| a.0.total_cmp(&b.0));
                verdict(
                    "stepFailureRate".into(),
                    format!("<= {pct}% for every step"),
                    worst.map(|(rate, s)| {
                        format!(
                            "{rate:.2}% at worst (step `{} / {}`: {} of {} requests)",
                            s.scenario, s.step, s.errors, s.requests
                        )
                    }),
                    worst.is_some_and(|(rate, _)| rate <= pct),
                )
            }
        }
    }
}
