//! Data-driven steps (`each:`) and the scenario's phases (`setup`, `steps`, `teardown`).
//!
//! An `each` step is expanded here, once per row, into ordinary steps (or group calls):
//! each copy is named after its row and carries the row as a bound variable, the same way
//! a group call carries its arguments, so the engine runs rows like any other steps.

use indexmap::IndexMap;
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use super::{Compiler, is_variable_name};
use crate::ground::load_error::{LoadError, did_you_mean};
use crate::ground::source::Pos;
use crate::ground::yaml::value::{At, TKind, TValue};
use crate::language::dsl::document;
use crate::language::dsl::scenario::{Action, GroupCall, LiveEach, Phase, ProcessUse, Step};

/// The default variable name of an `each` row.
const ROW: &str = "row";
/// The variable holding the row's position.
const ROW_INDEX: &str = "row_index";

/// The compiled steps of a scenario, collected phase by phase.
#[derive(Default)]
pub(super) struct Collected {
    pub steps: Vec<Step>,
    pub step_lines: Vec<u32>,
    pub step_names: Vec<String>,
    pub names: HashSet<String>,
    /// Some step calls the change tool ([`Step::changes_target`]).
    pub changes_target: bool,
    /// The first step that may change what another scenario sees, and the first that
    /// tests the connection's life ([`Step::process_use`]).
    pub writes: Option<String>,
    /// The tools of the writing steps that are `tools/call`s of a named tool, and whether
    /// another step may write ([`Step::called_tool`]).
    pub called_tools: BTreeSet<String>,
    pub other_writes: bool,
    pub connection_life: Option<String>,
    /// Some step is a `wire_valid` check.
    pub wire_check: bool,
    /// Some step's probe disturbs a process of its own ([`document::check::CheckKind::probes_own_process`]).
    pub own_probe: bool,
    /// Some step judges the run's other scenarios ([`document::check::CheckKind::judges_run`]).
    pub judges_run: bool,
    /// The first `roots` step.
    pub roots_step: Option<Pos>,
}

impl Compiler {
    /// Compile the steps of one phase, expanding `use:` and `each:`.
    pub(super) fn phase(
        &mut self,
        doc_steps: Vec<At<document::StepDoc>>,
        phase: Phase,
        vars: &IndexMap<String, TValue>,
        known: &mut BTreeSet<String>,
        out: &mut Collected,
    ) {
        for step in doc_steps {
            // A data file's rows are labelled by their first column when they have no `id`
            // or `name` (a written table keeps its positions).
            let from_file = step
                .each
                .as_ref()
                .is_some_and(|e| matches!(e.kind, TKind::Map(_)));
            // `each` over a list an earlier step captured: its rows come at run time.
            let live_over = step
                .each
                .as_ref()
                .and_then(|e| captured_list(e, vars, known));
            if let Some(over) = live_over {
                self.live_each(step, over, phase, known, out);
                continue;
            }
            let rows = match step.each.clone() {
                Some(each) => match self.rows(&each, vars, known) {
                    Some(rows) => Some(rows),
                    None => continue,
                },
                None => None,
            };
            let Some(rows) = rows else {
                if let Some(as_) = &step.as_ {
                    let pos = self.at(as_);
                    self.errors.push(
                        LoadError::at(
                            pos,
                            "`as` names the row of `each`, and this step has no `each`",
                        )
                        .with_help("add `each: [...]` or remove `as`"),
                    );
                }
                self.one(step, phase, known, out, None, None);
                continue;
            };
            let Some(var) = self.row_var(&step) else {
                continue;
            };
            let mut row_known = known.clone();
            row_known.insert(var.clone());
            row_known.insert(ROW_INDEX.to_string());
            let Some(base) = step.name.as_ref().map(|n| n.value.clone()) else {
                // The missing name is reported by the step's compilation.
                self.one(step, phase, known, out, None, None);
                continue;
            };
            let errors_before = self.errors.0.len();
            let mut labels: Vec<String> = rows
                .iter()
                .enumerate()
                .map(|(index, row)| row_label(row, index, from_file))
                .collect();
            // Rows of a data file that share their first column keep their position too.
            let written = labels.clone();
            for (index, label) in labels.iter_mut().enumerate() {
                if from_file && written.iter().filter(|l| *l == label).count() > 1 {
                    *label = format!("{label}#{index}");
                }
            }
            for (index, row) in rows.into_iter().enumerate() {
                // The rows share the step's text: its mistakes are told once, by the first.
                if index > 0 && self.errors.0.len() > errors_before {
                    break;
                }
                let mut copy = step.clone();
                copy.value.each = None;
                copy.value.as_ = None;
                if let Some(name) = &mut copy.value.name {
                    name.value = format!("{base}[{}]", labels[index]);
                }
                let binding = vec![
                    (var.clone(), row),
                    (
                        ROW_INDEX.to_string(),
                        TValue {
                            line: step.line,
                            col: step.col,
                            kind: TKind::Number(index.into()),
                        },
                    ),
                ];
                self.one(
                    copy,
                    phase,
                    &mut row_known.clone(),
                    out,
                    Some(binding),
                    None,
                );
            }
            // Captures of the rows are known to later steps.
            for name in row_known.difference(known).cloned().collect::<Vec<_>>() {
                if name != var && name != ROW_INDEX {
                    known.insert(name);
                }
            }
        }
    }

