//! Eval sets: a YAML document kind (top-level `evalset: NAME`, files named `*.eval.yaml`
//! so that `run` leaves them alone inside packs). The `*Doc` types are the source of the
//! JSON Schema (`mcpspec schema evalset`); [`EvalSet::load`] checks everything with
//! `file:line:col` and compiles argument predicates with the scenario DSL's own JSONPath
//! expectations.

use std::path::Path;
use std::sync::Arc;

use indexmap::IndexMap;
use regex::Regex;

use super::critics::DEFAULT_JUDGE_THRESHOLD;
use super::profile::Profile;
use super::results::{ExpectationOutcome, SetKind};
use crate::ground::load_error::{LoadError, LoadErrors};
use crate::ground::source::{Pos, SourceFile};
use crate::ground::yaml;
use crate::ground::yaml::value::At;
use crate::language::dsl::scenario::expect::{Expect, ExpectKind, SanitizerSpec};

/// Is this file an eval set, by its name?
pub fn is_eval_file(path: &Path) -> bool {
    crate::language::dsl::discover::is_eval_file(path)
}

/// Eval set files under a folder (recursively, sorted); none for a file.
pub fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if is_eval_file(&path) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Does the folder hold YAML files other than eval sets (scenarios, packs)?
pub fn has_other_yaml(dir: &Path) -> bool {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for path in entries.flatten().map(|e| e.path()) {
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml")
                && !is_eval_file(&path)
            {
                return true;
            }
        }
    }
    false
}

/// Default trials per task when the set names none.
pub const DEFAULT_TRIALS: u32 = 1;
/// Most trials per task a set may ask for.
const MAX_TRIALS: u32 = 1000;

/// Public so that the files the set compiles through (profiles, critics) read the
/// document's types without importing the set.
pub mod doc;

use doc::{EvalSetDoc, Role, TaskExpectationDoc};

/// A loaded, checked eval set.
#[derive(Debug)]
pub struct EvalSet {
    pub name: String,
    pub kind: SetKind,
    pub trials: u32,
    pub system: Option<String>,
    pub profiles: IndexMap<String, Profile>,
    /// The profile that grades judged answers (`judge:`; checked to be one of `profiles`).
    pub judge: Option<String>,
    pub tasks: Vec<Task>,
    /// `sanitize`: what a replay ignores in the server's tool results.
    pub sanitizers: Vec<SanitizerSpec>,
    pub file: Arc<SourceFile>,
}

#[derive(Debug)]
pub struct Task {
    pub id: String,
    pub tags: Vec<String>,
    pub messages: Vec<(Role, String)>,
    pub trials: u32,
    /// When the task passes (`pass:` of the task, else of the set).
    pub pass: super::results::PassRule,
    pub expect: Vec<TaskExpectation>,
    pub pos: Pos,
}

#[derive(Debug)]
pub enum TaskExpectation {
    Calls {
        tool: String,
        args: Vec<Expect>,
        critics: Option<super::critics::Critics>,
    },
    Order(Vec<String>),
    NoToolCall(bool),
    Answer(Answer),
    MaxToolCalls(u32),
}

#[derive(Debug)]
pub enum Answer {
    Contains(String),
    NotContains(String),
    Matches(Regex),
    Equals(String),
    /// Graded by the judge model against the rubric; passes at `threshold` or more.
    Judge {
        rubric: String,
        threshold: f64,
        /// A passing score below this passes with a warning (`warnThreshold`).
        warn: Option<f64>,
    },
}

impl Task {
    /// The task expects that no tool is called.
    pub fn no_tool_call(&self) -> bool {
        self.expect
            .iter()
            .any(|e| matches!(e, TaskExpectation::NoToolCall(true)))
    }

    /// The task has an answer or an argument (a `judge` critic) a judge model grades.
    pub fn judged(&self) -> bool {
        self.expect.iter().any(|e| match e {
            TaskExpectation::Answer(Answer::Judge { .. }) => true,
            TaskExpectation::Calls {
                critics: Some(c), ..
            } => c.judged(),
            _ => false,
        })
    }

