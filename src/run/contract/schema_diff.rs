//! Direction-aware JSON Schema comparator.
//!
//! [`compare`] walks two versions of a tool's `inputSchema` (or `outputSchema`) side by
//! side and classifies every difference it understands with a stable `kind`, whether it
//! breaks protocol clients ([`Breaks`]) and whether it affects models ([`Models`]).
//!
//! The classification depends on the [`SchemaSide`]:
//!
//! * **Input**: values that used to be valid must stay valid. Narrowing the set of
//!   accepted values breaks callers; widening it does not.
//! * **Output**: clients that parse or validate results must not break. Widening the
//!   set of values the server may produce breaks them; narrowing it does not.
//!
//! Keywords whose effect cannot be decided structurally (`$ref`, `oneOf`, `if`, ...) are
//! never interpreted: when they differ, one `unknown_schema_change` is reported for the
//! schema node that holds them, and nothing else is guessed about that node. Vendor
//! `x-*` annotations are ignored, except `x-mcp-header`, which has kinds of its own.

mod keywords;
mod verdict;

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::ground::json::json_eq;
use crate::language::contract_rules::change_kind::ChangeKind;

use keywords::opt_eq;
pub use verdict::verdict;

/// Which side of a tool call the schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SchemaSide {
    /// `inputSchema`: the arguments a client sends.
    Input,
    /// `outputSchema`: the structured content a server returns.
    Output,
}

/// Does the change break protocol clients?
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Breaks {
    Yes,
    No,
    /// The comparator cannot decide.
    Unknown,
}

/// Does the change affect how a model uses the tool?
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Models {
    Yes,
    No,
    Possibly,
}

/// One classified difference between two schemas.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaChange {
    /// Stable identifier of the change, e.g. `required_parameter_added`.
    pub kind: ChangeKind,
    /// Location relative to the schema root, segments joined with `.`
    /// (`properties.units.enum`, `required`, `properties["a.b"].type`); empty for the root.
    pub path: String,
    pub before: Option<Value>,
    pub after: Option<Value>,
    pub breaks: Breaks,
    pub models: Models,
}

/// Compares two versions of a schema and returns every classified change, sorted by
/// path, then kind. Equal schemas (key order and numeric spelling aside) give an empty
/// list.
pub fn compare(before: &Value, after: &Value, direction: SchemaSide) -> Vec<SchemaChange> {
    let mut cx = Cx {
        dir: direction,
        out: Vec::new(),
    };
    cx.node("", before, after);
    cx.out.sort_by(|a, b| {
        a.path
            .cmp(&b.path)
            .then_with(|| a.kind.as_str().cmp(b.kind.as_str()))
    });
    cx.out
}

