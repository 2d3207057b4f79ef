//! A scenario's `load:` block compiled: the load profile it asks for (every part
//! optional: the command line and other files fill the rest), its weight in the mix and
//! its data rows, one per iteration.

use std::time::Duration;

use crate::ground::source::Pos;

/// How iterations start.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Pace {
    /// Closed loop: N virtual clients, each starting its next iteration when its last one
    /// ended (a slow server slows the load).
    Clients(usize),
    /// Open loop: iterations a second on a fixed schedule, whatever the server does; each
    /// one's latency counts from its scheduled start (coordinated omission corrected).
    Rate(f64),
}

impl Pace {
    /// `3 clients`, `50/s`.
    pub fn describe(&self) -> String {
        match self {
            Pace::Clients(n) => format!("{n} client(s)"),
            Pace::Rate(r) => format!("{r}/s"),
        }
    }
}

/// One stage of a stepped load.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stage {
    pub pace: Pace,
    pub duration: Duration,
}

/// The parts of a load profile a file sets.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProfileParts {
    pub pace: Option<Pace>,
    pub duration: Option<Duration>,
    pub iterations: Option<u64>,
    pub warmup: Option<Duration>,
    pub ramp: Option<Duration>,
    pub stages: Vec<Stage>,
    pub think: Option<Duration>,
}

impl ProfileParts {
    pub fn is_empty(&self) -> bool {
        *self == ProfileParts::default()
    }

    /// Each part of `self`, else of `below`. The pace and the steps are one choice, and
    /// the length another: steps (a pace and a length together) are replaced by a pace or
    /// a length set above them.
    pub fn over(mut self, below: &ProfileParts) -> ProfileParts {
        let replaces_steps = self.pace.is_some()
            || self.duration.is_some()
            || self.iterations.is_some()
            || !self.stages.is_empty();
        if self.pace.is_none() && self.stages.is_empty() {
            self.pace = below.pace;
            if !replaces_steps {
                self.stages = below.stages.clone();
            }
        }
        if self.duration.is_none() && self.iterations.is_none() && self.stages.is_empty() {
            self.duration = below.duration;
            self.iterations = below.iterations;
        }
        if self.stages.is_empty() {
            self.ramp = self.ramp.or(below.ramp);
        }
        self.warmup = self.warmup.or(below.warmup);
        self.think = self.think.or(below.think);
        self
    }
}

/// What part of the run a budget holds for.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum BudgetScope {
    /// Every iteration of the run.
    Run,
    /// The iterations of a scenario.
    Scenario(String),
    /// The requests of a step of a scenario.
    Step { scenario: String, step: String },
    /// Every request of a method.
    Method(String),
    /// Every `tools/call` of a tool.
    Tool(String),
}

impl BudgetScope {
    /// `the run`, `scenario `s``, `step `s / a``, `method `tools/list``, `tool `slow``.
    pub fn describe(&self) -> String {
        match self {
            BudgetScope::Run => "the run".into(),
            BudgetScope::Scenario(s) => format!("scenario `{s}`"),
            BudgetScope::Step { scenario, step } => format!("step `{scenario} / {step}`"),
            BudgetScope::Method(m) => format!("method `{m}`"),
            BudgetScope::Tool(t) => format!("tool `{t}`"),
        }
    }
}

/// A limit on what a load run measures.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Limit {
    /// A latency percentile (`quantile` in 0..1) is at most this.
    Percentile { quantile: f64, at_most: Duration },
    /// The longest latency is at most this.
    Max(Duration),
    /// At most this percentage fail.
    ErrorRate(f64),
    /// At least this many a second.
    MinThroughput(f64),
    /// No step fails more than this percentage of its requests.
    StepFailureRate(f64),
}

/// One budget: a limit on a part of the run.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    pub scope: BudgetScope,
    pub limit: Limit,
}

/// A scenario's `load:` block.
#[derive(Debug, Clone)]
pub struct Workload {
    pub profile: ProfileParts,
    /// Its share of the iterations (default 1).
    pub weight: f64,
    /// Data rows, one per iteration in turn (`load.row`); empty: none.
    pub rows: Vec<serde_json::Value>,
    /// Where the block is.
    pub pos: Pos,
    /// Where its weight is (a weight of 0 that leaves the mix empty is told there).
    pub weight_pos: Pos,
    /// Its budgets (`budgets:`).
    pub budgets: Vec<Budget>,
}

/// A pack's `load:` block: a profile and budgets for the load runs of its scenarios.
#[derive(Debug, Clone)]
pub struct PackWorkload {
    /// The pack's name.
    pub pack: String,
    pub profile: ProfileParts,
    /// Its budgets, of the run (or a method or tool).
    pub budgets: Vec<Budget>,
    /// How deep in the imports the pack was loaded: 0 when named on the command line (an
    /// importing pack's profile wins over those of the packs it imports).
    pub depth: usize,
}

/// The template variable of the per-iteration values: `load.iteration`, `load.client`,
/// `load.row`.
pub const VAR: &str = "load";

/// The value of [`VAR`] in an iteration: its number in the run (from 0), the number of
/// the client (closed loop) or connection (open loop) that runs it (from 0), and the row
/// of the scenario's `each`, when it has one.
pub fn vars(iteration: u64, client: usize, row: Option<&serde_json::Value>) -> serde_json::Value {
    let mut v = serde_json::json!({ "iteration": iteration, "client": client });
    if let Some(row) = row {
        v["row"] = row.clone();
    }
    v
}
