//! Data-driven steps (`each:`) and the scenario's phases (`setup`, `steps`, `teardown`).
//!
//! An `each` step is expanded here, once per row, into ordinary steps (or group calls):
//! each copy is named after its row and carries the row as a bound variable, the same way
//! a group call carries its arguments, so the engine runs rows like any other steps.

use super::*;
use crate::ground::yaml::value::TKind;

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
    pub connection_life: Option<String>,
    /// Some step is a `wire_valid` check.
    pub wire_check: bool,
    /// Some step's probe disturbs a process of its own ([`document::CheckKind::probes_own_process`]).
    pub own_probe: bool,
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
            let rows = match step.each.clone() {
                Some(each) => match self.rows(&each, vars) {
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
                self.one(step, phase, known, out, None);
                continue;
            };
            let var = match &step.as_ {
                Some(name) if !is_variable_name(name) => {
                    let pos = self.at(name);
                    self.errors.push(LoadError::at(
                        pos,
                        format!(
                            "`as: {}` is not a variable name (letters, digits, `_`)",
                            **name
                        ),
                    ));
                    continue;
                }
                Some(name) => name.value.clone(),
                None => ROW.to_string(),
            };
            let mut row_known = known.clone();
            row_known.insert(var.clone());
            row_known.insert(ROW_INDEX.to_string());
            let Some(base) = step.name.as_ref().map(|n| n.value.clone()) else {
                // The missing name is reported by the step's compilation.
                self.one(step, phase, known, out, None);
                continue;
            };
            let errors_before = self.errors.0.len();
            for (index, row) in rows.into_iter().enumerate() {
                // The rows share the step's text: its mistakes are told once, by the first.
                if index > 0 && self.errors.0.len() > errors_before {
                    break;
                }
                let mut copy = step.clone();
                copy.value.each = None;
                copy.value.as_ = None;
                if let Some(name) = &mut copy.value.name {
                    name.value = format!("{base}[{}]", row_label(&row, index));
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
                self.one(copy, phase, &mut row_known.clone(), out, Some(binding));
            }
            // Captures of the rows are known to later steps.
            for name in row_known.difference(known).cloned().collect::<Vec<_>>() {
                if name != var && name != ROW_INDEX {
                    known.insert(name);
                }
            }
        }
    }

    /// Compile one step or group call of a phase; `row`: the bindings of an `each` row.
    fn one(
        &mut self,
        step: At<document::StepDoc>,
        phase: Phase,
        known: &mut BTreeSet<String>,
        out: &mut Collected,
        row: Option<Vec<(String, TValue)>>,
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
            for c in &compiled.captures {
                known.insert(c.name.clone());
            }
            out.changes_target |= compiled.changes_target();
            out.wire_check |= matches!(
                compiled.action,
                Action::Check {
                    kind: document::CheckKind::WireValid,
                    ..
                }
            );
            out.own_probe |= matches!(
                compiled.action,
                Action::Check { kind, .. } if kind.probes_own_process()
            );
            if matches!(compiled.action, Action::Roots(_)) && out.roots_step.is_none() {
                out.roots_step = Some(compiled.pos.clone());
            }
            match compiled.process_use() {
                ProcessUse::Reads => {}
                ProcessUse::Writes(why) => {
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
    fn rows(&mut self, each: &TValue, vars: &IndexMap<String, TValue>) -> Option<Vec<TValue>> {
        let pos = self.pos(each.line, each.col);
        let list = match &each.kind {
            TKind::Seq(items) => items.clone(),
            TKind::Str(text) => {
                let name = text
                    .trim()
                    .strip_prefix("{{")
                    .and_then(|t| t.strip_suffix("}}"))
                    .map(str::trim)
                    .filter(|n| is_variable_name(n));
                let Some(name) = name else {
                    self.errors.push(
                        LoadError::at(pos, "`each` takes a list or `\"{{ name }}\"` of a variable holding a list")
                            .with_help("e.g. `each: [Boston, Paris]` or `each: \"{{ cities }}\"` with `vars: { cities: [Boston, Paris] }`"),
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
                        let help = match did_you_mean(name, defined.iter().copied()) {
                            Some(s) => format!("did you mean `{s}`?"),
                            None => "`each` names a variable of the scenario's `vars:` that holds a list".into(),
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

/// The row's label in the check id: a scalar row itself, a map's `id` or `name`, else the
/// position.
fn row_label(row: &TValue, index: usize) -> String {
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
        .unwrap_or_else(|| index.to_string())
}