/// Pure annotations with no effect on validity nor on the vocabulary: differences are
/// not reported.
const IGNORED: &[&str] = &[
    "$schema",
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$recursiveAnchor",
    "$vocabulary",
    "$comment",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// Keywords compared by a dedicated rule below.
const HANDLED: &[&str] = &[
    "type",
    "enum",
    "const",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "maxItems",
    "minItems",
    "maxProperties",
    "minProperties",
    "multipleOf",
    "uniqueItems",
    "pattern",
    "format",
    "additionalProperties",
    "unevaluatedProperties",
    "description",
    "title",
    "default",
    "properties",
    "required",
    "items",
];

/// Every type a schema without `type` admits (`integer` is covered by `number`).
const ALL_TYPES: &[&str] = &["array", "boolean", "null", "number", "object", "string"];

struct Cx {
    dir: SchemaSide,
    out: Vec<SchemaChange>,
}

impl Cx {
    fn emit(
        &mut self,
        kind: ChangeKind,
        path: String,
        before: Option<Value>,
        after: Option<Value>,
    ) {
        let (breaks, models) = verdict(kind, self.dir);
        self.out.push(SchemaChange {
            kind,
            path,
            before,
            after,
            breaks,
            models,
        });
    }

    fn input(&self) -> bool {
        self.dir == SchemaSide::Input
    }

    /// Compares two (sub)schemas found at `path`.
    fn node(&mut self, path: &str, before: &Value, after: &Value) {
        if json_eq(before, after) {
            return;
        }
        let empty = Map::new();
        let (b, a) = match (as_schema(before, &empty), as_schema(after, &empty)) {
            (Some(b), Some(a)) => (b, a),
            // `false`, or something that is not a schema at all: nothing to reason about.
            _ => {
                self.emit(
                    ChangeKind::UnknownSchemaChange,
                    path.to_string(),
                    Some(before.clone()),
                    Some(after.clone()),
                );
                return;
            }
        };

        // Keywords that differ and that no rule below understands.
        let mut unknown: BTreeSet<&str> = BTreeSet::new();
        let keys: BTreeSet<&str> = b.keys().chain(a.keys()).map(String::as_str).collect();
        for &k in &keys {
            if IGNORED.contains(&k) || HANDLED.contains(&k) || opt_eq(b.get(k), a.get(k)) {
                continue;
            }
            if k == "x-mcp-header" {
                let kind = match (b.get(k), a.get(k)) {
                    (None, Some(_)) => ChangeKind::XMcpHeaderAdded,
                    (Some(_), None) => ChangeKind::XMcpHeaderRemoved,
                    _ => ChangeKind::XMcpHeaderChanged,
                };
                self.emit(kind, join(path, k), b.get(k).cloned(), a.get(k).cloned());
                continue;
            }
            if k.starts_with("x-") {
                // Vendor annotations do not take part in validation.
                continue;
            }
            // `$ref`, `$defs`/`definitions`, `oneOf`/`anyOf`/`allOf`/`not`,
            // `if`/`then`/`else`, `dependentSchemas`/`dependentRequired`/`dependencies`,
            // `patternProperties`, `propertyNames`, `contains`, `prefixItems`, ... and
            // anything unrecognised (vendor extensions such as `x-mcp-header`
            // included): the comparator cannot decide.
            unknown.insert(k);
        }

        if !unknown.is_empty() {
            // Undecidable keywords differ: say so for this node and do not guess about
            // anything else in it (its other keywords may interact with them).
            self.emit_unknown(path, b, a, &unknown);
            return;
        }

        self.types(path, b, a, &mut unknown);
        self.enums(path, b, a, &mut unknown);
        self.presence(
            path,
            b,
            a,
            "const",
            [
                ChangeKind::ConstAdded,
                ChangeKind::ConstChanged,
                ChangeKind::ConstRemoved,
            ],
        );
        self.numeric_bound(
            path,
            b,
            a,
            ("maximum", "exclusiveMaximum"),
            true,
            &mut unknown,
        );
        self.numeric_bound(
            path,
            b,
            a,
            ("minimum", "exclusiveMinimum"),
            false,
            &mut unknown,
        );
        for key in ["maxLength", "maxItems", "maxProperties"] {
            self.count_bound(path, b, a, key, true, &mut unknown);
        }
        for key in ["minLength", "minItems", "minProperties"] {
            self.count_bound(path, b, a, key, false, &mut unknown);
        }
        self.multiple_of(path, b, a, &mut unknown);
        self.unique_items(path, b, a, &mut unknown);
        self.presence(
            path,
            b,
            a,
            "pattern",
            [
                ChangeKind::PatternAdded,
                ChangeKind::PatternChanged,
                ChangeKind::PatternRemoved,
            ],
        );
        self.presence(
            path,
            b,
            a,
            "format",
            [
                ChangeKind::FormatAdded,
                ChangeKind::FormatChanged,
                ChangeKind::FormatRemoved,
            ],
        );
        self.additional(path, b, a, "additionalProperties", &mut unknown);
        self.additional(path, b, a, "unevaluatedProperties", &mut unknown);
        for (key, kind) in [
            ("description", ChangeKind::ParameterDescriptionChanged),
            ("title", ChangeKind::ParameterTitleChanged),
            ("default", ChangeKind::DefaultChanged),
        ] {
            if !opt_eq(b.get(key), a.get(key)) {
                self.emit(
                    kind,
                    join(path, key),
                    b.get(key).cloned(),
                    a.get(key).cloned(),
                );
            }
        }
        self.properties(path, b, a, &mut unknown);
        self.items(path, b, a, &mut unknown);

        if !unknown.is_empty() {
            self.emit_unknown(path, b, a, &unknown);
        }
    }

    /// One `unknown_schema_change` at `path`, holding only the undecidable keywords.
    fn emit_unknown(
        &mut self,
        path: &str,
        b: &Map<String, Value>,
        a: &Map<String, Value>,
        unknown: &BTreeSet<&str>,
    ) {
        let pick = |m: &Map<String, Value>| {
            let sub: Map<String, Value> = unknown
                .iter()
                .filter_map(|&k| m.get(k).map(|v| (k.to_string(), v.clone())))
                .collect();
            (!sub.is_empty()).then_some(Value::Object(sub))
        };
        let (before, after) = (pick(b), pick(a));
        self.emit(
            ChangeKind::UnknownSchemaChange,
            path.to_string(),
            before,
            after,
        );
    }

    fn properties(
        &mut self,
        path: &str,
        b: &Map<String, Value>,
        a: &Map<String, Value>,
        unknown: &mut BTreeSet<&str>,
    ) {
        if opt_eq(b.get("properties"), a.get("properties"))
            && opt_eq(b.get("required"), a.get("required"))
        {
            return;
        }
        let empty = Map::new();
        let (Some(bp), Some(ap)) = (props_of(b, &empty), props_of(a, &empty)) else {
            unknown.insert("properties");
            return;
        };
        let (Some(breq), Some(areq)) = (required_set(b), required_set(a)) else {
            unknown.insert("required");
            return;
        };

        let removed: Vec<&str> = sorted_keys(bp)
            .into_iter()
            .filter(|k| !ap.contains_key(*k))
            .collect();
        let added: Vec<&str> = sorted_keys(ap)
            .into_iter()
            .filter(|k| !bp.contains_key(*k))
            .collect();

        // Rename: a removed and an added property with equal subschemas and the same
        // requiredness, each being the other's only match.
        let matches =
            |r: &str, n: &str| json_eq(&bp[r], &ap[n]) && breq.contains(r) == areq.contains(n);
        let mut renamed: Vec<(&str, &str)> = Vec::new();
        for &r in &removed {
            let cands: Vec<&str> = added.iter().copied().filter(|n| matches(r, n)).collect();
            if let [n] = cands[..]
                && removed.iter().filter(|o| matches(o, n)).count() == 1
            {
                renamed.push((r, n));
            }
        }
        let input = self.input();
        for &(r, n) in &renamed {
            let kind = if input {
                ChangeKind::ParameterRenamed
            } else {
                ChangeKind::OutputPropertyRenamed
            };
            self.emit(
                kind,
                join(path, &prop_segment(r)),
                Some(Value::String(r.into())),
                Some(Value::String(n.into())),
            );
        }
        for &r in removed
            .iter()
            .filter(|r| !renamed.iter().any(|(o, _)| o == *r))
        {
            let kind = if input {
                ChangeKind::ParameterRemoved
            } else {
                ChangeKind::OutputPropertyRemoved
            };
            self.emit(
                kind,
                join(path, &prop_segment(r)),
                Some(bp[r].clone()),
                None,
            );
        }
        for &n in added
            .iter()
            .filter(|n| !renamed.iter().any(|(_, m)| m == *n))
        {
            let kind = match (input, areq.contains(n)) {
                (true, true) => ChangeKind::RequiredParameterAdded,
                (true, false) => ChangeKind::OptionalParameterAdded,
                (false, _) => ChangeKind::OutputPropertyAdded,
            };
            self.emit(
                kind,
                join(path, &prop_segment(n)),
                None,
                Some(ap[n].clone()),
            );
        }
        for k in sorted_keys(bp) {
            if let Some(new) = ap.get(k) {
                self.node(&join(path, &prop_segment(k)), &bp[k], new);
            }
        }

        // `required` changes of properties that exist on both sides (or of names that
        // are required without being declared): one change per node and kind, holding
        // both lists.
        let entered = areq
            .iter()
            .any(|n| !breq.contains(n) && !added.contains(&n.as_str()));
        let left = breq
            .iter()
            .any(|n| !areq.contains(n) && !removed.contains(&n.as_str()));
        let (x, y) = (b.get("required").cloned(), a.get("required").cloned());
        if entered {
            let kind = if input {
                ChangeKind::ParameterBecameRequired
            } else {
                ChangeKind::OutputPropertyNowRequired
            };
            self.emit(kind, join(path, "required"), x.clone(), y.clone());
        }
        if left {
            let kind = if input {
                ChangeKind::ParameterBecameOptional
            } else {
                ChangeKind::OutputPropertyNoLongerRequired
            };
            self.emit(kind, join(path, "required"), x, y);
        }
    }

    fn items(
        &mut self,
        path: &str,
        b: &Map<String, Value>,
        a: &Map<String, Value>,
        unknown: &mut BTreeSet<&str>,
    ) {
        let (x, y) = (b.get("items"), a.get("items"));
        if opt_eq(x, y) {
            return;
        }
        if matches!(x, Some(Value::Array(_))) || matches!(y, Some(Value::Array(_))) {
            // draft-7 tuple form: positional, not compared
            unknown.insert("items");
            return;
        }
        let t = Value::Bool(true);
        self.node(&join(path, "items"), x.unwrap_or(&t), y.unwrap_or(&t));
    }
}

/// `true` and objects are schemas; `true` has no constraints.
fn as_schema<'a>(v: &'a Value, empty: &'a Map<String, Value>) -> Option<&'a Map<String, Value>> {
    match v {
        Value::Bool(true) => Some(empty),
        Value::Object(m) => Some(m),
        _ => None,
    }
}

/// Joins a path and a segment with `.`.
pub(crate) fn join(path: &str, seg: &str) -> String {
    if path.is_empty() {
        seg.to_string()
    } else {
        format!("{path}.{seg}")
    }
}

/// `properties.name`, or `properties["a.b"]` when the name would be ambiguous in a path.
pub(crate) fn prop_segment(name: &str) -> String {
    if name.is_empty() || name.contains(['.', '[', ']', '"']) {
        format!("properties[{}]", Value::String(name.to_string()))
    } else {
        format!("properties.{name}")
    }
}

fn props_of<'a>(
    m: &'a Map<String, Value>,
    empty: &'a Map<String, Value>,
) -> Option<&'a Map<String, Value>> {
    match m.get("properties") {
        None => Some(empty),
        Some(Value::Object(p)) => Some(p),
        Some(_) => None,
    }
}

