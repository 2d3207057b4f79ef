//! `load:` — how `mcpspec load` runs a scenario as a workload: the profile (shared by the
//! run; also in `pack.yaml` and `mcpspec.yaml`) and the scenario's own part of the mix.

use schemars::JsonSchema;
use serde::Deserialize;

use super::super::limits;
use crate::ground::yaml::value::{At, TValue};

/// A load profile and, in a scenario, its share of the workload. Command-line flags win
/// over it (`--clients`, `--rate`, `--duration`, ...); a scenario's profile wins over its
/// pack's (`pack.yaml`), and a pack's over `mcpspec.yaml`'s.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[serde(rename = "Load")]
pub struct LoadDoc {
    /// Closed loop: this many virtual clients, each starting its next iteration when its
    /// last one ended (1 to 10000).
    #[serde(default)]
    #[schemars(range(min = *limits::CLIENTS.start(), max = *limits::CLIENTS.end()))]
    pub clients: Option<At<i64>>,
    /// Open loop: this many iterations a second on a fixed schedule (a number > 0).
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub rate: Option<At<f64>>,
    /// How long to measure after the warm-up, e.g. `30s` (not with `iterations` or `steps`).
    #[serde(default)]
    pub duration: Option<At<String>>,
    /// Measure this many iterations, then stop (not with `duration` or `steps`).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub iterations: Option<At<i64>>,
    /// Run the load this long first without measuring it, e.g. `5s`.
    #[serde(default)]
    pub warmup: Option<At<String>>,
    /// Rise to `clients` or `rate` over this long at the start of the measured run
    /// (in tenths: a tenth of the load, two tenths, ...), e.g. `10s`; counted in `duration`.
    #[serde(default)]
    pub ramp: Option<At<String>>,
    /// Stepped load: one stage after another, each `{clients, duration}` or
    /// `{rate, duration}` (all of one kind); the measured run is their sum, and the
    /// numbers are reported per stage as well. Not with `clients`, `rate`, `duration`,
    /// `iterations` or `ramp`.
    #[serde(default)]
    pub steps: Vec<At<LoadStageDoc>>,
    /// Closed loop: each client waits this long after an iteration before its next one,
    /// e.g. `200ms` (not counted in the latency).
    #[serde(default)]
    pub think: Option<At<String>>,
    /// Scenario only: its share of the iterations when several scenarios make the
    /// workload (default 1; `0` leaves it out; the weights must not all be 0).
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub weight: Option<At<f64>>,
    /// Scenario only: data rows, one per iteration in turn — a list, or `"{{ name }}"`
    /// naming a variable of `vars:` that holds one. The iteration's row is the template
    /// variable `load.row`.
    #[serde(default)]
    pub each: Option<TValue>,
    /// Budgets: limits on what the run measures, each a test case of the JUnit report
    /// with the measured value. In a scenario they hold for its iterations (or, with
    /// `step`, `method` or `tool`, for those requests); in `pack.yaml` and `mcpspec.yaml`
    /// for the whole run (or a `method` or `tool`).
    #[serde(default)]
    pub budgets: Vec<At<BudgetDoc>>,
}

/// Limits on one part of the run: the scenario's iterations (in `mcpspec.yaml`: all the
/// iterations), or with `step`, `method` or `tool` those requests. Each limit given is a
/// budget of its own.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[serde(rename = "LoadBudget")]
pub struct BudgetDoc {
    /// A step of this scenario, by name (scenario only).
    #[serde(default)]
    pub step: Option<At<String>>,
    /// Every request of this method, e.g. `tools/list`.
    #[serde(default)]
    pub method: Option<At<String>>,
    /// Every `tools/call` of this tool.
    #[serde(default)]
    pub tool: Option<At<String>>,
    /// The median latency is at most this, e.g. `50ms`.
    #[serde(default)]
    pub p50: Option<At<String>>,
    /// The 90th percentile latency is at most this.
    #[serde(default)]
    pub p90: Option<At<String>>,
    /// The 95th percentile latency is at most this.
    #[serde(default)]
    pub p95: Option<At<String>>,
    /// The 99th percentile latency is at most this.
    #[serde(default)]
    pub p99: Option<At<String>>,
    /// The longest latency is at most this.
    #[serde(default)]
    pub max: Option<At<String>>,
    /// At most this percentage (0 to 100) fail: of the iterations, or of the requests.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 100.0))]
    pub error_rate: Option<At<f64>>,
    /// At least this many a second: requests (of the run, a step, a method or a tool), or
    /// iterations of the scenario.
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub min_throughput: Option<At<f64>>,
    /// No step (of the scenario; in `mcpspec.yaml`, of the run) fails more than this
    /// percentage of its requests.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 100.0))]
    pub step_failure_rate: Option<At<f64>>,
}

/// One stage of a stepped load.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[serde(rename = "LoadStage")]
pub struct LoadStageDoc {
    /// Closed loop: virtual clients in this stage.
    #[serde(default)]
    #[schemars(range(min = *limits::CLIENTS.start(), max = *limits::CLIENTS.end()))]
    pub clients: Option<At<i64>>,
    /// Open loop: iterations a second in this stage.
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub rate: Option<At<f64>>,
    /// How long the stage lasts, e.g. `10s`.
    pub duration: At<String>,
}
