//! What a load run measures: iteration and step latencies in HDR histograms (microseconds),
//! errors by kind, and the per-second time series. Each finished iteration is recorded
//! once, with the verdicts of its steps as the run's judges gave them.

pub mod errors;
pub mod summary;

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use indexmap::IndexMap;

use crate::language::dsl::workload::{Pace, Stage};

use errors::ErrorKind;
use summary::{GroupSummary, Latency, SecondSummary, StageSummary, StepSummary, Summary};

/// Highest latency a histogram holds (longer ones are recorded as this): an hour.
const HIGHEST_MICROS: u64 = 3_600_000_000;

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_MICROS, 3).expect("valid histogram bounds")
}

/// A step that ran in an iteration.
pub struct StepSample<'a> {
    pub name: &'a str,
    /// The method of its request, if it sends one.
    pub method: Option<&'a str>,
    /// The tool it calls (`tools/call` with a name written out).
    pub tool: Option<&'a str>,
    pub latency: Duration,
    pub error: Option<(ErrorKind, String)>,
}

/// One finished iteration, as the recorder takes it.
pub struct Iteration<'a> {
    /// The stage of a stepped load it ran in.
    pub stage: Option<usize>,
    /// Since the measured part of the run began, when the iteration ended.
    pub ended_at: Duration,
    /// From its scheduled start (open loop) or its start (closed loop) to its end.
    pub latency: Duration,
    pub scenario: &'a str,
    /// The steps that ran.
    pub steps: Vec<StepSample<'a>>,
}

/// One step of one scenario, over the run.
struct StepStats {
    latency: Histogram<u64>,
    errors: u64,
}

impl StepStats {
    fn new() -> StepStats {
        StepStats {
            latency: histogram(),
            errors: 0,
        }
    }

    fn add(&mut self, latency: Duration, error: bool) {
        self.latency.saturating_record(micros(latency));
        self.errors += u64::from(error);
    }

    fn summary(&self, name: &str, secs: f64) -> GroupSummary {
        let count = self.latency.len();
        GroupSummary {
            histogram: counts(&self.latency),
            name: name.to_string(),
            count,
            errors: self.errors,
            error_rate: if count == 0 {
                0.0
            } else {
                100.0 * self.errors as f64 / count as f64
            },
            per_second: count as f64 / secs,
            latency: Latency::of(&self.latency),
        }
    }
}

/// One stage of a stepped load, over the run.
struct StageStats {
    iterations: u64,
    failed: u64,
    requests: u64,
    latency: Histogram<u64>,
}

impl StageStats {
    fn new() -> StageStats {
        StageStats {
            iterations: 0,
            failed: 0,
            requests: 0,
            latency: histogram(),
        }
    }
}

/// One second of the run.
struct Second {
    iterations: u64,
    errors: u64,
    latency: Histogram<u64>,
}

impl Second {
    fn new() -> Second {
        Second {
            iterations: 0,
            errors: 0,
            latency: histogram(),
        }
    }
}

pub struct Recorder {
    whole: Histogram<u64>,
    /// Each scenario's iterations (`errors`: the failed ones), each method's and each
    /// tool's requests.
    scenarios: IndexMap<String, StepStats>,
    methods: IndexMap<String, StepStats>,
    tools: IndexMap<String, StepStats>,
    steps: IndexMap<(String, String), StepStats>,
    errors: BTreeMap<ErrorKind, u64>,
    /// The first message of each kind of error, to show why.
    first_errors: BTreeMap<ErrorKind, String>,
    iterations: u64,
    failed_iterations: u64,
    requests: u64,
    /// Iterations whose every step was skipped, and the first one's reason.
    skipped: u64,
    skip_reason: Option<String>,
    seconds: Vec<Second>,
    stages: Vec<StageStats>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder {
            whole: histogram(),
            scenarios: IndexMap::new(),
            methods: IndexMap::new(),
            tools: IndexMap::new(),
            steps: IndexMap::new(),
            errors: BTreeMap::new(),
            first_errors: BTreeMap::new(),
            iterations: 0,
            failed_iterations: 0,
            requests: 0,
            skipped: 0,
            skip_reason: None,
            seconds: Vec::new(),
            stages: Vec::new(),
        }
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX).max(1)
}