fn sorted_keys(m: &Map<String, Value>) -> Vec<&str> {
    let mut keys: Vec<&str> = m.keys().map(String::as_str).collect();
    keys.sort_unstable();
    keys
}

fn required_set(m: &Map<String, Value>) -> Option<BTreeSet<String>> {
    match m.get("required") {
        None => Some(BTreeSet::new()),
        Some(Value::Array(xs)) => xs.iter().map(|x| x.as_str().map(str::to_string)).collect(),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use Breaks as B;
    use Models as M;
    use SchemaSide::{Input as I, Output as O};

    /// The verdict of the kind of that name.
    fn verdict_of(name: &str, dir: SchemaSide) -> (Breaks, Models) {
        verdict(ChangeKind::parse(name).expect(name), dir)
    }

    /// Exactly one change, with this kind, path and verdict.
    #[track_caller]
    fn one(
        before: Value,
        after: Value,
        dir: SchemaSide,
        kind: &str,
        path: &str,
        breaks: Breaks,
        models: Models,
    ) -> SchemaChange {
        let got = compare(&before, &after, dir);
        assert_eq!(got.len(), 1, "expected one change, got {got:#?}");
        let c = got.into_iter().next().unwrap();
        assert_eq!(
            (c.kind.as_str(), c.path.as_str(), c.breaks, c.models),
            (kind, path, breaks, models),
            "{c:#?}"
        );
        c
    }

    /// The (kind, path) pairs of all changes, in order.
    fn kinds(before: Value, after: Value, dir: SchemaSide) -> Vec<(&'static str, String)> {
        compare(&before, &after, dir)
            .into_iter()
            .map(|c| (c.kind.as_str(), c.path))
            .collect()
    }

    fn prop(name: &str, schema: Value) -> Value {
        json!({"type": "object", "properties": {name: schema}})
    }

    // ---- equality --------------------------------------------------------------------

    #[test]
    fn equal_schemas_with_other_key_order_give_nothing() {
        let a = json!({"type": "object", "required": ["a"], "properties": {
            "a": {"type": "string", "enum": ["x", "y"], "maxLength": 3},
            "b": {"type": "array", "items": {"type": "integer", "minimum": 1}}}});
        let b = json!({"properties": {
            "b": {"items": {"minimum": 1.0, "type": "integer"}, "type": "array"},
            "a": {"maxLength": 3, "enum": ["x", "y"], "type": "string"}}, "required": ["a"], "type": "object"});
        for dir in [I, O] {
            assert!(compare(&a, &b, dir).is_empty());
            assert!(compare(&b, &a, dir).is_empty());
        }
    }

    #[test]
    fn true_and_empty_are_the_same_schema() {
        assert!(compare(&json!(true), &json!({}), I).is_empty());
        assert!(compare(&prop("a", json!(true)), &prop("a", json!({})), O).is_empty());
        assert!(compare(&json!({"items": true}), &json!({}), I).is_empty());
        assert!(
            compare(
                &json!({"additionalProperties": true}),
                &json!({"additionalProperties": {}}),
                I
            )
            .is_empty()
        );
    }

    #[test]
    fn ignored_annotations_and_reordered_enum_give_nothing() {
        let a = json!({"type": "string", "enum": ["a", "b"], "examples": ["a"], "$comment": "x"});
        let b =
            json!({"type": "string", "enum": ["b", "a"], "examples": ["b"], "deprecated": true});
        assert!(compare(&a, &b, I).is_empty());
        assert!(compare(&a, &b, O).is_empty());
    }

    #[test]
    fn a_schema_compared_with_itself_gives_nothing() {
        let s = json!({"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}]}}, "$defs": {"x": {}}});
        assert!(compare(&s, &s, I).is_empty());
    }

    // ---- properties: added / removed / renamed -----------------------------------------

    #[test]
    fn input_required_parameter_added_and_reverse() {
        let old =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        let new = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a", "b"]});
        let c = one(
            old.clone(),
            new.clone(),
            I,
            "required_parameter_added",
            "properties.b",
            B::Yes,
            M::Yes,
        );
        assert_eq!(
            (c.before, c.after),
            (None, Some(json!({"type": "integer"})))
        );
        let c = one(
            new,
            old,
            I,
            "parameter_removed",
            "properties.b",
            B::Yes,
            M::Yes,
        );
        assert_eq!(
            (c.before, c.after),
            (Some(json!({"type": "integer"})), None)
        );
    }

    #[test]
    fn input_optional_parameter_added_and_reverse() {
        let old = json!({"type": "object", "properties": {}});
        let new = prop("b", json!({"type": "boolean"}));
        one(
            old.clone(),
            new.clone(),
            I,
            "optional_parameter_added",
            "properties.b",
            B::No,
            M::Possibly,
        );
        one(
            new,
            old,
            I,
            "parameter_removed",
            "properties.b",
            B::Yes,
            M::Yes,
        );
    }

    #[test]
    fn output_property_added_and_removed() {
        let old = json!({"type": "object"});
        let new =
            json!({"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]});
        let c = one(
            old.clone(),
            new.clone(),
            O,
            "output_property_added",
            "properties.b",
            B::No,
            M::Possibly,
        );
        assert_eq!(c.after, Some(json!({"type": "string"})));
        one(
            new,
            old,
            O,
            "output_property_removed",
            "properties.b",
            B::Yes,
            M::Possibly,
        );
    }

    #[test]
    fn rename_is_one_change_in_both_directions() {
        let old = json!({"type": "object", "properties": {"a": {"type": "string"}, "units": {"type": "string", "enum": ["c", "f"]}}, "required": ["units"]});
        let new = json!({"type": "object", "properties": {"a": {"type": "string"}, "unit": {"enum": ["c", "f"], "type": "string"}}, "required": ["unit"]});
        let c = one(
            old.clone(),
            new.clone(),
            I,
            "parameter_renamed",
            "properties.units",
            B::Yes,
            M::Yes,
        );
        assert_eq!(
            (c.before, c.after),
            (Some(json!("units")), Some(json!("unit")))
        );
        one(
            new.clone(),
            old.clone(),
            I,
            "parameter_renamed",
            "properties.unit",
            B::Yes,
            M::Yes,
        );
        one(
            old.clone(),
            new.clone(),
            O,
            "output_property_renamed",
            "properties.units",
            B::Yes,
            M::Possibly,
        );
        one(
            new,
            old,
            O,
            "output_property_renamed",
            "properties.unit",
            B::Yes,
            M::Possibly,
        );
    }

    #[test]
    fn no_rename_when_requiredness_or_schema_differs() {
        let old =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        let new = json!({"type": "object", "properties": {"b": {"type": "string"}}});
        assert_eq!(
            kinds(old, new, I),
            [
                ("parameter_removed", "properties.a".into()),
                ("optional_parameter_added", "properties.b".into())
            ]
        );
        let old = prop("a", json!({"type": "string"}));
        let new = prop("b", json!({"type": "integer"}));
        assert_eq!(
            kinds(old, new, O),
            [
                ("output_property_removed", "properties.a".into()),
                ("output_property_added", "properties.b".into())
            ]
        );
    }

    #[test]
    fn ambiguous_rename_is_reported_as_remove_and_add() {
        let old = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        let new = json!({"type": "object", "properties": {"b": {"type": "string"}, "c": {"type": "string"}}});
        assert_eq!(
            kinds(old, new, I),
            [
                ("parameter_removed", "properties.a".into()),
                ("optional_parameter_added", "properties.b".into()),
                ("optional_parameter_added", "properties.c".into()),
            ]
        );
    }

    #[test]
    fn two_unambiguous_renames() {
        let old = json!({"type": "object", "properties": {"a": {"type": "string"}, "n": {"type": "integer"}}});
        let new = json!({"type": "object", "properties": {"b": {"type": "string"}, "m": {"type": "integer"}}});
        assert_eq!(
            kinds(old, new, I),
            [
                ("parameter_renamed", "properties.a".into()),
                ("parameter_renamed", "properties.n".into())
            ]
        );
    }

    // ---- required ------------------------------------------------------------------------

    #[test]
    fn became_required_and_optional_in_both_directions() {
        let old = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {}}, "required": ["a"]});
        let new = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {}}, "required": ["a", "b"]});
        let c = one(
            old.clone(),
            new.clone(),
            I,
            "parameter_became_required",
            "required",
            B::Yes,
            M::Yes,
        );
        assert_eq!(
            (c.before, c.after),
            (Some(json!(["a"])), Some(json!(["a", "b"])))
        );
        one(
            new.clone(),
            old.clone(),
            I,
            "parameter_became_optional",
            "required",
            B::No,
            M::Possibly,
        );
        one(
            old.clone(),
            new.clone(),
            O,
            "output_property_now_required",
            "required",
            B::No,
            M::No,
        );
        one(
            new,
            old,
            O,
            "output_property_no_longer_required",
            "required",
            B::Yes,
            M::Possibly,
        );
    }

    #[test]
    fn required_absent_vs_empty_and_reordered_give_nothing() {
        let a = json!({"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a", "b"]});
        let b = json!({"type": "object", "properties": {"a": {}, "b": {}}, "required": ["b", "a"]});
        assert!(compare(&a, &b, I).is_empty());
        let a = json!({"type": "object", "required": []});
        assert!(compare(&a, &json!({"type": "object"}), O).is_empty());
    }

    #[test]
    fn required_swap_reports_both_facets() {
        let old = json!({"type": "object", "properties": {"a": {}, "b": {}}, "required": ["a"]});
        let new = json!({"type": "object", "properties": {"a": {}, "b": {}}, "required": ["b"]});
        assert_eq!(
            kinds(old, new, I),
            [
                ("parameter_became_optional", "required".into()),
                ("parameter_became_required", "required".into())
            ]
        );
    }

    // ---- type ----------------------------------------------------------------------------

    #[test]
    fn input_type_changed_and_widened() {
        let s = |t: Value| prop("a", json!({"type": t}));
        let c = one(
            s(json!("string")),
            s(json!("integer")),
            I,
            "type_changed",
            "properties.a.type",
            B::Yes,
            M::Yes,
        );
        assert_eq!(
            (c.before, c.after),
            (Some(json!("string")), Some(json!("integer")))
        );
        one(
            s(json!("string")),
            s(json!(["string", "null"])),
            I,
            "type_widened",
            "properties.a.type",
            B::No,
            M::Possibly,
        );
        one(
            s(json!(["string", "null"])),
            s(json!("string")),
            I,
            "type_changed",
            "properties.a.type",
            B::Yes,
            M::Yes,
        );
        one(
            s(json!("integer")),
            s(json!("number")),
            I,
            "type_widened",
            "properties.a.type",
            B::No,
            M::Possibly,
        );
        one(
            s(json!("number")),
            s(json!("integer")),
            I,
            "type_changed",
            "properties.a.type",
            B::Yes,
            M::Yes,
        );
        one(
            s(json!(["integer", "null"])),
            s(json!(["number", "null"])),
            I,
            "type_widened",
            "properties.a.type",
            B::No,
            M::Possibly,
        );
    }

    #[test]
    fn input_type_added_or_removed() {
        one(
            prop("a", json!({})),
            prop("a", json!({"type": "string"})),
            I,
            "type_changed",
            "properties.a.type",
            B::Yes,
            M::Yes,
        );
        let c = one(
            prop("a", json!({"type": "string"})),
            prop("a", json!({})),
            I,
            "type_widened",
            "properties.a.type",
            B::No,
            M::Possibly,
        );
        assert_eq!((c.before, c.after), (Some(json!("string")), None));
    }

    #[test]
    fn output_type_changed_on_any_change() {
        let s = |t: Value| prop("a", json!({"type": t}));
        one(
            s(json!("string")),
            s(json!(["string", "null"])),
            O,
            "type_changed",
            "properties.a.type",
            B::Yes,
            M::Possibly,
        );
        one(
            s(json!(["string", "null"])),
            s(json!("string")),
            O,
            "type_changed",
            "properties.a.type",
            B::Yes,
            M::Possibly,
        );
        one(
            s(json!("integer")),
            s(json!("number")),
            O,
            "type_changed",
            "properties.a.type",
            B::Yes,
            M::Possibly,
        );
        one(
            s(json!("string")),
            s(json!("boolean")),
            O,
            "type_changed",
            "properties.a.type",
            B::Yes,
            M::Possibly,
        );
    }

    #[test]
    fn equivalent_type_spellings_give_nothing() {
        let s = |t: Value| json!({"type": t});
        for dir in [I, O] {
            assert!(compare(&s(json!("string")), &s(json!(["string"])), dir).is_empty());
            assert!(compare(&s(json!(["number", "integer"])), &s(json!("number")), dir).is_empty());
            assert!(
                compare(
                    &s(json!(["null", "string"])),
                    &s(json!(["string", "null"])),
                    dir
                )
                .is_empty()
            );
        }
    }

    #[test]
    fn root_type_compares_like_any_type() {
        one(
            json!({"type": "object"}),
            json!({"type": "string"}),
            I,
            "type_changed",
            "type",
            B::Yes,
            M::Yes,
        );
        one(
            json!({"type": "object"}),
            json!({"type": ["object", "null"]}),
            O,
            "type_changed",
            "type",
            B::Yes,
            M::Possibly,
        );
    }

    // ---- enum / const ----------------------------------------------------------------------

    #[test]
    fn input_enum_kinds() {
        let e = |v: Value| prop("units", json!({"type": "string", "enum": v}));
        let plain = prop("units", json!({"type": "string"}));
        let p = "properties.units.enum";
        let c = one(
            plain.clone(),
            e(json!(["c", "f"])),
            I,
            "enum_added",
            p,
            B::Yes,
            M::Yes,
        );
        assert_eq!((c.before, c.after), (None, Some(json!(["c", "f"]))));
        one(
            e(json!(["c", "f"])),
            plain,
            I,
            "enum_removed",
            p,
            B::No,
            M::Possibly,
        );
        let c = one(
            e(json!(["c", "f", "k"])),
            e(json!(["c", "f"])),
            I,
            "enum_values_removed",
            p,
            B::Yes,
            M::Yes,
        );
        assert_eq!(
            (c.before, c.after),
            (Some(json!(["c", "f", "k"])), Some(json!(["c", "f"])))
        );
        one(
            e(json!(["c", "f"])),
            e(json!(["c", "f", "k"])),
            I,
            "enum_values_added",
            p,
            B::No,
            M::Possibly,
        );
    }

    #[test]
    fn output_enum_kinds() {
        let e = |v: Value| prop("units", json!({"type": "string", "enum": v}));
        let plain = prop("units", json!({"type": "string"}));
        let p = "properties.units.enum";
        one(
            plain.clone(),
            e(json!(["c"])),
            O,
            "enum_added",
            p,
            B::No,
            M::No,
        );
        one(
            e(json!(["c"])),
            plain,
            O,
            "enum_removed",
            p,
            B::Yes,
            M::Possibly,
        );
        one(
            e(json!(["c", "f"])),
            e(json!(["c"])),
            O,
            "enum_values_removed",
            p,
            B::No,
            M::No,
        );
        one(
            e(json!(["c"])),
            e(json!(["c", "f"])),
            O,
            "enum_values_added",
            p,
            B::Yes,
            M::Possibly,
        );
    }

    #[test]
    fn enum_values_compare_numerically_and_mixed_changes_report_both() {
        assert!(compare(&json!({"enum": [1, 2.5]}), &json!({"enum": [1.0, 2.5]}), I).is_empty());
        let old = json!({"enum": ["a", "b"]});
        let new = json!({"enum": ["b", "c"]});
        assert_eq!(
            kinds(old.clone(), new.clone(), I),
            [
                ("enum_values_added", "enum".into()),
                ("enum_values_removed", "enum".into())
            ]
        );
        let c = compare(&old, &new, O);
        assert_eq!(
            c.iter()
                .map(|c| (c.kind.as_str(), c.breaks))
                .collect::<Vec<_>>(),
            [
                ("enum_values_added", B::Yes),
                ("enum_values_removed", B::No)
            ]
        );
    }

    #[test]
    fn const_kinds_in_both_directions() {
        let k = |v: Value| prop("v", json!({"const": v}));
        let none = prop("v", json!({}));
        let p = "properties.v.const";
        let c = one(
            none.clone(),
            k(json!(1)),
            I,
            "const_added",
            p,
            B::Yes,
            M::Yes,
        );
        assert_eq!(c.after, Some(json!(1)));
        one(
            k(json!(1)),
            k(json!(2)),
            I,
            "const_changed",
            p,
            B::Yes,
            M::Yes,
        );
        one(
            k(json!(1)),
            none.clone(),
            I,
            "const_removed",
            p,
            B::No,
            M::Possibly,
        );
        one(none.clone(), k(json!(1)), O, "const_added", p, B::No, M::No);
        one(
            k(json!(1)),
            k(json!("1")),
            O,
            "const_changed",
            p,
            B::Yes,
            M::Possibly,
        );
        one(
            k(json!(1)),
            none,
            O,
            "const_removed",
            p,
            B::Yes,
            M::Possibly,
        );
        assert!(compare(&k(json!(1)), &k(json!(1.0)), I).is_empty());
    }

    // ---- bounds ----------------------------------------------------------------------------

    /// (keyword, looser value, tighter value)
    const BOUNDS: &[(&str, f64, f64)] = &[
        ("maximum", 10.0, 5.0),
        ("exclusiveMaximum", 10.0, 5.0),
        ("minimum", 1.0, 3.0),
        ("exclusiveMinimum", 1.0, 3.0),
        ("maxLength", 10.0, 5.0),
        ("minLength", 1.0, 2.0),
        ("maxItems", 10.0, 5.0),
        ("minItems", 0.0, 1.0),
        ("maxProperties", 10.0, 5.0),
        ("minProperties", 1.0, 2.0),
    ];

    #[test]
    fn every_bound_narrowed_and_widened_in_both_directions() {
        for &(key, loose, tight) in BOUNDS {
            let s = |v: f64| prop("x", json!({key: v}));
            let none = prop("x", json!({}));
            let p = format!("properties.x.{key}");
            let c = one(s(loose), s(tight), I, "bound_narrowed", &p, B::Yes, M::Yes);
            assert_eq!(
                (c.before, c.after),
                (Some(json!(loose)), Some(json!(tight))),
                "{key}"
            );
            one(
                none.clone(),
                s(tight),
                I,
                "bound_narrowed",
                &p,
                B::Yes,
                M::Yes,
            );
            one(s(tight), s(loose), I, "bound_widened", &p, B::No, M::No);
            one(s(tight), none.clone(), I, "bound_widened", &p, B::No, M::No);
            one(s(loose), s(tight), O, "bound_narrowed", &p, B::No, M::No);
            one(
                none.clone(),
                s(tight),
                O,
                "bound_narrowed",
                &p,
                B::No,
                M::No,
            );
            one(
                s(tight),
                s(loose),
                O,
                "bound_widened",
                &p,
                B::Yes,
                M::Possibly,
            );
            one(s(tight), none, O, "bound_widened", &p, B::Yes, M::Possibly);
        }
    }

    #[test]
    fn bounds_compare_numerically() {
        assert!(compare(&json!({"maximum": 10}), &json!({"maximum": 10.0}), I).is_empty());
        assert!(compare(&json!({"minLength": 2}), &json!({"minLength": 2.0}), O).is_empty());
        one(
            json!({"maximum": 10}),
            json!({"maximum": 9.5}),
            I,
            "bound_narrowed",
            "maximum",
            B::Yes,
            M::Yes,
        );
        one(
            json!({"minimum": -1}),
            json!({"minimum": -2}),
            I,
            "bound_widened",
            "minimum",
            B::No,
            M::No,
        );
    }

    #[test]
    fn inclusive_and_exclusive_limits_are_judged_by_effect() {
        // ≤ 10 → < 10
        one(
            json!({"maximum": 10}),
            json!({"exclusiveMaximum": 10}),
            I,
            "bound_narrowed",
            "exclusiveMaximum",
            B::Yes,
            M::Yes,
        );
        // ≤ 10 → < 11
        one(
            json!({"maximum": 10}),
            json!({"exclusiveMaximum": 11}),
            I,
            "bound_widened",
            "exclusiveMaximum",
            B::No,
            M::No,
        );
        // draft-4 boolean form
        one(
            json!({"minimum": 0}),
            json!({"minimum": 0, "exclusiveMinimum": true}),
            I,
            "bound_narrowed",
            "minimum",
            B::Yes,
            M::Yes,
        );
        // the looser of two limits changes: no effect
        assert!(
            compare(
                &json!({"maximum": 5, "exclusiveMaximum": 10}),
                &json!({"maximum": 5, "exclusiveMaximum": 20}),
                O
            )
            .is_empty()
        );
    }

    #[test]
    fn multiple_of_in_both_directions() {
        let m = |v: Value| json!({"type": "number", "multipleOf": v});
        let none = json!({"type": "number"});
        one(
            none.clone(),
            m(json!(2)),
            I,
            "bound_narrowed",
            "multipleOf",
            B::Yes,
            M::Yes,
        );
        one(
            m(json!(2)),
            none.clone(),
            I,
            "bound_widened",
            "multipleOf",
            B::No,
            M::No,
        );
        one(
            m(json!(2)),
            m(json!(4)),
            I,
            "bound_narrowed",
            "multipleOf",
            B::Yes,
            M::Yes,
        );
        one(
            m(json!(4)),
            m(json!(2)),
            I,
            "bound_widened",
            "multipleOf",
            B::No,
            M::No,
        );
        one(
            m(json!(0.5)),
            m(json!(0.25)),
            I,
            "bound_widened",
            "multipleOf",
            B::No,
            M::No,
        );
        one(
            none.clone(),
            m(json!(2)),
            O,
            "bound_narrowed",
            "multipleOf",
            B::No,
            M::No,
        );
        one(
            m(json!(2)),
            none,
            O,
            "bound_widened",
            "multipleOf",
            B::Yes,
            M::Possibly,
        );
        one(
            m(json!(4)),
            m(json!(2)),
            O,
            "bound_widened",
            "multipleOf",
            B::Yes,
            M::Possibly,
        );
        // incomparable steps: both facets
        assert_eq!(
            kinds(m(json!(2)), m(json!(3)), I),
            [
                ("bound_narrowed", "multipleOf".into()),
                ("bound_widened", "multipleOf".into())
            ]
        );
    }

    #[test]
    fn unique_items_in_both_directions() {
        let u = |v: Value| prop("tags", json!({"type": "array", "uniqueItems": v}));
        let none = prop("tags", json!({"type": "array"}));
        let p = "properties.tags.uniqueItems";
        one(
            none.clone(),
            u(json!(true)),
            I,
            "bound_narrowed",
            p,
            B::Yes,
            M::Yes,
        );
        one(
            u(json!(false)),
            u(json!(true)),
            I,
            "bound_narrowed",
            p,
            B::Yes,
            M::Yes,
        );
        one(
            u(json!(true)),
            none.clone(),
            I,
            "bound_widened",
            p,
            B::No,
            M::No,
        );
        one(
            none.clone(),
            u(json!(true)),
            O,
            "bound_narrowed",
            p,
            B::No,
            M::No,
        );
        one(
            u(json!(true)),
            u(json!(false)),
            O,
            "bound_widened",
            p,
            B::Yes,
            M::Possibly,
        );
        assert!(compare(&none, &u(json!(false)), I).is_empty());
    }

    // ---- pattern / format --------------------------------------------------------------------

    #[test]
    fn pattern_and_format_kinds_in_both_directions() {
        for key in ["pattern", "format"] {
            let s = |v: &str| prop("s", json!({"type": "string", key: v}));
            let none = prop("s", json!({"type": "string"}));
            let p = format!("properties.s.{key}");
            let (added, changed, removed) = (
                format!("{key}_added"),
                format!("{key}_changed"),
                format!("{key}_removed"),
            );
            let c = one(none.clone(), s("a"), I, &added, &p, B::Yes, M::Yes);
            assert_eq!((c.before, c.after), (None, Some(json!("a"))));
            one(s("a"), s("b"), I, &changed, &p, B::Yes, M::Yes);
            one(s("a"), none.clone(), I, &removed, &p, B::No, M::No);
            one(none.clone(), s("a"), O, &added, &p, B::No, M::No);
            one(s("a"), s("b"), O, &changed, &p, B::Yes, M::Possibly);
            one(s("a"), none, O, &removed, &p, B::Yes, M::Possibly);
        }
    }

    // ---- additionalProperties / unevaluatedProperties ------------------------------------------

    #[test]
    fn additional_properties_in_both_directions() {
        for key in ["additionalProperties", "unevaluatedProperties"] {
            let s = |v: Option<Value>| {
                let mut o = json!({"type": "object", "properties": {"a": {}}});
                if let Some(v) = v {
                    o[key] = v;
                }
                o
            };
            let (r, x) = (
                "additional_properties_restricted",
                "additional_properties_relaxed",
            );
            let c = one(s(None), s(Some(json!(false))), I, r, key, B::Yes, M::Yes);
            assert_eq!((c.before, c.after), (None, Some(json!(false))));
            one(
                s(Some(json!(true))),
                s(Some(json!(false))),
                I,
                r,
                key,
                B::Yes,
                M::Yes,
            );
            one(
                s(None),
                s(Some(json!({"type": "string"}))),
                I,
                r,
                key,
                B::Yes,
                M::Yes,
            );
            one(
                s(Some(json!({"type": "string"}))),
                s(Some(json!(false))),
                I,
                r,
                key,
                B::Yes,
                M::Yes,
            );
            one(s(Some(json!(false))), s(None), I, x, key, B::No, M::No);
            one(
                s(Some(json!(false))),
                s(Some(json!({"type": "string"}))),
                I,
                x,
                key,
                B::No,
                M::No,
            );
            one(s(None), s(Some(json!(false))), O, r, key, B::No, M::No);
            one(
                s(Some(json!(false))),
                s(Some(json!(true))),
                O,
                x,
                key,
                B::Yes,
                M::Possibly,
            );
            one(
                s(Some(json!({"type": "string"}))),
                s(None),
                O,
                x,
                key,
                B::Yes,
                M::Possibly,
            );
        }
    }

    #[test]
    fn additional_properties_schemas_are_compared_recursively() {
        let s = |t: &str| json!({"type": "object", "additionalProperties": {"type": t}});
        one(
            s("integer"),
            s("number"),
            I,
            "type_widened",
            "additionalProperties.type",
            B::No,
            M::Possibly,
        );
        one(
            s("integer"),
            s("string"),
            O,
            "type_changed",
            "additionalProperties.type",
            B::Yes,
            M::Possibly,
        );
    }

    // ---- annotations ------------------------------------------------------------------------

    #[test]
    fn description_title_default_in_both_directions() {
        let table = [
            (
                "description",
                "parameter_description_changed",
                (B::No, M::Yes),
                (B::No, M::Possibly),
            ),
            (
                "title",
                "parameter_title_changed",
                (B::No, M::Yes),
                (B::No, M::No),
            ),
            (
                "default",
                "default_changed",
                (B::No, M::Possibly),
                (B::No, M::No),
            ),
        ];
        for (key, kind, input, output) in table {
            let s = |v: Value| prop("a", json!({"type": "string", key: v}));
            let none = prop("a", json!({"type": "string"}));
            let p = format!("properties.a.{key}");
            let c = one(s(json!("x")), s(json!("y")), I, kind, &p, input.0, input.1);
            assert_eq!((c.before, c.after), (Some(json!("x")), Some(json!("y"))));
            one(none.clone(), s(json!("x")), I, kind, &p, input.0, input.1);
            one(s(json!("x")), none.clone(), I, kind, &p, input.0, input.1);
            one(
                s(json!("x")),
                s(json!("y")),
                O,
                kind,
                &p,
                output.0,
                output.1,
            );
            one(none.clone(), s(json!("x")), O, kind, &p, output.0, output.1);
            one(s(json!("x")), none, O, kind, &p, output.0, output.1);
        }
        one(
            json!({"description": "a"}),
            json!({"description": "b"}),
            I,
            "parameter_description_changed",
            "description",
            B::No,
            M::Yes,
        );
    }

    // ---- undecidable keywords ------------------------------------------------------------------

    #[test]
    fn every_undecidable_keyword_gives_one_unknown_change_at_its_node() {
        let cases = [
            ("$ref", json!("#/$defs/a"), json!("#/$defs/b")),
            (
                "$defs",
                json!({"a": {"type": "string"}}),
                json!({"a": {"type": "integer"}}),
            ),
            ("definitions", json!({"a": {}}), json!({"b": {}})),
            (
                "oneOf",
                json!([{"type": "string"}]),
                json!([{"type": "string"}, {"type": "null"}]),
            ),
            (
                "anyOf",
                json!([{"type": "string"}]),
                json!([{"type": "integer"}]),
            ),
            ("allOf", json!([{"minimum": 1}]), json!([{"minimum": 2}])),
            ("not", json!({"type": "null"}), json!({"type": "string"})),
            ("if", json!({"required": ["a"]}), json!({"required": ["b"]})),
            (
                "then",
                json!({"required": ["a"]}),
                json!({"required": ["b"]}),
            ),
            (
                "else",
                json!({"required": ["a"]}),
                json!({"required": ["b"]}),
            ),
            (
                "dependentSchemas",
                json!({"a": {"required": ["b"]}}),
                json!({"a": {"required": ["c"]}}),
            ),
            (
                "dependentRequired",
                json!({"a": ["b"]}),
                json!({"a": ["c"]}),
            ),
            ("patternProperties", json!({"^x": {}}), json!({"^y": {}})),
            (
                "propertyNames",
                json!({"pattern": "^a"}),
                json!({"pattern": "^b"}),
            ),
            (
                "contains",
                json!({"type": "string"}),
                json!({"type": "integer"}),
            ),
            (
                "prefixItems",
                json!([{"type": "string"}]),
                json!([{"type": "integer"}]),
            ),
        ];
        for (key, x, y) in cases {
            for dir in [I, O] {
                let old = prop("a", json!({key: x.clone()}));
                let new = prop("a", json!({key: y.clone()}));
                let c = one(
                    old,
                    new,
                    dir,
                    "unknown_schema_change",
                    "properties.a",
                    B::Unknown,
                    M::Possibly,
                );
                assert_eq!(
                    (c.before, c.after),
                    (Some(json!({key: x.clone()})), Some(json!({key: y.clone()}))),
                    "{key}"
                );
                // appearing and disappearing
                let c = one(
                    json!({}),
                    json!({key: y.clone()}),
                    dir,
                    "unknown_schema_change",
                    "",
                    B::Unknown,
                    M::Possibly,
                );
                assert_eq!((c.before, c.after), (None, Some(json!({key: y.clone()}))));
            }
        }
    }

    #[test]
    fn several_undecidable_keywords_give_one_change_and_no_guess_about_that_node() {
        let old = json!({"type": "object", "oneOf": [{}], "$ref": "#/a", "description": "x",
            "properties": {"p": {"type": "string"}}});
        let new = json!({"type": "object", "oneOf": [{}, {}], "$ref": "#/b", "description": "y",
            "properties": {"p": {"type": "integer"}}});
        let got = compare(&old, &new, I);
        assert_eq!(got.len(), 1, "{got:#?}");
        assert_eq!(
            (got[0].kind.as_str(), got[0].path.as_str()),
            ("unknown_schema_change", "")
        );
        assert_eq!(got[0].before, Some(json!({"$ref": "#/a", "oneOf": [{}]})));
    }

    #[test]
    fn an_undecidable_property_does_not_stop_its_siblings() {
        let old = json!({"properties": {"a": {"type": "number"}, "b": {"type": "string"}}});
        let new = json!({"properties": {"a": {"oneOf": [{"type": "number"}, {"type": "string"}]}, "b": {"type": "integer"}}});
        let got = compare(&old, &new, I);
        let kinds: Vec<(&str, &str)> = got
            .iter()
            .map(|c| (c.kind.as_str(), c.path.as_str()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("unknown_schema_change", "properties.a"),
                ("type_changed", "properties.b.type")
            ]
        );
    }

    #[test]
    fn vendor_annotations_are_ignored_and_x_mcp_header_has_its_own_kinds() {
        assert!(
            compare(
                &prop("a", json!({"x-vendor": 1})),
                &prop("a", json!({"x-vendor": 2})),
                I
            )
            .is_empty()
        );
        one(
            prop("a", json!({"type": "string"})),
            prop("a", json!({"type": "string", "x-mcp-header": "A"})),
            I,
            "x_mcp_header_added",
            "properties.a.x-mcp-header",
            B::No,
            M::No,
        );
        one(
            prop("a", json!({"type": "string", "x-mcp-header": "A"})),
            prop("a", json!({"type": "string", "x-mcp-header": "B"})),
            I,
            "x_mcp_header_changed",
            "properties.a.x-mcp-header",
            B::No,
            M::No,
        );
        one(
            prop("a", json!({"type": "string", "x-mcp-header": "A"})),
            prop("a", json!({"type": "string"})),
            I,
            "x_mcp_header_removed",
            "properties.a.x-mcp-header",
            B::No,
            M::No,
        );
    }

    #[test]
    fn equal_undecidable_keywords_are_not_reported() {
        let old = json!({"type": "object", "$defs": {"a": {}}, "properties": {"p": {"$ref": "#/$defs/a"}}});
        let new = json!({"properties": {"p": {"$ref": "#/$defs/a"}, "q": {}}, "$defs": {"a": {}}, "type": "object"});
        one(
            old,
            new,
            I,
            "optional_parameter_added",
            "properties.q",
            B::No,
            M::Possibly,
        );
    }

    #[test]
    fn tuple_items_and_false_schemas_are_undecidable() {
        one(
            json!({"items": [{"type": "string"}]}),
            json!({"items": {"type": "string"}}),
            I,
            "unknown_schema_change",
            "",
            B::Unknown,
            M::Possibly,
        );
        one(
            prop("a", json!(false)),
            prop("a", json!({})),
            O,
            "unknown_schema_change",
            "properties.a",
            B::Unknown,
            M::Possibly,
        );
    }

    // ---- nesting ------------------------------------------------------------------------------

    #[test]
    fn nested_object_properties() {
        let s = |t: &str, req: Value| {
            prop(
                "loc",
                json!({"type": "object", "properties": {"lat": {"type": t}, "lon": {"type": "number"}}, "required": req}),
            )
        };
        one(
            s("number", json!([])),
            s("string", json!([])),
            I,
            "type_changed",
            "properties.loc.properties.lat.type",
            B::Yes,
            M::Yes,
        );
        one(
            s("number", json!([])),
            s("number", json!(["lat"])),
            I,
            "parameter_became_required",
            "properties.loc.required",
            B::Yes,
            M::Yes,
        );
        one(
            s("number", json!(["lat"])),
            s("number", json!([])),
            O,
            "output_property_no_longer_required",
            "properties.loc.required",
            B::Yes,
            M::Possibly,
        );
        let old = prop(
            "loc",
            json!({"type": "object", "properties": {"lon": {"type": "number"}}}),
        );
        one(
            old,
            s("number", json!(["lat"])),
            I,
            "required_parameter_added",
            "properties.loc.properties.lat",
            B::Yes,
            M::Yes,
        );
    }

    #[test]
    fn array_items() {
        let t = |items: Value| prop("tags", json!({"type": "array", "items": items}));
        one(
            t(json!({"type": "string"})),
            t(json!({"type": "integer"})),
            I,
            "type_changed",
            "properties.tags.items.type",
            B::Yes,
            M::Yes,
        );
        one(
            t(json!({"type": "string"})),
            t(json!({"type": ["string", "null"]})),
            O,
            "type_changed",
            "properties.tags.items.type",
            B::Yes,
            M::Possibly,
        );
        one(
            t(json!({"enum": ["a"]})),
            t(json!({"enum": ["a", "b"]})),
            I,
            "enum_values_added",
            "properties.tags.items.enum",
            B::No,
            M::Possibly,
        );
        one(
            prop("tags", json!({"type": "array"})),
            t(json!({"type": "string"})),
            I,
            "type_changed",
            "properties.tags.items.type",
            B::Yes,
            M::Yes,
        );
        // array of objects
        let o = |p: Value| t(json!({"type": "object", "properties": p}));
        one(
            o(json!({"a": {}})),
            o(json!({})),
            O,
            "output_property_removed",
            "properties.tags.items.properties.a",
            B::Yes,
            M::Possibly,
        );
        // nested arrays
        let nn =
            |x: &str| json!({"type": "array", "items": {"type": "array", "items": {"type": x}}});
        one(
            nn("integer"),
            nn("number"),
            I,
            "type_widened",
            "items.items.type",
            B::No,
            M::Possibly,
        );
    }

    #[test]
    fn property_names_with_dots_are_quoted() {
        let s = |t: &str| prop("a.b", json!({"type": t}));
        one(
            s("string"),
            s("integer"),
            I,
            "type_changed",
            "properties[\"a.b\"].type",
            B::Yes,
            M::Yes,
        );
        one(
            json!({"type": "object"}),
            s("string"),
            I,
            "optional_parameter_added",
            "properties[\"a.b\"]",
            B::No,
            M::Possibly,
        );
    }

    // ---- several changes at once ------------------------------------------------------------------

    #[test]
    fn multiple_changes_are_all_reported_sorted() {
        let old = json!({
            "type": "object",
            "description": "old",
            "properties": {
                "units": {"type": "string", "enum": ["c", "f", "k"]},
                "city": {"type": "string", "maxLength": 100},
                "days": {"type": "integer"},
                "legacy": {"type": "boolean"}
            },
            "required": ["city"]
        });
        let new = json!({
            "type": "object",
            "description": "new",
            "properties": {
                "units": {"type": "string", "enum": ["c", "f"]},
                "city": {"type": "string", "maxLength": 50, "pattern": "^[A-Z]"},
                "days": {"type": "number"},
                "country": {"type": "string"}
            },
            "required": ["city", "country", "days"]
        });
        let got = compare(&old, &new, I);
        let summary: Vec<(&str, &str, Breaks)> = got
            .iter()
            .map(|c| (c.kind.as_str(), c.path.as_str(), c.breaks))
            .collect();
        assert_eq!(
            summary,
            [
                ("parameter_description_changed", "description", B::No),
                ("bound_narrowed", "properties.city.maxLength", B::Yes),
                ("pattern_added", "properties.city.pattern", B::Yes),
                ("required_parameter_added", "properties.country", B::Yes),
                ("type_widened", "properties.days.type", B::No),
                ("parameter_removed", "properties.legacy", B::Yes),
                ("enum_values_removed", "properties.units.enum", B::Yes),
                ("parameter_became_required", "required", B::Yes),
            ]
        );
        let mut sorted = got.clone();
        sorted.sort_by(|a, b| {
            a.path
                .cmp(&b.path)
                .then(a.kind.as_str().cmp(b.kind.as_str()))
        });
        assert_eq!(got, sorted);

        let out = compare(&old, &new, O);
        let summary: Vec<(&str, &str, Breaks)> = out
            .iter()
            .map(|c| (c.kind.as_str(), c.path.as_str(), c.breaks))
            .collect();
        assert_eq!(
            summary,
            [
                ("parameter_description_changed", "description", B::No),
                ("bound_narrowed", "properties.city.maxLength", B::No),
                ("pattern_added", "properties.city.pattern", B::No),
                ("output_property_added", "properties.country", B::No),
                ("type_changed", "properties.days.type", B::Yes),
                ("output_property_removed", "properties.legacy", B::Yes),
                ("enum_values_removed", "properties.units.enum", B::No),
                ("output_property_now_required", "required", B::No),
            ]
        );
    }

    #[test]
    fn every_emitted_kind_has_an_explicit_verdict() {
        let input = [
            "required_parameter_added",
            "optional_parameter_added",
            "parameter_removed",
            "parameter_renamed",
            "parameter_became_required",
            "parameter_became_optional",
            "type_changed",
            "type_widened",
            "enum_added",
            "enum_values_removed",
            "enum_values_added",
            "enum_removed",
            "const_added",
            "const_changed",
            "const_removed",
            "bound_narrowed",
            "bound_widened",
            "pattern_added",
            "pattern_changed",
            "pattern_removed",
            "format_added",
            "format_changed",
            "format_removed",
            "additional_properties_restricted",
            "additional_properties_relaxed",
            "parameter_description_changed",
            "parameter_title_changed",
            "default_changed",
        ];
        for k in input {
            assert_ne!(verdict_of(k, I).0, B::Unknown, "{k}");
        }
        let output = [
            "output_property_removed",
            "output_property_renamed",
            "output_property_added",
            "output_property_no_longer_required",
            "output_property_now_required",
            "type_changed",
            "enum_values_added",
            "enum_removed",
            "const_removed",
            "bound_widened",
            "pattern_removed",
            "format_removed",
            "additional_properties_relaxed",
            "enum_values_removed",
            "enum_added",
            "const_added",
            "bound_narrowed",
            "pattern_added",
            "format_added",
            "additional_properties_restricted",
            "const_changed",
            "pattern_changed",
            "format_changed",
            "parameter_description_changed",
            "parameter_title_changed",
            "default_changed",
        ];
        for k in output {
            assert_ne!(verdict_of(k, O).0, B::Unknown, "{k}");
        }
        assert_eq!(
            verdict_of("unknown_schema_change", I),
            (B::Unknown, M::Possibly)
        );
        assert_eq!(
            verdict_of("unknown_schema_change", O),
            (B::Unknown, M::Possibly)
        );
    }
}