    /// The row's variable of an `each` step: `row`, or the name given with `as` (None: the
    /// name is no variable name, an error).
    fn row_var(&mut self, step: &At<document::StepDoc>) -> Option<String> {
        match &step.as_ {
            Some(name) if !is_variable_name(name) => {
                let pos = self.at(name);
                self.errors.push(LoadError::at(
                    pos,
                    format!(
                        "`as: {}` is not a variable name (letters, digits, `_`)",
                        **name
                    ),
                ));
                None
            }
            Some(name) => Some(name.value.clone()),
            None => Some(ROW.to_string()),
        }
    }

    /// An `each` over the captured list `over`: the step (or group call) is compiled once,
    /// with the row's variables known, and marked to run once per item when the run
    /// reaches it (see [`LiveEach`]).
    fn live_each(
        &mut self,
        step: At<document::StepDoc>,
        over: String,
        phase: Phase,
        known: &mut BTreeSet<String>,
        out: &mut Collected,
    ) {
        let Some(var) = self.row_var(&step) else {
            return;
        };
        let Some(base) = step.name.as_ref().map(|n| n.value.clone()) else {
            // The missing name is reported by the step's compilation.
            self.one(step, phase, known, out, None, None);
            return;
        };
        let mut row_known = known.clone();
        row_known.insert(var.clone());
        row_known.insert(ROW_INDEX.to_string());
        let mut copy = step;
        copy.value.each = None;
        copy.value.as_ = None;
        let live = Arc::new(LiveEach {
            over,
            var: var.clone(),
            base,
        });
        self.one(copy, phase, &mut row_known, out, None, Some(live));
        // Captures of the rows are known to later steps.
        for name in row_known.difference(known).cloned().collect::<Vec<_>>() {
            if name != var && name != ROW_INDEX {
                known.insert(name);
            }
        }
    }

