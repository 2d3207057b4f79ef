//! The variables of a scenario's run: those it starts with, and those bound for a while
//! (the row of a live `each` over a captured list, the arguments of a group call), each
//! remembering what it shadowed, to put back when unbound.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::language::dsl::template::render_value;
use crate::language::dsl::{GroupCall, LiveEach, Scenario};
use crate::run::client::Connection;

/// The variables a scenario starts with: the era, the parameters, `load`, and its `vars`
/// rendered in order; why not all, when one cannot be made.
pub(super) fn initial(
    scenario: &Scenario,
    params: &Map<String, Value>,
    conn: &Connection,
) -> (Map<String, Value>, Option<String>) {
    use crate::language::dsl::workload;
    let mut ctx = Map::new();
    ctx.insert("era".into(), json!(conn.negotiated.kind.as_str()));
    ctx.insert("revision".into(), json!(conn.negotiated.revision));
    // Command-line parameters: usable in `vars`, and they win over a var of the same name.
    ctx.extend(params.iter().map(|(k, v)| (k.clone(), v.clone())));
    // Outside `mcpspec load` (which sets it per iteration), the first iteration's values.
    if !ctx.contains_key(workload::VAR) {
        let row = scenario.load.as_ref().and_then(|l| l.rows.first());
        ctx.insert(workload::VAR.into(), workload::vars(0, 0, row));
    }
    for (name, value) in scenario
        .vars
        .iter()
        .filter(|(n, _)| !params.contains_key(n))
    {
        match render_value(value, &Value::Object(ctx.clone())) {
            Ok(v) => {
                // A secret-named var made by a template: known to every output from now on.
                if crate::ground::redact::is_secret_param(name)
                    && let Some(text) = crate::ground::redact::secret_text(&v)
                {
                    crate::ground::redact::remember(&[text]);
                }
                ctx.insert(name.clone(), v);
            }
            Err((_, _, e)) => {
                return (ctx, Some(format!("variable `{name}`: {e}")));
            }
        }
    }
    (ctx, None)
}

/// The rows of an `each` over a captured list, run over the steps `start..end`.
pub(super) struct LiveRun {
    pub(super) each: Arc<LiveEach>,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) rows: Vec<Value>,
    /// Each row's label in the check id (see [`live_labels`]).
    pub(super) labels: Vec<String>,
    pub(super) row: usize,
    /// The values the row's variables shadowed.
    shadowed: Vec<(String, Option<Value>)>,
}

impl LiveRun {
    pub(super) fn new(each: Arc<LiveEach>, start: usize, end: usize, rows: Vec<Value>) -> Self {
        LiveRun {
            labels: live_labels(&rows),
            each,
            start,
            end,
            rows,
            row: 0,
            shadowed: Vec::new(),
        }
    }

    pub(super) fn bind(&mut self, ctx: &mut Map<String, Value>) {
        let row = self.rows[self.row].clone();
        self.shadowed = vec![
            (
                self.each.var.clone(),
                ctx.insert(self.each.var.clone(), row),
            ),
            (
                ROW_INDEX.to_string(),
                ctx.insert(ROW_INDEX.to_string(), json!(self.row)),
            ),
        ];
    }

    pub(super) fn unbind(&mut self, ctx: &mut Map<String, Value>) {
        for (name, old) in self.shadowed.drain(..).rev() {
            match old {
                Some(v) => ctx.insert(name, v),
                None => ctx.remove(&name),
            };
        }
    }
}

/// The variable holding an `each` row's position.
const ROW_INDEX: &str = "row_index";

/// The labels of a captured list's rows, as a written list's: a scalar row itself, a map's
/// `id` or `name`, else the position; a label two rows share carries the position too.
fn live_labels(rows: &[Value]) -> Vec<String> {
    let scalar = |v: &Value| match v {
        Value::String(s) if s.chars().count() <= 40 && !s.contains(['[', ']']) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    let labels: Vec<String> = rows
        .iter()
        .enumerate()
        .map(|(index, row)| {
            scalar(row)
                .or_else(|| row.get("id").and_then(scalar))
                .or_else(|| row.get("name").and_then(scalar))
                .unwrap_or_else(|| index.to_string())
        })
        .collect();
    labels
        .iter()
        .enumerate()
        .map(|(index, label)| {
            if labels.iter().filter(|l| *l == label).count() > 1 {
                format!("{label}#{index}")
            } else {
                label.clone()
            }
        })
        .collect()
}

/// A group call's arguments, rendered against the caller's variables when the call's
/// first step runs, and the values they shadowed.
pub(super) struct BoundCall {
    pub(super) call: Arc<GroupCall>,
    shadowed: Vec<(String, Option<Value>)>,
    pub(super) error: Option<String>,
}

impl BoundCall {
    pub(super) fn bind(call: &Arc<GroupCall>, ctx: &mut Map<String, Value>) -> Self {
        let vars = Value::Object(ctx.clone());
        let mut bound = BoundCall {
            call: call.clone(),
            shadowed: Vec::new(),
            error: None,
        };
        // In order, each against the variables bound before it: an `each` row comes first,
        // so a group call's arguments can use it.
        let mut vars = vars;
        for (name, value) in &call.args {
            match render_value(value, &vars) {
                Ok(v) => {
                    bound
                        .shadowed
                        .push((name.clone(), ctx.insert(name.clone(), v)));
                    if call.args.len() > 1 {
                        vars = Value::Object(ctx.clone());
                    }
                }
                Err((_, _, e)) => {
                    bound.error = Some(format!("argument `{name}` of group `{}`: {e}", call.group));
                    break;
                }
            }
        }
        bound
    }

    pub(super) fn unbind(self, ctx: &mut Map<String, Value>) {
        for (name, old) in self.shadowed.into_iter().rev() {
            match old {
                Some(v) => ctx.insert(name, v),
                None => ctx.remove(&name),
            };
        }
    }
}