fn millis(micros: u64) -> f64 {
    micros as f64 / 1000.0
}

/// The numbers so far, for a live view.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SoFar {
    pub iterations: u64,
    pub failed: u64,
    /// Iterations that ended in the last whole second of the measured run.
    pub last_second: u64,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
}

impl Recorder {
    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    /// The numbers so far, `now` into the measured run.
    pub fn so_far(&self, now: Duration) -> SoFar {
        let at = |q: f64| (!self.whole.is_empty()).then(|| millis(self.whole.value_at_quantile(q)));
        let last = (now.as_secs() as usize).checked_sub(1);
        SoFar {
            iterations: self.iterations,
            failed: self.failed_iterations,
            last_second: last
                .and_then(|i| self.seconds.get(i))
                .map_or(0, |s| s.iterations),
            p50_ms: at(0.5),
            p99_ms: at(0.99),
        }
    }

    /// An iteration of `scenario` in which no step ran (`why`: the first step's reason).
    pub fn skipped(&mut self, scenario: &str, why: Option<String>) {
        self.skipped += 1;
        if self.skip_reason.is_none() {
            let why = why.unwrap_or_else(|| "every step was skipped".into());
            self.skip_reason = Some(format!("scenario `{scenario}`: {why}"));
        }
    }

    pub fn record(&mut self, it: Iteration<'_>) {
        let second = it.ended_at.as_secs() as usize;
        while self.seconds.len() <= second {
            self.seconds.push(Second::new());
        }
        let mut failed = false;
        let requests = it.steps.len() as u64;
        for step in it.steps {
            self.requests += 1;
            let error = step.error.is_some();
            let stats = self
                .steps
                .entry((it.scenario.to_string(), step.name.to_string()))
                .or_insert_with(StepStats::new);
            stats.add(step.latency, error);
            for (map, key) in [
                (&mut self.methods, step.method),
                (&mut self.tools, step.tool),
            ] {
                if let Some(key) = key {
                    map.entry(key.to_string())
                        .or_insert_with(StepStats::new)
                        .add(step.latency, error);
                }
            }
            if let Some((kind, message)) = step.error {
                failed = true;
                *self.errors.entry(kind).or_default() += 1;
                self.first_errors.entry(kind).or_insert(message);
            }
        }
        self.scenarios
            .entry(it.scenario.to_string())
            .or_insert_with(StepStats::new)
            .add(it.latency, failed);
        let slot = &mut self.seconds[second];
        slot.iterations += 1;
        slot.latency.saturating_record(micros(it.latency));
        self.whole.saturating_record(micros(it.latency));
        self.iterations += 1;
        if failed {
            slot.errors += 1;
            self.failed_iterations += 1;
        }
        if let Some(stage) = it.stage {
            while self.stages.len() <= stage {
                self.stages.push(StageStats::new());
            }
            let s = &mut self.stages[stage];
            s.iterations += 1;
            s.failed += u64::from(failed);
            s.requests += requests;
            s.latency.saturating_record(micros(it.latency));
        }
    }