    /// Compile one step or group call of a phase; `row`: the bindings of an `each` row;
    /// `live`: the `each` over a captured list it belongs to.
    fn one(
        &mut self,
        step: At<document::StepDoc>,
        phase: Phase,
        known: &mut BTreeSet<String>,
        out: &mut Collected,
        row: Option<Vec<(String, TValue)>>,
        live: Option<Arc<LiveEach>>,
    ) {
        let compiled: Vec<Step> = if step.use_.is_some() {
            self.group_call(step, known)
        } else {
            if let Some(name) = &step.name {
                self.unique_step_name(&mut out.names, &name.value, self.at(name), false);
            }
            // A step that does not compile still defines what it captures: its mistake is
            // reported once, not again at every use of the variable.
            let captured: Vec<String> = step.capture.keys().cloned().collect();
            let compiled: Vec<Step> = self.step(step, known, None).into_iter().collect();
            if compiled.is_empty() {
                known.extend(captured);
            }
            compiled
        };
        // One binding for all the steps of a row (a group call's steps share it).
        let mut row_call: Option<Arc<GroupCall>> = None;
        for mut compiled in compiled {
            if compiled.call.is_some() {
                self.unique_step_name(&mut out.names, &compiled.name, compiled.pos.clone(), true);
            }
            if let Some(bindings) = &row {
                let call = row_call.get_or_insert_with(|| {
                    let mut args = bindings.clone();
                    if let Some(group) = &compiled.call {
                        args.extend(group.args.iter().cloned());
                    }
                    Arc::new(GroupCall {
                        group: compiled
                            .call
                            .as_ref()
                            .map(|g| g.group.clone())
                            .unwrap_or_else(|| "each".into()),
                        args,
                    })
                });
                compiled.call = Some(Arc::clone(call));
            }
            compiled.phase = phase;
            if let Some(live) = &live {
                compiled.uses.insert(live.over.clone());
                compiled.each = Some(Arc::clone(live));
            }
            for c in &compiled.captures {
                known.insert(c.name.clone());
            }
            out.changes_target |= compiled.changes_target();
            out.wire_check |= matches!(
                compiled.action,
                Action::Check {
                    kind: document::check::CheckKind::WireValid,
                    ..
                }
            );
            out.own_probe |= matches!(
                compiled.action,
                Action::Check { kind, .. } if kind.probes_own_process()
            );
            out.judges_run |= matches!(
                compiled.action,
                Action::Check { kind, .. } if kind.judges_run()
            );
            if matches!(compiled.action, Action::Roots(_)) && out.roots_step.is_none() {
                out.roots_step = Some(compiled.pos.clone());
            }
            match compiled.process_use() {
                ProcessUse::Reads => {}
                ProcessUse::Writes(why) => {
                    match compiled.called_tool() {
                        Some(tool) => {
                            out.called_tools.insert(tool.to_string());
                        }
                        None => out.other_writes = true,
                    }
                    out.writes.get_or_insert(why);
                }
                ProcessUse::ConnectionLife(why) => {
                    out.connection_life.get_or_insert(why);
                }
            }
            if self.release {
                out.step_lines.push(compiled.pos.line);
                out.step_names.push(compiled.name.clone());
            } else {
                out.steps.push(compiled);
            }
        }
    }

    /// The rows of `each`: a list written in place, or `"{{ name }}"` naming a scenario
    /// variable that holds one.
    pub(super) fn rows(
        &mut self,
        each: &TValue,
        vars: &IndexMap<String, TValue>,
        known: &BTreeSet<String>,
    ) -> Option<Vec<TValue>> {
        let pos = self.pos(each.line, each.col);
        let list = match &each.kind {
            TKind::Seq(items) => items.clone(),
            TKind::Map(_) if each.get("file").is_some() => self.data_file(each)?,
            TKind::Str(text) => {
                let name = text
                    .trim()
                    .strip_prefix("{{")
                    .and_then(|t| t.strip_suffix("}}"))
                    .map(str::trim)
                    .filter(|n| is_variable_name(n));
                let Some(name) = name else {
                    self.errors.push(
                        LoadError::at(pos, "`each` takes a list, `\"{{ name }}\"` of a variable holding a list, or `{file: rows.csv}`")
                            .with_help("e.g. `each: [Boston, Paris]`, `each: \"{{ cities }}\"` with `vars: { cities: [Boston, Paris] }`, or `each: {file: cities.csv}` (CSV, JSON or YAML)"),
                    );
                    return None;
                };
                match vars.get(name).map(|v| &v.kind) {
                    Some(TKind::Seq(items)) => items.clone(),
                    Some(_) => {
                        self.errors.push(
                            LoadError::at(pos, format!("`each`: variable `{name}` is not a list"))
                                .with_help("`each` names a variable of `vars:` written as a list"),
                        );
                        return None;
                    }
                    None => {
                        let defined: Vec<&str> = vars.keys().map(String::as_str).collect();
                        let help = match did_you_mean(name, defined.iter().copied().chain(known.iter().map(String::as_str))) {
                            Some(s) => format!("did you mean `{s}`?"),
                            None => "`each` names a variable of the scenario's `vars:`, or one an earlier step captured, that holds a list".into(),
                        };
                        self.errors.push(
                            LoadError::at(pos, format!("`each`: no list variable `{name}`"))
                                .with_help(help),
                        );
                        return None;
                    }
                }
            }
            _ => {
                self.errors.push(
                    LoadError::at(pos, "`each` takes a list of rows")
                        .with_help("e.g. `each: [Boston, Paris]` or a list of maps"),
                );
                return None;
            }
        };
        if list.is_empty() {
            // Nothing to run: an absent input is no failure, but it must not go unseen.
            self.errors.push(
                LoadError::at(pos, "`each` has no rows")
                    .with_help("give at least one row, or remove the step"),
            );
            return None;
        }
        Some(list)
    }
}

