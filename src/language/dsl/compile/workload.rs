//! `load:` blocks: every value checked at its position (a rate of 0, a negative or zero
//! duration, a count out of range, parts that exclude each other), as `validate` tells any
//! other mistake.

use std::time::Duration;

use super::*;
use crate::language::dsl::limits;
use crate::language::dsl::workload::{Pace, ProfileParts, Stage, Workload};

impl Compiler {
    /// A scenario's `load:` block (`vars`: its variables, which `each` may name).
    pub(super) fn workload(
        &mut self,
        doc: At<document::LoadDoc>,
        vars: &IndexMap<String, TValue>,
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
        let rows = match &doc.each {
            Some(each) => self
                .rows(each, vars)
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

/// The `load:` block of `mcpspec.yaml` (in `file`): a profile only.
pub fn compile_load_profile(
    file: &Arc<SourceFile>,
    doc: &At<document::LoadDoc>,
) -> Result<ProfileParts, LoadErrors> {
    let mut c = Compiler::new(file);
    let parts = c.profile_parts(doc);
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
        Ok(parts)
    } else {
        Err(c.errors)
    }
}