    /// The numbers of the run, `measured` its measured time; `stages`: of a stepped load.
    pub fn summary(&self, measured: Duration, stages: &[Stage]) -> Summary {
        let secs = measured.as_secs_f64().max(1e-9);
        let stage_table = stages
            .iter()
            .enumerate()
            .map(|(i, stage)| {
                let s = self.stages.get(i);
                let iterations = s.map_or(0, |s| s.iterations);
                let failed = s.map_or(0, |s| s.failed);
                let secs = stage.duration.as_secs_f64().max(1e-9);
                StageSummary {
                    requests: s.map_or(0, |s| s.requests),
                    histogram: s.map_or_else(Vec::new, |s| counts(&s.latency)),
                    stage: i + 1,
                    pace: stage.pace.describe(),
                    target_rate: match stage.pace {
                        Pace::Rate(r) => Some(r),
                        Pace::Clients(_) => None,
                    },
                    seconds: stage.duration.as_secs_f64(),
                    iterations,
                    failed_iterations: failed,
                    error_rate: if iterations == 0 {
                        0.0
                    } else {
                        100.0 * failed as f64 / iterations as f64
                    },
                    iterations_per_second: iterations as f64 / secs,
                    requests_per_second: s.map_or(0, |s| s.requests) as f64 / secs,
                    latency: s
                        .map_or_else(|| Latency::of(&histogram()), |s| Latency::of(&s.latency)),
                }
            })
            .collect();
        let groups = |map: &IndexMap<String, StepStats>| {
            map.iter().map(|(k, v)| v.summary(k, secs)).collect()
        };
        Summary {
            stages: stage_table,
            scenarios: groups(&self.scenarios),
            methods: groups(&self.methods),
            tools: groups(&self.tools),
            iterations: self.iterations,
            failed_iterations: self.failed_iterations,
            requests: self.requests,
            skipped_iterations: self.skipped,
            skip_reason: self.skip_reason.clone(),
            error_rate: if self.iterations == 0 {
                0.0
            } else {
                100.0 * self.failed_iterations as f64 / self.iterations as f64
            },
            errors: self
                .errors
                .iter()
                .map(|(k, n)| (k.name().to_string(), *n))
                .collect(),
            first_errors: self
                .first_errors
                .iter()
                .map(|(k, m)| (k.name().to_string(), m.clone()))
                .collect(),
            measured_seconds: measured.as_secs_f64(),
            iterations_per_second: self.iterations as f64 / secs,
            requests_per_second: self.requests as f64 / secs,
            latency: Latency::of(&self.whole),
            histogram: counts(&self.whole),
            steps: self
                .steps
                .iter()
                .map(|((scenario, step), s)| StepSummary {
                    scenario: scenario.clone(),
                    step: step.clone(),
                    requests: s.latency.len(),
                    errors: s.errors,
                    latency: Latency::of(&s.latency),
                    histogram: counts(&s.latency),
                })
                .collect(),
        }
    }

    /// Add what another run (a shard) measured, as its report tells it: histograms add
    /// exactly (the same bounds, the same buckets), counts and errors sum, its seconds
    /// and stages add to the same second and stage of this one.
    pub fn absorb(&mut self, s: &Summary, series: &[SecondSummary]) {
        fn group(map: &mut IndexMap<String, StepStats>, key: String, errors: u64, h: &[[u64; 2]]) {
            let stats = map.entry(key).or_insert_with(StepStats::new);
            add(&mut stats.latency, h);
            stats.errors += errors;
        }
        add(&mut self.whole, &s.histogram);
        for (map, groups) in [
            (&mut self.scenarios, &s.scenarios),
            (&mut self.methods, &s.methods),
            (&mut self.tools, &s.tools),
        ] {
            for g in groups {
                group(map, g.name.clone(), g.errors, &g.histogram);
            }
        }
        for st in &s.steps {
            let stats = self
                .steps
                .entry((st.scenario.clone(), st.step.clone()))
                .or_insert_with(StepStats::new);
            add(&mut stats.latency, &st.histogram);
            stats.errors += st.errors;
        }
        for (name, n) in &s.errors {
            if let Some(kind) = ErrorKind::named(name) {
                *self.errors.entry(kind).or_default() += n;
                if let Some(first) = s.first_errors.get(name) {
                    self.first_errors
                        .entry(kind)
                        .or_insert_with(|| first.clone());
                }
            }
        }
        self.iterations += s.iterations;
        self.failed_iterations += s.failed_iterations;
        self.requests += s.requests;
        self.skipped += s.skipped_iterations;
        if self.skip_reason.is_none() {
            self.skip_reason.clone_from(&s.skip_reason);
        }
        for sec in series {
            let i = sec.second as usize;
            while self.seconds.len() <= i {
                self.seconds.push(Second::new());
            }
            self.seconds[i].iterations += sec.iterations;
            self.seconds[i].errors += sec.errors;
            add(&mut self.seconds[i].latency, &sec.histogram);
        }
        for st in &s.stages {
            let i = st.stage.saturating_sub(1);
            while self.stages.len() <= i {
                self.stages.push(StageStats::new());
            }
            let mine = &mut self.stages[i];
            mine.iterations += st.iterations;
            mine.failed += st.failed_iterations;
            mine.requests += st.requests;
            add(&mut mine.latency, &st.histogram);
        }
    }