    /// The trial's argument score over every `calls` expectation with critics, each
    /// weighing its critics' total weight; `None` when the task has no critics.
    pub fn argument_score(&self, outcomes: &[ExpectationOutcome]) -> Option<f64> {
        let (mut got, mut total) = (0.0, 0.0);
        for (e, o) in self.expect.iter().zip(outcomes) {
            if let TaskExpectation::Calls {
                critics: Some(c), ..
            } = e
            {
                let w = c.total_weight();
                got += o.score.unwrap_or(0.0) * w;
                total += w;
            }
        }
        (total > 0.0).then(|| got / total)
    }

    /// Tool names the expectations name.
    pub fn expected_tools(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for e in &self.expect {
            let more: Vec<&String> = match e {
                TaskExpectation::Calls { tool, .. } => vec![tool],
                TaskExpectation::Order(list) => list.iter().collect(),
                _ => Vec::new(),
            };
            for n in more {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
        }
        names
    }
}

impl EvalSet {
    pub fn load(path: &Path) -> Result<EvalSet, LoadErrors> {
        let file = crate::ground::load_error::read_source(path)?;
        let doc: EvalSetDoc = yaml::parse(&file)?;
        compile(&file, doc)
    }
}

/// The eval set's JSON Schema (`schema/evalset.schema.json`).
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(EvalSetDoc)).expect("schema serializes")
}

