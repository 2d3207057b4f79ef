//! `load:` blocks: every value checked at its position (a rate of 0, a negative or zero
//! duration, a count out of range, parts that exclude each other), as `validate` tells any
//! other mistake.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use indexmap::IndexMap;

use super::Compiler;
use crate::ground::load_error::{LoadError, LoadErrors, did_you_mean};
use crate::ground::source::SourceFile;
use crate::ground::yaml::value::{At, TValue};
use crate::language::dsl::workload::{
    Budget, BudgetScope, Limit, Pace, ProfileParts, Stage, Workload,
};
use crate::language::dsl::{document, limits};

impl Compiler {
    /// A scenario's `load:` block (`vars`: its variables, which `each` may name).
    pub(super) fn workload(
        &mut self,
        doc: At<document::LoadDoc>,
        vars: &IndexMap<String, TValue>,
        scenario: &str,
        steps: &HashSet<String>,
    ) -> Option<Workload> {
        let pos = self.at(&doc);
        let before = self.errors.0.len();
        let profile = self.profile_parts(&doc);
        let (weight, weight_pos) = match &doc.weight {
            Some(w) if !w.is_finite() || **w < 0.0 => {
                let p = self.at(w);
                self.errors.push(
                    LoadError::at(p.clone(), format!("`weight: {}` cannot be negative", **w))
                        .with_help("a weight is a share of the iterations: 0 or more (default 1)"),
                );
                (1.0, p)
            }
            Some(w) => (**w, self.at(w)),
            None => (1.0, pos.clone()),
        };
        let budgets = self.budgets(&doc.budgets, Some((scenario, steps)));
        let rows = match &doc.each {
            Some(each) => self
                .rows(each, vars, &std::collections::BTreeSet::new())
                .map(|rows| rows.iter().map(TValue::to_json).collect())
                .unwrap_or_default(),
            None => Vec::new(),
        };
        (self.errors.0.len() == before).then_some(Workload {
            profile,
            weight,
            rows,
            pos,
            weight_pos,
            budgets,
        })
    }

    /// The profile of a `load:` block; the mistakes in `self.errors`.
    fn profile_parts(&mut self, doc: &document::LoadDoc) -> ProfileParts {
        let pace = self.pace(doc.clients.as_ref(), doc.rate.as_ref());
        let duration =
            self.load_duration(doc.duration.as_ref(), "duration", &limits::LOAD_DURATION);
        let warmup = self.load_duration(doc.warmup.as_ref(), "warmup", &limits::LOAD_DURATION);
        let ramp = self.load_duration(doc.ramp.as_ref(), "ramp", &limits::LOAD_DURATION);
        let think = self.load_duration(doc.think.as_ref(), "think", &limits::THINK);
        let iterations = doc.iterations.as_ref().and_then(|n| {
            if **n >= 1 {
                Some(**n as u64)
            } else {
                self.error(
                    self.at(n),
                    format!("`iterations: {}` must be 1 or more", **n),
                );
                None
            }
        });
        if let (Some(d), Some(n)) = (&doc.duration, &doc.iterations) {
            let _ = d;
            self.errors.push(
                LoadError::at(
                    self.at(n),
                    "`iterations` with `duration`: the run measures one or the other",
                )
                .with_help("remove one of them"),
            );
        }
        if let (Some(r), Some(d)) = (&doc.ramp, duration)
            && ramp.is_some_and(|ramp| ramp >= d)
        {
            self.errors.push(
                LoadError::at(
                    self.at(r),
                    format!("`ramp: {}` is not shorter than the duration", **r),
                )
                .with_help(
                    "the ramp is the start of the measured run: make it shorter than `duration`",
                ),
            );
        }
        let mut stages = Vec::new();
        if let Some(first) = doc.steps.first() {
            let not_with: Vec<&str> = [
                ("clients", doc.clients.is_some()),
                ("rate", doc.rate.is_some()),
                ("duration", doc.duration.is_some()),
                ("iterations", doc.iterations.is_some()),
                ("ramp", doc.ramp.is_some()),
            ]
            .into_iter()
            .filter_map(|(k, set)| set.then_some(k))
            .collect();
            if !not_with.is_empty() {
                self.errors.push(
                    LoadError::at(
                        self.at(first),
                        format!(
                            "`steps` with `{}`: the steps set the pace and the length",
                            not_with.join("`, `")
                        ),
                    )
                    .with_help("give each step its `clients` or `rate` and its `duration`"),
                );
            }
            for stage in &doc.steps {
                let pace = self.pace(stage.clients.as_ref(), stage.rate.as_ref());
                if stage.clients.is_none() && stage.rate.is_none() {
                    self.errors.push(
                        LoadError::at(self.at(stage), "a load step needs `clients` or `rate`")
                            .with_help("e.g. `{ rate: 20, duration: 10s }`"),
                    );
                }
                let duration =
                    self.load_duration(Some(&stage.duration), "duration", &limits::LOAD_DURATION);
                if let (Some(pace), Some(duration)) = (pace, duration) {
                    if let Some(Stage { pace: before, .. }) = stages.first()
                        && std::mem::discriminant(before) != std::mem::discriminant(&pace)
                    {
                        self.errors.push(
                            LoadError::at(
                                self.at(stage),
                                "the load steps mix `clients` and `rate`",
                            )
                            .with_help(
                                "step by concurrency (`clients`) or by rate (`rate`), not both",
                            ),
                        );
                    }
                    stages.push(Stage { pace, duration });
                }
            }
        }
        ProfileParts {
            pace,
            duration,
            iterations,
            warmup,
            ramp,
            stages,
            think,
        }
    }

