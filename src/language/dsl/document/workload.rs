//! `load:` — how `mcpspec load` runs a scenario as a workload: the profile (shared by the
//! run; also in `mcpspec.yaml`) and the scenario's own part of the mix.

use schemars::JsonSchema;
use serde::Deserialize;

use super::super::limits;
use super::super::value::{At, TValue};

/// A load profile and, in a scenario, its share of the workload. Command-line flags win
/// over it (`--clients`, `--rate`, `--duration`, ...); a scenario's profile wins over
/// `mcpspec.yaml`'s.
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