    pub fn series(&self) -> Vec<SecondSummary> {
        self.seconds
            .iter()
            .enumerate()
            .map(|(i, s)| SecondSummary {
                second: i as u64,
                iterations: s.iterations,
                errors: s.errors,
                p50_ms: (!s.latency.is_empty()).then(|| millis(s.latency.value_at_quantile(0.5))),
                p99_ms: (!s.latency.is_empty()).then(|| millis(s.latency.value_at_quantile(0.99))),
                target_rate: None,
                histogram: counts(&s.latency),
            })
            .collect()
    }
}

/// A histogram's recorded values (microseconds) with their counts, `[value, count]`, in
/// ascending order: recorded again into a histogram of the same bounds they fill the same
/// buckets, so histograms of runs (shards) add exactly, and two runs' distributions can
/// be compared whole.
pub fn counts(h: &Histogram<u64>) -> Vec<[u64; 2]> {
    h.iter_recorded()
        .map(|v| [v.value_iterated_to(), v.count_at_value()])
        .collect()
}

/// A histogram of `counts` (see [`counts`]).
pub fn from_counts(counts: &[[u64; 2]]) -> Histogram<u64> {
    let mut h = histogram();
    add(&mut h, counts);
    h
}

/// Record `counts` (see [`counts`]) into `h`.
fn add(h: &mut Histogram<u64>, counts: &[[u64; 2]]) {
    for [value, count] in counts {
        h.saturating_record_n(*value, *count);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_iteration_with_an_error_counts_once_and_by_kind() {
        let mut r = Recorder::default();
        for (i, error) in [None, Some((ErrorKind::Timeout, "t".to_string()))]
            .into_iter()
            .enumerate()
        {
            r.record(Iteration {
                stage: None,
                ended_at: Duration::from_millis(400 + 1000 * i as u64),
                latency: Duration::from_millis(10),
                scenario: "s",
                steps: vec![
                    StepSample {
                        name: "a",
                        method: Some("tools/list"),
                        tool: None,
                        latency: Duration::from_millis(4),
                        error: None,
                    },
                    StepSample {
                        name: "b",
                        method: Some("tools/call"),
                        tool: Some("echo"),
                        latency: Duration::from_millis(5),
                        error,
                    },
                ],
            });
        }
        let s = r.summary(Duration::from_secs(2), &[]);
        assert_eq!((s.iterations, s.failed_iterations, s.requests), (2, 1, 4));
        assert_eq!(s.errors.get("timeout"), Some(&1));
        assert_eq!(s.error_rate, 50.0);
        assert_eq!(s.steps.len(), 2);
        assert_eq!((s.tools[0].count, s.tools[0].errors), (2, 1));
        assert_eq!(s.methods.len(), 2);
        assert_eq!((s.scenarios[0].count, s.scenarios[0].errors), (2, 1));
        assert_eq!(r.series().len(), 2);
        assert!(s.latency.p99_ms.unwrap() >= 9.9);
        // The counts make the same histogram again.
        assert_eq!(from_counts(&s.histogram), r.whole);
    }
}