    /// The budgets of `budgets:`: of a scenario (`Some((id, its step names))`) or of the run.
    fn budgets(
        &mut self,
        docs: &[At<document::BudgetDoc>],
        scenario: Option<(&str, &HashSet<String>)>,
    ) -> Vec<Budget> {
        let mut out = Vec::new();
        for doc in docs {
            let scopes: Vec<(&str, &At<String>)> = [
                ("step", &doc.step),
                ("method", &doc.method),
                ("tool", &doc.tool),
            ]
            .into_iter()
            .filter_map(|(k, v)| v.as_ref().map(|v| (k, v)))
            .collect();
            if let [_, (second, at), ..] = scopes[..] {
                self.errors.push(
                    LoadError::at(self.at(at), format!("a budget holds for one part of the run, and this one names a {} and a `{second}`", scopes[0].0))
                        .with_help("write one budget for each"),
                );
                continue;
            }
            let scope = match scopes.first() {
                None => scenario.map_or(BudgetScope::Run, |(s, _)| {
                    BudgetScope::Scenario(s.to_string())
                }),
                Some(("step", name)) => match scenario {
                    Some((s, names)) if names.contains(name.as_str()) => BudgetScope::Step {
                        scenario: s.to_string(),
                        step: name.value.clone(),
                    },
                    Some((_, names)) => {
                        let help = match did_you_mean(name, names.iter().map(String::as_str)) {
                            Some(s) => format!("did you mean `{s}`?"),
                            None => "name a step of this scenario".to_string(),
                        };
                        self.errors.push(
                            LoadError::at(
                                self.at(name),
                                format!("budget on an unknown step `{}`", name.value),
                            )
                            .with_help(help),
                        );
                        continue;
                    }
                    None => {
                        self.errors.push(
                            LoadError::at(
                                self.at(name),
                                "a budget on a step belongs in its scenario's `load:` block",
                            )
                            .with_help("here, budget a `method` or a `tool`, or the whole run"),
                        );
                        continue;
                    }
                },
                Some(("method", m)) => BudgetScope::Method(m.value.clone()),
                Some((_, t)) => BudgetScope::Tool(t.value.clone()),
            };
            for (q, key, text) in [
                (0.5, "p50", &doc.p50),
                (0.9, "p90", &doc.p90),
                (0.95, "p95", &doc.p95),
                (0.99, "p99", &doc.p99),
                (1.0, "max", &doc.max),
            ] {
                if let Some(at_most) =
                    self.load_duration(text.as_ref(), key, &limits::LOAD_DURATION)
                {
                    let limit = if q < 1.0 {
                        Limit::Percentile {
                            quantile: q,
                            at_most,
                        }
                    } else {
                        Limit::Max(at_most)
                    };
                    out.push(Budget {
                        scope: scope.clone(),
                        limit,
                    });
                }
            }
            for (key, value, make) in [
                (
                    "errorRate",
                    &doc.error_rate,
                    Limit::ErrorRate as fn(f64) -> Limit,
                ),
                (
                    "stepFailureRate",
                    &doc.step_failure_rate,
                    Limit::StepFailureRate,
                ),
            ] {
                if let Some(v) = value {
                    if v.is_finite() && (0.0..=100.0).contains(&**v) {
                        out.push(Budget {
                            scope: scope.clone(),
                            limit: make(**v),
                        });
                    } else {
                        self.errors.push(
                            LoadError::at(
                                self.at(v),
                                format!("`{key}: {}` is not a percentage from 0 to 100", **v),
                            )
                            .with_help("e.g. `1` (1 % fail at most), `0.1`"),
                        );
                    }
                }
            }
            if let Some(v) = &doc.min_throughput {
                if v.is_finite() && **v >= 0.0 {
                    out.push(Budget {
                        scope: scope.clone(),
                        limit: Limit::MinThroughput(**v),
                    });
                } else {
                    self.error(
                        self.at(v),
                        format!("`minThroughput: {}` cannot be negative", **v),
                    );
                }
            }
            let limits_given = [&doc.p50, &doc.p90, &doc.p95, &doc.p99, &doc.max]
                .iter()
                .any(|l| l.is_some())
                || doc.error_rate.is_some()
                || doc.min_throughput.is_some()
                || doc.step_failure_rate.is_some();
            if !limits_given {
                self.errors.push(
                    LoadError::at(self.at(doc), "a budget with no limit")
                        .with_help("give it one of `p50`, `p90`, `p95`, `p99`, `max`, `errorRate`, `minThroughput`, `stepFailureRate`"),
                );
            }
        }
        out
    }

