//! The numbers of a load run as reported: latencies, and the summaries of the run, its
//! groups, stages, steps and seconds.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::millis;

/// Percentiles in milliseconds; `None` when nothing was measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Latency {
    pub p50_ms: Option<f64>,
    pub p90_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
    pub mean_ms: Option<f64>,
}

impl Latency {
    pub fn of(h: &Histogram<u64>) -> Latency {
        let at = |q: f64| (!h.is_empty()).then(|| millis(h.value_at_quantile(q)));
        Latency {
            p50_ms: at(0.5),
            p90_ms: at(0.9),
            p95_ms: at(0.95),
            p99_ms: at(0.99),
            max_ms: (!h.is_empty()).then(|| millis(h.max())),
            mean_ms: (!h.is_empty()).then(|| h.mean() / 1000.0),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub iterations: u64,
    /// Iterations with at least one step in error.
    pub failed_iterations: u64,
    /// Steps that ran (each a request, or a check of its own).
    pub requests: u64,
    /// Iterations in which no step ran (not in the other numbers), and why the first did not.
    pub skipped_iterations: u64,
    pub skip_reason: Option<String>,
    /// Failed iterations, in percent of the iterations.
    pub error_rate: f64,
    /// Steps in error, by kind.
    pub errors: BTreeMap<String, u64>,
    /// The first message of each kind.
    pub first_errors: BTreeMap<String, String>,
    pub measured_seconds: f64,
    pub iterations_per_second: f64,
    pub requests_per_second: f64,
    /// Of the iterations, from their scheduled start to their last reply.
    pub latency: Latency,
    /// The iterations' latency histogram ([`counts`]).
    pub histogram: Vec<[u64; 2]>,
    pub steps: Vec<StepSummary>,
    /// Each scenario's iterations (`errors`: the failed ones).
    pub scenarios: Vec<GroupSummary>,
    /// Each method's requests.
    pub methods: Vec<GroupSummary>,
    /// Each tool's calls.
    pub tools: Vec<GroupSummary>,
    /// Per stage of a stepped load (empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageSummary>,
}

/// The requests (or iterations) of one part of the run: a scenario, a method, a tool.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupSummary {
    pub name: String,
    pub count: u64,
    pub errors: u64,
    /// `errors` in percent of `count`.
    pub error_rate: f64,
    pub per_second: f64,
    pub latency: Latency,
    /// Its latency histogram ([`counts`]).
    #[serde(default)]
    pub histogram: Vec<[u64; 2]>,
}

/// One stage of a stepped load: its pace, and what it measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StageSummary {
    /// From 1.
    pub stage: usize,
    /// `3 client(s)`, `20/s`.
    pub pace: String,
    /// Iterations a second the stage asked for (open loop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_rate: Option<f64>,
    pub seconds: f64,
    pub iterations: u64,
    pub failed_iterations: u64,
    pub error_rate: f64,
    pub iterations_per_second: f64,
    pub requests_per_second: f64,
    pub latency: Latency,
    #[serde(default)]
    pub requests: u64,
    /// Its iterations' latency histogram ([`counts`]).
    #[serde(default)]
    pub histogram: Vec<[u64; 2]>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepSummary {
    pub scenario: String,
    pub step: String,
    pub requests: u64,
    pub errors: u64,
    pub latency: Latency,
    /// Its latency histogram ([`counts`]).
    pub histogram: Vec<[u64; 2]>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecondSummary {
    pub second: u64,
    pub iterations: u64,
    pub errors: u64,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    /// Iterations a second asked for in that second (open loop: a stepped load's stage
    /// or a ramp's tenth then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_rate: Option<f64>,
    /// The second's iterations' latency histogram ([`counts`]), so shards' series add.
    #[serde(default)]
    pub histogram: Vec<[u64; 2]>,
}
