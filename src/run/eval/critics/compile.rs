//! The critics of a set file, checked and built: their paths, weights, matchers and thresholds.

use std::sync::Arc;

use super::similarity::parse_datetime;
use super::{
    Critic, CriticKind, Critics, DEFAULT_JUDGE_THRESHOLD, DEFAULT_SIMILARITY, DEFAULT_THRESHOLD,
};
use crate::ground::json::path::CompiledPath;
use crate::ground::load_error::{LoadError, LoadErrors};
use crate::ground::source::{Pos, SourceFile};
use crate::ground::yaml::value::At;
use crate::run::eval::set::doc::CriticDoc;

/// A `warnThreshold`: 0 to 1 and at least the pass `threshold`, or an error at its
/// position.
pub(in crate::run::eval) fn warn_threshold(
    file: &Arc<SourceFile>,
    warn: Option<At<f64>>,
    threshold: f64,
    errors: &mut LoadErrors,
) -> Option<f64> {
    let w = warn?;
    let value = unit(file, &w, "warnThreshold", errors)?;
    if value + 1e-12 < threshold {
        errors.push(
            LoadError::at(
                Pos::new(file, w.line, w.col),
                format!("`warnThreshold: {value}` is below the pass `threshold` ({threshold})"),
            )
            .with_help("the warn band lies between `threshold` (pass) and `warnThreshold`: give a value from the threshold to 1"),
        );
        return None;
    }
    Some(value)
}

/// A 0..=1 value of the set (`threshold`), or an error at its position.
pub(in crate::run::eval) fn unit(
    file: &Arc<SourceFile>,
    value: &At<f64>,
    what: &str,
    errors: &mut LoadErrors,
) -> Option<f64> {
    if (0.0..=1.0).contains(&value.value) {
        return Some(value.value);
    }
    errors.push(
        LoadError::at(
            Pos::new(file, value.line, value.col),
            format!("`{what}: {}` is out of range", value.value),
        )
        .with_help("give a number from 0 to 1"),
    );
    None
}

