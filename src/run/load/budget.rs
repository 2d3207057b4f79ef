//! Budgets: limits on what a load run measured, each judged like an expectation (pass or
//! fail, with the measured value) and reported as a test case.

use std::time::Duration;

use serde::Serialize;

use super::record::Summary;

/// One limit on the whole run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Budget {
    /// A latency percentile (`quantile` in 0..1) of the iterations is at most this.
    Percentile { quantile: f64, at_most: Duration },
    /// At most this percentage of the iterations fail.
    ErrorRate(f64),
    /// At least this many requests a second.
    MinThroughput(f64),
}

/// A budget judged.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    /// `p99`, `errorRate`, `throughput`.
    pub name: String,
    /// What it asks, e.g. `<= 300ms`.
    pub limit: String,
    /// What was measured, e.g. `12.3ms`; `none` when nothing was.
    pub measured: String,
    pub passed: bool,
}

impl Budget {
    pub fn judge(&self, summary: &Summary) -> Verdict {
        match *self {
            Budget::Percentile { quantile, at_most } => {
                let name = format!("p{}", (quantile * 100.0).round());
                let got = match name.as_str() {
                    "p50" => summary.latency.p50_ms,
                    "p90" => summary.latency.p90_ms,
                    "p95" => summary.latency.p95_ms,
                    _ => summary.latency.p99_ms,
                };
                let limit_ms = at_most.as_secs_f64() * 1000.0;
                Verdict {
                    limit: format!("<= {}", humantime::format_duration(at_most)),
                    measured: got.map_or("none (no iteration was measured)".into(), |ms| {
                        format!("{ms:.1}ms")
                    }),
                    passed: got.is_some_and(|ms| ms <= limit_ms),
                    name,
                }
            }
            Budget::ErrorRate(pct) => Verdict {
                name: "errorRate".into(),
                limit: format!("<= {pct}%"),
                measured: format!(
                    "{:.2}% ({} of {} iterations)",
                    summary.error_rate, summary.failed_iterations, summary.iterations
                ),
                // Nothing sent is nothing shown to hold.
                passed: summary.requests > 0 && summary.error_rate <= pct,
            },
            Budget::MinThroughput(rps) => Verdict {
                name: "throughput".into(),
                limit: format!(">= {rps} requests/s"),
                measured: format!("{:.1} requests/s", summary.requests_per_second),
                passed: summary.requests_per_second >= rps,
            },
        }
    }
}