fn compile(file: &Arc<SourceFile>, doc: EvalSetDoc) -> Result<EvalSet, LoadErrors> {
    let mut errors = LoadErrors::default();
    let pos = |line: u32, col: u32| Pos::new(file, line, col);
    if doc.evalset.trim().is_empty() {
        errors.push(LoadError::at(
            pos(doc.evalset.line, doc.evalset.col),
            "the eval set's name is empty",
        ));
    }
    let trials_of = |t: &Option<At<u32>>, errors: &mut LoadErrors| match t {
        Some(t) if t.value == 0 || t.value > MAX_TRIALS => {
            errors.push(
                LoadError::at(
                    pos(t.line, t.col),
                    format!("`trials: {}` is out of range", t.value),
                )
                .with_help(format!("give 1 to {MAX_TRIALS}")),
            );
            None
        }
        Some(t) => Some(t.value),
        None => None,
    };
    let trials = trials_of(&doc.trials, &mut errors).unwrap_or(DEFAULT_TRIALS);
    let sanitizers =
        crate::language::dsl::compile_sanitizers(file, doc.sanitize).unwrap_or_else(|e| {
            errors.0.extend(e.0);
            Vec::new()
        });
    let mut profiles = IndexMap::new();
    for (name, p) in doc.models {
        let profile = super::profile::compile(file, name.clone(), p.value, &mut errors);
        profiles.insert(name, profile);
    }
    let judge = doc.judge.map(|j| {
        if !profiles.contains_key(&j.value) {
            let known: Vec<&str> = profiles.keys().map(String::as_str).collect();
            errors.push(
                LoadError::at(
                    pos(j.line, j.col),
                    format!("`judge: {}` names no model profile of the set", j.value),
                )
                .with_help(if known.is_empty() {
                    "declare the judge's profile under `models:`".to_string()
                } else {
                    format!("one of: {}", known.join(", "))
                }),
            );
        }
        j.value
    });
    if doc.tasks.is_empty() {
        errors.push(
            LoadError::at(
                pos(doc.evalset.line, doc.evalset.col),
                "the eval set has no tasks",
            )
            .with_help("add at least one item under `tasks:`"),
        );
    }
    let mut ids: Vec<String> = Vec::new();
    let mut tasks = Vec::new();
    for t in doc.tasks {
        let task_pos = pos(t.line, t.col);
        let t = t.value;
        let id_pos = pos(t.id.line, t.id.col);
        if t.id.trim().is_empty() {
            errors.push(LoadError::at(id_pos.clone(), "task id is empty"));
        } else if ids.contains(&t.id.value) {
            errors.push(
                LoadError::at(id_pos.clone(), format!("duplicate task id `{}`", *t.id))
                    .with_help("task ids pair tasks across runs: each must be unique"),
            );
        }
        ids.push(t.id.value.clone());
        let messages = match (t.prompt, t.messages) {
            (Some(p), None) => vec![(Role::User, p.value)],
            (None, Some(m)) => {
                if m.last().is_none_or(|last| last.role != Role::User) {
                    errors.push(
                        LoadError::at(
                            pos(m.line, m.col),
                            "`messages` must end with a `user` message",
                        )
                        .with_help("the model answers the last user message"),
                    );
                }
                m.value.into_iter().map(|m| (m.role, m.content)).collect()
            }
            (Some(p), Some(_)) => {
                errors.push(LoadError::at(
                    pos(p.line, p.col),
                    "give `prompt` or `messages`, not both",
                ));
                Vec::new()
            }
            (None, None) => {
                errors.push(
                    LoadError::at(id_pos.clone(), format!("task `{}` has no prompt", *t.id))
                        .with_help("add `prompt: ...` or `messages: [...]`"),
                );
                Vec::new()
            }
        };
        let task_trials = trials_of(&t.trials, &mut errors).unwrap_or(trials);
        let none_given = t.expect.is_empty();
        let mut expect = Vec::new();
        for e in t.expect {
            if let Some(x) = expectation(file, e, &mut errors) {
                expect.push(x);
            }
        }
        if none_given {
            errors.push(
                LoadError::at(id_pos, format!("task `{}` has no expectations", *t.id)).with_help(
                    "add `expect:` items such as `- calls: get_weather` or `- noToolCall: true`",
                ),
            );
        }
        tasks.push(Task {
            id: t.id.value,
            tags: t.tags,
            messages,
            trials: task_trials,
            pass: t.pass.or(doc.pass).unwrap_or_default(),
            expect,
            pos: task_pos,
        });
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(EvalSet {
        name: doc.evalset.value,
        kind: doc.kind,
        trials,
        system: doc.system,
        profiles,
        judge,
        tasks,
        sanitizers,
        file: file.clone(),
    })
}

fn expectation(
    file: &Arc<SourceFile>,
    e: At<TaskExpectationDoc>,
    errors: &mut LoadErrors,
) -> Option<TaskExpectation> {
    let at = Pos::new(file, e.line, e.col);
    let e = e.value;
    let kinds: Vec<&str> = [
        (e.calls.is_some(), "calls"),
        (e.order.is_some(), "order"),
        (e.no_tool_call.is_some(), "noToolCall"),
        (e.answer.is_some(), "answer"),
        (e.max_tool_calls.is_some(), "maxToolCalls"),
    ]
    .into_iter()
    .filter_map(|(present, name)| present.then_some(name))
    .collect();
    if kinds.len() != 1 {
        let message = if kinds.is_empty() {
            "empty expectation".to_string()
        } else {
            format!(
                "an expectation has one kind; this one mixes {}",
                kinds.join(", ")
            )
        };
        errors.push(LoadError::at(at, message).with_help(
            "use one of `calls` (with optional `args`), `order`, `noToolCall`, `answer`, `maxToolCalls` per list item",
        ));
        return None;
    }
    if !e.args.is_empty() && e.calls.is_none() {
        errors.push(
            LoadError::at(at, "`args` applies only to a `calls` expectation")
                .with_help("e.g. `- {calls: get_weather, args: [{path: $.city, equals: Boston}]}`"),
        );
        return None;
    }
    if (!e.critics.is_empty() || e.threshold.is_some() || e.warn_threshold.is_some())
        && e.calls.is_none()
    {
        errors.push(
            LoadError::at(
                at,
                "`critics` and `threshold` apply only to a `calls` expectation",
            )
            .with_help("e.g. `- {calls: get_weather, critics: [{path: $.city, similar: Boston}]}`"),
        );
        return None;
    }
    match kinds[0] {
        "calls" => {
            let tool = e.calls.expect("kind checked");
            let critics = super::critics::compile::compile(
                file,
                at.clone(),
                e.critics,
                e.threshold,
                e.warn_threshold,
                errors,
            );
            let mut args = Vec::new();
            let mut ok = true;
            for a in e.args {
                let apos = Pos::new(file, a.line, a.col);
                match crate::language::dsl::compile_expectation(file, a.value, apos.clone()) {
                    Ok(x) if matches!(x.kind, ExpectKind::Path { .. }) => args.push(x),
                    Ok(_) => {
                        ok = false;
                        errors.push(
                            LoadError::at(apos, "argument predicates take `path` and predicates")
                                .with_help("e.g. `{path: $.city, equals: Boston}` — the path is evaluated on the call's arguments object"),
                        );
                    }
                    Err(e) => {
                        ok = false;
                        errors.0.extend(e.0);
                    }
                }
            }
            let critics = critics.ok()?;
            ok.then_some(TaskExpectation::Calls {
                tool: tool.value,
                args,
                critics,
            })
        }
        "order" => {
            let list = e.order.expect("kind checked");
            if list.len() < 2 {
                errors.push(
                    LoadError::at(at, "`order` needs at least two tool names")
                        .with_help("for a single tool use `calls`"),
                );
                return None;
            }
            Some(TaskExpectation::Order(
                list.into_iter().map(|n| n.value).collect(),
            ))
        }
        "noToolCall" => Some(TaskExpectation::NoToolCall(e.no_tool_call.expect("kind"))),
        "maxToolCalls" => Some(TaskExpectation::MaxToolCalls(
            e.max_tool_calls.expect("kind"),
        )),
        "answer" => {
            let a = e.answer.expect("kind checked");
            let apos = Pos::new(file, a.line, a.col);
            let a = a.value;
            let n = [
                a.contains.is_some(),
                a.not_contains.is_some(),
                a.matches.is_some(),
                a.equals.is_some(),
                a.judge.is_some(),
            ]
            .iter()
            .filter(|x| **x)
            .count();
            if n != 1 {
                errors.push(
                    LoadError::at(apos, "`answer` takes exactly one predicate").with_help(
                        "one of `contains`, `notContains`, `matches`, `equals`, `judge`",
                    ),
                );
                return None;
            }
            if a.judge.is_some() || a.threshold.is_some() || a.warn_threshold.is_some() {
                return judged_answer(file, apos, a.judge, a.threshold, a.warn_threshold, errors)
                    .map(TaskExpectation::Answer);
            }
            if let Some(re) = a.matches {
                return match crate::ground::bounds::regex_at(&re, Pos::new(file, re.line, re.col)) {
                    Ok(r) => Some(TaskExpectation::Answer(Answer::Matches(r))),
                    Err(e) => {
                        errors.push(e);
                        None
                    }
                };
            }
            let answer = if let Some(s) = a.contains {
                Answer::Contains(s)
            } else if let Some(s) = a.not_contains {
                Answer::NotContains(s)
            } else {
                Answer::Equals(a.equals.expect("counted"))
            };
            Some(TaskExpectation::Answer(answer))
        }
        other => unreachable!("kind {other}"),
    }
}

/// `answer: {judge: RUBRIC, threshold: T}` checked (the caller found `judge` or
/// `threshold` among the answer's keys).
fn judged_answer(
    file: &Arc<SourceFile>,
    at: Pos,
    rubric: Option<At<String>>,
    threshold: Option<At<f64>>,
    warn: Option<At<f64>>,
    errors: &mut LoadErrors,
) -> Option<Answer> {
    let Some(rubric) = rubric else {
        errors.push(
            LoadError::at(at, "`threshold` of an `answer` applies only with `judge`")
                .with_help("e.g. `answer: {judge: \"The answer names the city\", threshold: 0.8}`"),
        );
        return None;
    };
    if rubric.trim().is_empty() {
        errors.push(
            LoadError::at(Pos::new(file, rubric.line, rubric.col), "the rubric is empty")
                .with_help("say what a good answer does, e.g. `judge: The answer gives the temperature in Boston`"),
        );
        return None;
    }
    let threshold = match &threshold {
        Some(t) => super::critics::compile::unit(file, t, "threshold", errors)?,
        None => DEFAULT_JUDGE_THRESHOLD,
    };
    let warn = super::critics::compile::warn_threshold(file, warn, threshold, errors);
    Some(Answer::Judge {
        rubric: rubric.value,
        threshold,
        warn,
    })
}