/// The critics of a `calls` expectation, checked: `Ok(None)` without critics, `Err` after
/// pushing the errors.
pub(in crate::run::eval) fn compile(
    file: &Arc<SourceFile>,
    at: Pos,
    docs: Vec<At<CriticDoc>>,
    threshold: Option<At<f64>>,
    warn: Option<At<f64>>,
    errors: &mut LoadErrors,
) -> Result<Option<Critics>, ()> {
    let before = errors.0.len();
    if docs.is_empty() {
        if threshold.is_some() || warn.is_some() {
            errors.push(
                LoadError::at(at, "`threshold` of a `calls` expectation needs `critics`")
                    .with_help("add `critics: [{path: $.city, exact: Boston}]`, or use `args` without a threshold"),
            );
            return Err(());
        }
        return Ok(None);
    }
    let threshold = match &threshold {
        Some(t) => unit(file, t, "threshold", errors).unwrap_or(DEFAULT_THRESHOLD),
        None => DEFAULT_THRESHOLD,
    };
    let mut items = Vec::new();
    for d in docs {
        let cpos = Pos::new(file, d.line, d.col);
        let d = d.value;
        let path = match CompiledPath::parse(d.path.trim()) {
            Ok(p) => Some(p),
            Err(why) => {
                errors.push(LoadError::at(
                    Pos::new(file, d.path.line, d.path.col),
                    format!("`path` of a critic: {why}"),
                ));
                None
            }
        };
        let weight = match &d.weight {
            Some(w) if w.value.is_finite() && w.value > 0.0 => w.value,
            Some(w) => {
                errors.push(
                    LoadError::at(
                        Pos::new(file, w.line, w.col),
                        format!("`weight: {}` must be more than 0", w.value),
                    )
                    .with_help("a critic's weight is how much it counts, e.g. `weight: 2`"),
                );
                1.0
            }
            None => 1.0,
        };
        let given: Vec<&str> = [
            (d.exact.is_some(), "exact"),
            (d.number.is_some(), "number"),
            (d.similar.is_some(), "similar"),
            (d.similar_words.is_some(), "similarWords"),
            (d.datetime.is_some(), "datetime"),
            (d.one_of.is_some(), "oneOf"),
            (d.judge.is_some(), "judge"),
        ]
        .into_iter()
        .filter_map(|(present, name)| present.then_some(name))
        .collect();
        if given.len() != 1 {
            errors.push(
                LoadError::at(
                    cpos,
                    if given.is_empty() {
                        "a critic needs a matcher".to_string()
                    } else {
                        format!("a critic has one matcher; this one mixes {}", given.join(", "))
                    },
                )
                .with_help("one of `exact`, `number` (with `tolerance`), `similar` or `similarWords` (with `threshold`), `datetime` (with `within`), `oneOf`, `judge` (a criterion the judge model grades, with `threshold`)"),
            );
            continue;
        }
        let misplaced = |key: &str, value: &Option<At<f64>>, errors: &mut LoadErrors| {
            if let Some(v) = value {
                errors.push(LoadError::at(
                    Pos::new(file, v.line, v.col),
                    format!(
                        "`{key}` applies only to a `{}` critic",
                        match key {
                            "tolerance" => "number",
                            _ => "similar`, `similarWords` or `judge",
                        }
                    ),
                ));
            }
        };
        if given[0] != "datetime"
            && let Some(w) = &d.within
        {
            errors.push(LoadError::at(
                Pos::new(file, w.line, w.col),
                "`within` applies only to a `datetime` critic",
            ));
        }
        let kind = match given[0] {
            "judge" => {
                misplaced("tolerance", &d.tolerance, errors);
                let criterion = d.judge.expect("given");
                if criterion.trim().is_empty() {
                    errors.push(
                        LoadError::at(
                            Pos::new(file, criterion.line, criterion.col),
                            "`judge` of a critic is empty",
                        )
                        .with_help("say what the argument must satisfy, e.g. `judge: a city in the United States`"),
                    );
                }
                let threshold = match &d.threshold {
                    Some(t) => {
                        unit(file, t, "threshold", errors).unwrap_or(DEFAULT_JUDGE_THRESHOLD)
                    }
                    None => DEFAULT_JUDGE_THRESHOLD,
                };
                CriticKind::Judge {
                    criterion: criterion.value.trim().to_string(),
                    threshold,
                }
            }
            "datetime" => {
                misplaced("tolerance", &d.tolerance, errors);
                misplaced("threshold", &d.threshold, errors);
                let text = d.datetime.expect("given");
                let at = parse_datetime(&text).unwrap_or_else(|| {
                    errors.push(
                        LoadError::at(
                            Pos::new(file, text.line, text.col),
                            format!(
                                "`datetime: {}` is not a date or date-time",
                                crate::ground::redact::excerpt(&text)
                            ),
                        )
                        .with_help("e.g. `2026-03-01`, `2026-03-01T09:30:00Z` or `2026-03-01T09:30:00+01:00`"),
                    );
                    chrono::DateTime::UNIX_EPOCH
                });
                let within = match &d.within {
                    Some(w) => humantime::parse_duration(w.trim()).unwrap_or_else(|e| {
                        errors.push(
                            LoadError::at(
                                Pos::new(file, w.line, w.col),
                                format!("`within` of a datetime critic: {e}"),
                            )
                            .with_help("a duration such as `90s`, `1h` or `1day`"),
                        );
                        std::time::Duration::ZERO
                    }),
                    None => std::time::Duration::ZERO,
                };
                CriticKind::DateTime {
                    text: text.value.trim().to_string(),
                    at,
                    within,
                }
            }
            "similarWords" => {
                misplaced("tolerance", &d.tolerance, errors);
                let threshold = match &d.threshold {
                    Some(t) => unit(file, t, "threshold", errors).unwrap_or(DEFAULT_SIMILARITY),
                    None => DEFAULT_SIMILARITY,
                };
                CriticKind::SimilarWords {
                    text: d.similar_words.expect("given"),
                    threshold,
                }
            }
            "exact" => {
                misplaced("tolerance", &d.tolerance, errors);
                misplaced("threshold", &d.threshold, errors);
                CriticKind::Exact(d.exact.expect("given").to_json())
            }
            "oneOf" => {
                misplaced("tolerance", &d.tolerance, errors);
                misplaced("threshold", &d.threshold, errors);
                let list = d.one_of.expect("given");
                if list.is_empty() {
                    errors.push(LoadError::at(cpos, "`oneOf` of a critic is empty"));
                }
                CriticKind::OneOf(list.iter().map(|v| v.to_json()).collect())
            }
            "number" => {
                misplaced("threshold", &d.threshold, errors);
                let value = d.number.expect("given");
                let tolerance = match &d.tolerance {
                    Some(t) if t.value.is_finite() && t.value >= 0.0 => t.value,
                    Some(t) => {
                        errors.push(LoadError::at(
                            Pos::new(file, t.line, t.col),
                            format!("`tolerance: {}` must be 0 or more", t.value),
                        ));
                        0.0
                    }
                    None => 0.0,
                };
                if !value.is_finite() {
                    errors.push(LoadError::at(cpos, "`number` of a critic is not finite"));
                }
                CriticKind::Number { value, tolerance }
            }
            _ => {
                misplaced("tolerance", &d.tolerance, errors);
                let threshold = match &d.threshold {
                    Some(t) => unit(file, t, "threshold", errors).unwrap_or(DEFAULT_SIMILARITY),
                    None => DEFAULT_SIMILARITY,
                };
                CriticKind::Similar {
                    text: d.similar.expect("given"),
                    threshold,
                }
            }
        };
        if let Some(path) = path {
            items.push(Critic {
                path_text: d.path.value.trim().to_string(),
                path,
                kind,
                weight,
            });
        }
    }
    if errors.0.len() > before {
        return Err(());
    }
    let warn = warn_threshold(file, warn, threshold, errors);
    if errors.0.len() > before {
        return Err(());
    }
    Ok(Some(Critics {
        items,
        threshold,
        warn,
    }))
}