impl Compiler {
    /// The rows of `each: {file: PATH}`: a CSV file (a header line, then one map per line,
    /// values as text), or a JSON or YAML file holding a list; relative to the scenario.
    fn data_file(&mut self, each: &TValue) -> Option<Vec<TValue>> {
        let pos = self.pos(each.line, each.col);
        let TKind::Map(entries) = &each.kind else {
            unreachable!("checked by the caller")
        };
        if let Some((key, v)) = entries.iter().find(|(k, _)| k != "file") {
            self.errors.push(
                LoadError::at(
                    self.pos(v.line, v.col),
                    format!("unknown key `{key}` in `each`"),
                )
                .with_help("`each: {file: rows.csv}` takes only `file`"),
            );
            return None;
        }
        let file = each.get("file").expect("checked by the caller");
        let fpos = self.pos(file.line, file.col);
        let Some(name) = file.as_str() else {
            self.errors.push(
                LoadError::at(fpos, "`file` names a file")
                    .with_help("e.g. `each: {file: cities.csv}`"),
            );
            return None;
        };
        let path = std::path::Path::new(&self.file.name)
            .parent()
            .unwrap_or(std::path::Path::new("."))
            .join(name);
        let text = match crate::ground::source::read_text(&path) {
            Ok(t) => t,
            Err(e) => {
                self.errors.push(
                    LoadError::at(fpos, format!("cannot read `{}`: {e}", path.display()))
                        .with_help("the path is relative to the scenario file"),
                );
                return None;
            }
        };
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let parsed: Result<serde_json::Value, String> = match extension {
            "csv" => crate::ground::csv::rows(&text)
                .map(|rows| {
                    serde_json::Value::Array(
                        rows.into_iter()
                            .map(|row| {
                                serde_json::Value::Object(
                                    row.into_iter()
                                        .map(|(k, v)| (k, serde_json::Value::String(v)))
                                        .collect(),
                                )
                            })
                            .collect(),
                    )
                })
                .map_err(|(line, why)| format!("line {line}: {why}")),
            "json" => serde_json::from_str(&text).map_err(|e| e.to_string()),
            "yaml" | "yml" => crate::ground::yaml::from_str(&text).map_err(|e| e.to_string()),
            _ => Err("expected a .csv, .json, .yaml or .yml file".into()),
        };
        match parsed {
            Ok(serde_json::Value::Array(rows)) => Some(
                rows.iter()
                    .map(|row| TValue::from_json(row, file.line, file.col))
                    .collect(),
            ),
            Ok(_) => {
                self.errors.push(
                    LoadError::at(fpos, format!("`{}` holds no list of rows", path.display()))
                        .with_help("a JSON or YAML data file holds a list: `[{city: Boston}, {city: Paris}]`"),
                );
                None
            }
            Err(why) => {
                self.errors.push(LoadError::at(
                    fpos,
                    format!("`{}` is not a valid data file: {why}", path.display()),
                ));
                let _ = pos;
                None
            }
        }
    }
}

/// The variable `each: "{{ name }}"` names when an earlier step captures it (and `vars:`
/// does not define it).
fn captured_list(
    each: &TValue,
    vars: &IndexMap<String, TValue>,
    known: &BTreeSet<String>,
) -> Option<String> {
    let TKind::Str(text) = &each.kind else {
        return None;
    };
    let name = text.trim().strip_prefix("{{")?.strip_suffix("}}")?.trim();
    (is_variable_name(name) && !vars.contains_key(name) && known.contains(name))
        .then(|| name.to_string())
}

/// The row's label in the check id: a scalar row itself, a map's `id` or `name`, else the
/// position.
fn row_label(row: &TValue, index: usize, first_column: bool) -> String {
    let scalar = |v: &TValue| match &v.kind {
        TKind::Str(s) if !s.contains("{{") && s.len() <= 40 && !s.contains(['[', ']']) => {
            Some(s.clone())
        }
        TKind::Number(n) => Some(n.to_string()),
        TKind::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    scalar(row)
        .or_else(|| row.get("id").and_then(scalar))
        .or_else(|| row.get("name").and_then(scalar))
        .or_else(|| match &row.kind {
            // A data file's row: its first column, with the position so two rows that
            // share it stay apart.
            TKind::Map(entries) if first_column => entries.first().and_then(|(_, v)| scalar(v)),
            _ => None,
        })
        .unwrap_or_else(|| index.to_string())
}