    fn pace(&mut self, clients: Option<&At<i64>>, rate: Option<&At<f64>>) -> Option<Pace> {
        match (clients, rate) {
            (Some(_), Some(r)) => {
                self.errors.push(
                    LoadError::at(self.at(r), "`rate` with `clients`: a load is a closed loop or an open one")
                        .with_help("`clients: N` (each starts its next iteration when its last ended) or `rate: R` (R a second, whatever the server does)"),
                );
                None
            }
            (Some(n), None) => match usize::try_from(**n)
                .ok()
                .filter(|n| limits::CLIENTS.contains(n))
            {
                Some(n) => Some(Pace::Clients(n)),
                None => {
                    self.error(
                        self.at(n),
                        format!(
                            "`clients: {}` is out of range (expected {})",
                            **n,
                            limits::describe(&limits::CLIENTS)
                        ),
                    );
                    None
                }
            },
            (None, Some(r)) => {
                if r.is_finite() && **r > 0.0 && **r <= limits::MAX_RATE {
                    Some(Pace::Rate(**r))
                } else {
                    self.errors.push(
                        LoadError::at(
                            self.at(r),
                            format!("`rate: {}` must be greater than 0", **r),
                        )
                        .with_help(format!(
                            "iterations a second, e.g. `50` or `0.5` (at most {})",
                            limits::MAX_RATE
                        )),
                    );
                    None
                }
            }
            (None, None) => None,
        }
    }

    fn load_duration(
        &mut self,
        text: Option<&At<String>>,
        key: &str,
        range: &std::ops::RangeInclusive<Duration>,
    ) -> Option<Duration> {
        let text = text?;
        let why = if text.trim_start().starts_with('-') {
            "cannot be negative".to_string()
        } else {
            match limits::duration(text, range) {
                Ok(d) => return Some(d),
                Err(e) => e,
            }
        };
        self.errors.push(
            LoadError::at(self.at(text), format!("`{key}: {}`: {why}", **text)).with_help(format!(
                "a duration such as `500ms` or `30s` ({})",
                limits::describe_durations(range)
            )),
        );
        None
    }
}

/// The `load:` block of `mcpspec.yaml` (in `file`): a profile and budgets of the run.
pub fn compile_load_profile(
    file: &Arc<SourceFile>,
    doc: &At<document::LoadDoc>,
) -> Result<(ProfileParts, Vec<Budget>), LoadErrors> {
    let mut c = Compiler::new(file);
    let parts = c.profile_parts(doc);
    let budgets = c.budgets(&doc.budgets, None);
    for (key, at) in [
        ("weight", doc.weight.as_ref().map(|w| (w.line, w.col))),
        ("each", doc.each.as_ref().map(|e| (e.line, e.col))),
    ] {
        if let Some((line, col)) = at {
            c.errors.push(
                LoadError::at(
                    c.pos(line, col),
                    format!("`{key}` is a scenario's part of the workload"),
                )
                .with_help(format!("write `{key}` in the scenario's `load:` block")),
            );
        }
    }
    if c.errors.is_empty() {
        Ok((parts, budgets))
    } else {
        Err(c.errors)
    }
}
