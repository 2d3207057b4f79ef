//! The expectations of an answer: a list's items, a tool's `isError`, each value by its
//! kind (templated, a pattern, as written), or a golden file.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::values::{Pieces, volatile_pattern};
use super::{ExpectMode, MAX_EQUALS_TEXT, MAX_EXPECTATIONS, Step};
use crate::face::app::init::yaml::{literal, slug};
use crate::face::app::record::session::Call;
use crate::ground::json::path::child;
use crate::ground::yaml::write::{quoted, scalar};
use crate::language::assert::golden;
use crate::protocol::{ListKind, methods};

/// The expectations of a result.
pub(super) fn expectations(
    call: &Call,
    result: &Value,
    known: &mut Known,
    mode: ExpectMode,
    step: &mut Step,
) {
    if call.method == methods::TOOLS_CALL {
        let is_error = result
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        step.expect.push(format!("isError: {is_error}"));
    }
    if mode == ExpectMode::Golden {
        let name = slug(&step.name);
        let sanitizers = [
            crate::language::dsl::scenario::expect::SanitizerSpec::Timestamps,
            crate::language::dsl::scenario::expect::SanitizerSpec::Uuids,
        ];
        let value = golden::canonical(result.clone(), &sanitizers);
        step.expect.push(format!(
            "{{ snapshot: {}, sanitize: [timestamps, uuids] }}",
            scalar(&name)
        ));
        step.golden = Some((name, golden::to_text(&value)));
        return;
    }
    if let Some(kind) = ListKind::from_method(&call.method) {
        let items = result
            .get(kind.result_key())
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let path = format!("$.{}[*].{}", kind.result_key(), kind.item_id());
        let ids: Vec<&str> = items
            .iter()
            .filter_map(|i| i.get(kind.item_id()).and_then(Value::as_str))
            .collect();
        step.expect.push(format!(
            "{{ path: {}, length: {} }}",
            quoted(&format!("$.{}", kind.result_key())),
            items.len()
        ));
        for id in ids.iter().take(MAX_EXPECTATIONS) {
            // An item named by a volatile value (a UUID) is another item on the next run.
            if volatile_pattern(id).is_some() && !known.vars.contains_key(*id) {
                continue;
            }
            step.expect.push(format!(
                "{{ path: {}, contains: {} }}",
                quoted(&path),
                expected_string(id, known.vars)
            ));
        }
        return;
    }
    let mut lines = Vec::new();
    let depth = if mode == ExpectMode::Exact { 8 } else { 3 };
    walk_expect(result, "$", 0, depth, known, &mut lines);
    if lines.len() > MAX_EXPECTATIONS {
        step.comments.push(format!(
            "{} more values of the answer not asserted (use --expect golden for the whole answer)",
            lines.len() - MAX_EXPECTATIONS
        ));
        lines.truncate(MAX_EXPECTATIONS);
    }
    step.expect.extend(lines);
}

fn expected_string(s: &str, known: &BTreeMap<String, String>) -> String {
    match known.get(s) {
        Some(var) => quoted(&format!("{{{{ {var} }}}}")),
        None => scalar(&literal(s)),
    }
}

/// What expected values are written with: the captured values (value → variable) and the
/// parameters the scrubbed secrets became.
pub(super) struct Known<'a> {
    pub(super) vars: &'a BTreeMap<String, String>,
    pub(super) parameters: &'a mut BTreeSet<String>,
    pub(super) masked: bool,
}

impl Known<'_> {
    /// A string as an expected value: templated where it holds a captured value or a
    /// secret, a pattern where it holds volatile parts, else as written.
    fn string(&mut self, path: &str, s: &str) -> String {
        let p = quoted(path);
        if s.contains(crate::ground::redact::MASK) {
            self.masked = true;
            return format!("{{ path: {p}, type: string }}");
        }
        let mut pieces = Pieces::new(s);
        pieces.parameters(self.parameters);
        for (value, var) in self.vars.iter().rev() {
            if pieces.holds(value) {
                pieces.replace(value, var);
            }
        }
        let rest: String = pieces
            .0
            .iter()
            .filter(|(v, _)| !v)
            .map(|(_, t)| t.as_str())
            .collect();
        if pieces.changed() && volatile_pattern(&rest).is_none() {
            return format!("{{ path: {p}, equals: {} }}", quoted(&pieces.template()));
        }
        if let Some(pattern) = volatile_pattern(s) {
            format!("{{ path: {p}, matches: {} }}", quoted(&pattern))
        } else if s.len() > MAX_EQUALS_TEXT {
            format!("{{ path: {p}, type: string }}")
        } else {
            format!("{{ path: {p}, equals: {} }}", scalar(&literal(s)))
        }
    }
}

fn walk_expect(
    v: &Value,
    path: &str,
    depth: usize,
    max_depth: usize,
    known: &mut Known,
    out: &mut Vec<String>,
) {
    match v {
        Value::String(s) => out.push(known.string(path, s)),
        Value::Number(_) | Value::Bool(_) | Value::Null => {
            out.push(format!("{{ path: {}, equals: {v} }}", quoted(path)));
        }
        Value::Array(items) => {
            out.push(format!(
                "{{ path: {}, length: {} }}",
                quoted(path),
                items.len()
            ));
            if depth < max_depth {
                for (i, item) in items.iter().enumerate().take(10) {
                    walk_expect(
                        item,
                        &format!("{path}[{i}]"),
                        depth + 1,
                        max_depth,
                        known,
                        out,
                    );
                }
            }
        }
        Value::Object(map) => {
            if depth >= max_depth {
                out.push(format!("{{ path: {}, type: object }}", quoted(path)));
                return;
            }
            for (k, item) in map {
                if matches!(
                    k.as_str(),
                    "_meta" | "isError" | "nextCursor" | "resultType" | "ttlMs" | "cacheScope"
                ) {
                    continue;
                }
                walk_expect(item, &child(path, k), depth + 1, max_depth, known, out);
            }
        }
    }
}
