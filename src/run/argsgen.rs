//! Tool arguments derived from a tool's `inputSchema`.
//!
//! `mcpspec init` and the built-in packs call tools the user allowed (read-only tools, or
//! tools named as safe) without a hand-written fixture: [`example`] builds one value the
//! schema accepts, [`invalid_variants`] builds arguments the schema rejects (wrong types,
//! missing required properties, out-of-range numbers, oversized strings, unexpected
//! properties). Every generated value is checked against the schema itself, so a valid
//! example is really valid and a variant marked `must_reject` is really invalid — a check
//! built on them cannot blame the server for a generator mistake.

use serde_json::{Map, Value, json};

/// Nesting depth past which generation gives up (recursive schemas).
const MAX_DEPTH: usize = 8;

/// Length of the oversized string sent to properties without a `maxLength`.
pub const OVERSIZED_LEN: usize = 100_000;

/// One invalid (or hostile) argument object.
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    /// What was changed, e.g. `property "a" has the wrong type (string instead of number)`.
    pub label: String,
    /// The `arguments` to send.
    pub arguments: Value,
    /// The schema rejects these arguments: the server must answer with an `isError` result
    /// or a -32602 error. When `false` (e.g. a huge string the schema allows) the server
    /// only must not crash or hang.
    pub must_reject: bool,
}

/// One argument value the schema accepts, or `None` when none can be derived (e.g. a
/// `pattern` the generator cannot satisfy, an unsatisfiable combination, deep recursion).
pub fn example(schema: &Value) -> Option<Value> {
    let value = Generator { root: schema }.value(schema, 0)?;
    accepts(schema, &value).then_some(value)
}

/// Arguments the tool's `inputSchema` rejects (plus, marked `must_reject: false`, an
/// oversized string where the schema sets no bound). Built from [`example`]: each variant
/// changes one thing, so a server's answer can be attributed. Empty when no valid example
/// can be derived.
pub fn invalid_variants(schema: &Value) -> Vec<Variant> {
    let Some(valid) = example(schema) else {
        return Vec::new();
    };
    let generator = Generator { root: schema };
    let mut out = Vec::new();
    let mut push = |label: String, arguments: Value| {
        let must_reject = !accepts(schema, &arguments);
        out.push(Variant {
            label,
            arguments,
            must_reject,
        });
    };
    let root = generator.resolve(schema, 0).unwrap_or(schema);
    let Some(object) = valid.as_object() else {
        return Vec::new();
    };
    let properties = root.get("properties").and_then(Value::as_object);
    for name in required(root) {
        let mut args = object.clone();
        args.remove(name);
        push(
            format!("required property \"{name}\" is missing"),
            Value::Object(args),
        );
    }
    for (name, prop_schema) in properties.into_iter().flatten() {
        let prop = generator.resolve(prop_schema, 0).unwrap_or(prop_schema);
        let with = |value: Value| {
            let mut args = object.clone();
            args.insert(name.clone(), value);
            Value::Object(args)
        };
        if let Some((wrong, described)) = wrong_type(prop) {
            push(
                format!("property \"{name}\" has the wrong type ({described})"),
                with(wrong),
            );
        }
        for (label, value) in out_of_range(prop) {
            push(format!("property \"{name}\" {label}"), with(value));
        }
    }
    if root.get("additionalProperties") == Some(&Value::Bool(false)) {
        let mut args = object.clone();
        let extra = (0..)
            .map(|i| format!("unexpected_property_{i}"))
            .find(|k| !args.contains_key(k))
            .expect("an unused name exists");
        args.insert(extra.clone(), json!("x"));
        push(
            format!("unexpected property \"{extra}\" (additionalProperties: false)"),
            Value::Object(args),
        );
    }
    out.retain(|v| v.must_reject || v.label.contains("oversized"));
    out
}

/// The schema accepts `value` (an invalid schema accepts nothing).
pub fn accepts(schema: &Value, value: &Value) -> bool {
    crate::ground::bounds::validator(schema).is_ok_and(|v| v.is_valid(value))
}

fn required(schema: &Value) -> impl Iterator<Item = &str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// The first declared type other than `null`.
fn main_type(schema: &Value) -> Option<&str> {
    match schema.get("type")? {
        Value::String(t) => Some(t),
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .or(Some("null")),
        _ => None,
    }
}

/// A value of another JSON type than the schema's, with a description: see [`wrong_type_value`].
fn wrong_type(schema: &Value) -> Option<(Value, String)> {
    let t = main_type(schema)?;
    let (value, instead) = wrong_type_value(t)?;
    Some((value, format!("{instead} instead of {t}")))
}

/// For a JSON type, a value of another type that no common validator coerces into it, and
/// that type's name. A lax validator converts what looks convertible — Pydantic's default
/// mode takes `"yes"`, `"on"` or `"1"` for `true` and `"12"` for `12`; Go's
/// `encoding/json` and zod do not — so a probe must be wrong under all of them:
///
/// | type | sent | why no validator takes it |
/// |---|---|---|
/// | string | `{"not": "a string"}` | no validator makes a string of an object (Pydantic does not even take a number) |
/// | number, integer | `"not-a-number"` | a string that parses as no number (`"12"`, `"nan"`, `"inf"` would, in Pydantic) |
/// | boolean | `"maybe"` | not one of Pydantic's true/false words (`yes`, `on`, `1`, `t`, `y`…) |
/// | array | `{"not": "an array"}` | an object is no sequence |
/// | object | `["not", "an", "object"]` | a list is no mapping or model |
pub fn wrong_type_value(json_type: &str) -> Option<(Value, &'static str)> {
    Some(match json_type {
        "string" => (json!({"not": "a string"}), "object"),
        "number" | "integer" => (json!("not-a-number"), "string"),
        "boolean" => (json!("maybe"), "string"),
        "array" => (json!({"not": "an array"}), "object"),
        "object" => (json!(["not", "an", "object"]), "array"),
        _ => return None,
    })
}

/// Values just outside the schema's bounds (and an oversized string).
fn out_of_range(schema: &Value) -> Vec<(String, Value)> {
    let num = |k: &str| schema.get(k).and_then(Value::as_f64);
    let mut out = Vec::new();
    match main_type(schema) {
        Some("number" | "integer") => {
            if let Some(max) = num("maximum") {
                out.push((format!("is above its maximum {max}"), number(max + 1.0)));
            }
            if let Some(max) = num("exclusiveMaximum") {
                out.push((format!("equals its exclusiveMaximum {max}"), number(max)));
            }
            if let Some(min) = num("minimum") {
                out.push((format!("is below its minimum {min}"), number(min - 1.0)));
            }
            if let Some(min) = num("exclusiveMinimum") {
                out.push((format!("equals its exclusiveMinimum {min}"), number(min)));
            }
            if main_type(schema) == Some("integer") {
                out.push(("is not an integer (1.5)".into(), json!(1.5)));
            }
        }
        Some("string") => {
            if let Some(max) = schema.get("maxLength").and_then(Value::as_u64) {
                let len = usize::try_from(max).unwrap_or(usize::MAX - 1) + 1;
                if len <= OVERSIZED_LEN {
                    out.push((
                        format!("is longer than its maxLength {max}"),
                        json!("x".repeat(len)),
                    ));
                }
            } else {
                out.push((
                    format!("is an oversized string ({OVERSIZED_LEN} characters)"),
                    json!("x".repeat(OVERSIZED_LEN)),
                ));
            }
        }
        _ => {}
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let outside = (0..)
            .map(|i| json!(format!("not-in-enum-{i}")))
            .find(|v| !values.contains(v))
            .expect("an unused value exists");
        out.push(("is not one of its enum values".into(), outside));
    }
    out
}

/// A number as an integer when it is whole (so `integer` schemas see an integer).
fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

struct Generator<'a> {
    root: &'a Value,
}

impl<'a> Generator<'a> {
    /// Follows local `$ref`s (`#/$defs/…`, `#/definitions/…`).
    fn resolve(&self, schema: &'a Value, depth: usize) -> Option<&'a Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) => {
                let pointer = reference.strip_prefix('#')?;
                let target = self.root.pointer(pointer)?;
                self.resolve(target, depth + 1)
            }
            None => Some(schema),
        }
    }

    fn value(&self, schema: &'a Value, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        let schema = self.resolve(schema, depth)?;
        match schema {
            Value::Bool(true) => return Some(json!("example")),
            Value::Bool(false) => return None,
            _ => {}
        }
        if let Some(c) = schema.get("const") {
            return Some(c.clone());
        }
        if let Some(first) = schema
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|v| v.first())
        {
            return Some(first.clone());
        }
        for key in ["default", "examples"] {
            let candidate = match schema.get(key) {
                Some(Value::Array(examples)) if key == "examples" => examples.first(),
                other if key == "default" => other,
                _ => None,
            };
            if let Some(candidate) = candidate.filter(|c| accepts_local(schema, c)) {
                return Some(candidate.clone());
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(options) = schema.get(key).and_then(Value::as_array) {
                return options.iter().find_map(|o| {
                    let v = self.value(o, depth + 1)?;
                    accepts_local(schema, &v).then_some(v)
                });
            }
        }
        if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
            return self.all_of(schema, all, depth);
        }
        match main_type(schema) {
            Some("string") => Some(string(schema)),
            Some("integer") => Some(integer(schema)),
            Some("number") => Some(float(schema)),
            Some("boolean") => Some(json!(true)),
            Some("null") => Some(Value::Null),
            Some("array") => self.array(schema, depth),
            Some("object") => self.object(schema, depth),
            Some(_) => None,
            None if schema.get("properties").is_some() => self.object(schema, depth),
            None => Some(json!("example")),
        }
    }

    /// Merges the object examples of `allOf` parts and the schema's own properties (a
    /// non-object part's example is returned as is; the final check catches conflicts).
    fn all_of(&self, schema: &'a Value, parts: &'a [Value], depth: usize) -> Option<Value> {
        let mut merged = Map::new();
        for part in parts {
            match self.value(part, depth + 1)? {
                Value::Object(map) => merged.extend(map),
                other => return Some(other),
            }
        }
        if (schema.get("properties").is_some() || schema.get("required").is_some())
            && let Value::Object(own) = self.object(schema, depth)?
        {
            merged.extend(own);
        }
        Some(Value::Object(merged))
    }

    fn array(&self, schema: &'a Value, depth: usize) -> Option<Value> {
        let count = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
        if count == 0 {
            return Some(json!([]));
        }
        let item = self.value(schema.get("items").unwrap_or(&Value::Bool(true)), depth + 1)?;
        let unique = schema.get("uniqueItems") == Some(&Value::Bool(true));
        if unique && count > 1 {
            return None;
        }
        Some(Value::Array(vec![item; count.min(64) as usize]))
    }

    fn object(&self, schema: &'a Value, depth: usize) -> Option<Value> {
        let mut out = Map::new();
        let props = schema.get("properties").and_then(Value::as_object);
        for name in required(schema) {
            let prop = props
                .and_then(|p| p.get(name))
                .unwrap_or(&Value::Bool(true));
            out.insert(name.to_string(), self.value(prop, depth + 1)?);
        }
        Some(Value::Object(out))
    }
}

/// `value` fits `schema` ignoring `$ref`s elsewhere in the document (a fragment check).
fn accepts_local(schema: &Value, value: &Value) -> bool {
    if schema.get("$ref").is_some() {
        return true;
    }
    let mut fragment = schema.clone();
    if let Some(o) = fragment.as_object_mut() {
        o.retain(|k, _| !matches!(k.as_str(), "properties" | "items" | "$defs" | "definitions"));
    }
    accepts(&fragment, value)
}

fn string(schema: &Value) -> Value {
    let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let max = schema
        .get("maxLength")
        .and_then(Value::as_u64)
        .map(|m| m as usize);
    let base = match schema.get("format").and_then(Value::as_str) {
        Some("date-time") => "2026-01-01T00:00:00Z".to_string(),
        Some("date") => "2026-01-01".to_string(),
        Some("time") => "00:00:00Z".to_string(),
        Some("email") => "user@example.com".to_string(),
        Some("uri" | "url") => "https://example.com/".to_string(),
        Some("uuid") => "00000000-0000-4000-8000-000000000000".to_string(),
        Some("ipv4") => "127.0.0.1".to_string(),
        Some("hostname") => "example.com".to_string(),
        _ => "example".to_string(),
    };
    let mut s = base;
    while s.chars().count() < min {
        s.push('x');
    }
    if let Some(max) = max {
        s = s.chars().take(max).collect();
    }
    json!(s)
}

fn bounds(schema: &Value) -> (Option<f64>, Option<f64>) {
    let get = |k: &str| schema.get(k).and_then(Value::as_f64);
    let low = match (get("minimum"), get("exclusiveMinimum")) {
        (Some(a), Some(b)) => Some(a.max(b + 1.0)),
        (a, b) => a.or(b.map(|b| b + 1.0)),
    };
    let high = match (get("maximum"), get("exclusiveMaximum")) {
        (Some(a), Some(b)) => Some(a.min(b - 1.0)),
        (a, b) => a.or(b.map(|b| b - 1.0)),
    };
    (low, high)
}

fn integer(schema: &Value) -> Value {
    let (low, high) = bounds(schema);
    let mut x = low
        .map(f64::ceil)
        .unwrap_or(1.0)
        .max(low.unwrap_or(f64::MIN));
    if low.is_none() && high.is_some_and(|h| h < x) {
        x = high.unwrap().floor();
    }
    if let Some(step) = schema.get("multipleOf").and_then(Value::as_f64) {
        x = (x / step).ceil() * step;
    }
    number(x)
}

fn float(schema: &Value) -> Value {
    let (low, high) = bounds(schema);
    let x = match (low, high) {
        (Some(l), Some(h)) => (l + h) / 2.0,
        (Some(l), None) => l + 1.0,
        (None, Some(h)) => h - 1.0,
        (None, None) => 1.0,
    };
    match schema.get("multipleOf").and_then(Value::as_f64) {
        Some(step) => number((x / step).ceil() * step),
        None => number(x),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "city": { "type": "string", "minLength": 2, "maxLength": 40 },
                "days": { "type": "integer", "minimum": 1, "maximum": 7 },
                "units": { "type": "string", "enum": ["metric", "imperial"] },
                "detail": { "type": "boolean" },
                "tags": { "type": "array", "items": { "type": "string" }, "minItems": 1 },
                "when": { "$ref": "#/$defs/when" }
            },
            "required": ["city", "days", "units", "tags", "when"],
            "additionalProperties": false,
            "$defs": { "when": { "type": "string", "format": "date" } }
        })
    }

    #[test]
    fn example_is_valid_and_minimal() {
        let s = schema();
        let v = example(&s).expect("an example");
        assert!(accepts(&s, &v), "{v}");
        assert_eq!(
            v,
            json!({"city": "example", "days": 1, "units": "metric", "tags": ["example"], "when": "2026-01-01"})
        );
    }

    #[test]
    fn examples_for_common_shapes() {
        for s in [
            json!({"type": "object"}),
            json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}),
            json!({"type": "object", "properties": {"n": {"type": "number", "exclusiveMinimum": 0, "maximum": 1}}, "required": ["n"]}),
            json!({"type": "object", "properties": {"x": {"anyOf": [{"type": "null"}, {"type": "integer", "minimum": 5}]}}, "required": ["x"]}),
            json!({"type": "object", "properties": {"x": {"type": ["string", "null"], "default": "d"}}, "required": ["x"]}),
            json!({"type": "object", "properties": {"x": {"type": "integer", "multipleOf": 5, "minimum": 3}}, "required": ["x"]}),
        ] {
            let v = example(&s).unwrap_or_else(|| panic!("no example for {s}"));
            assert!(accepts(&s, &v), "{s} -> {v}");
        }
    }

    #[test]
    fn unsatisfiable_pattern_gives_none() {
        let s = json!({"type": "object", "properties": {"id": {"type": "string", "pattern": "^[0-9]{4}$"}}, "required": ["id"]});
        assert_eq!(example(&s), None);
        assert!(invalid_variants(&s).is_empty());
    }

    #[test]
    fn variants_are_rejected_by_the_schema() {
        let s = schema();
        let variants = invalid_variants(&s);
        let labels: Vec<&str> = variants.iter().map(|v| v.label.as_str()).collect();
        for expected in [
            "required property \"city\" is missing",
            "property \"days\" has the wrong type (string instead of integer)",
            "property \"days\" is above its maximum 7",
            "property \"days\" is below its minimum 1",
            "property \"days\" is not an integer (1.5)",
            "property \"city\" is longer than its maxLength 40",
            "property \"units\" is not one of its enum values",
            "property \"tags\" has the wrong type (object instead of array)",
            "unexpected property \"unexpected_property_0\" (additionalProperties: false)",
        ] {
            assert!(
                labels.contains(&expected),
                "missing {expected:?} in {labels:#?}"
            );
        }
        for v in &variants {
            assert_eq!(v.must_reject, !accepts(&s, &v.arguments), "{}", v.label);
            assert!(
                v.must_reject || v.label.contains("oversized"),
                "{}",
                v.label
            );
        }
        // `format` is an annotation in 2020-12: a huge "date" string is allowed, so the
        // server need only survive it.
        let when = variants
            .iter()
            .find(|v| v.label.starts_with("property \"when\" is an oversized"));
        assert!(!when.expect("oversized when").must_reject);
    }

    #[test]
    fn oversized_string_without_bound_is_not_a_must_reject() {
        let s = json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]});
        let v = invalid_variants(&s);
        let big = v
            .iter()
            .find(|v| v.label.contains("oversized"))
            .expect("oversized");
        assert!(!big.must_reject);
        assert_eq!(big.arguments["text"].as_str().unwrap().len(), OVERSIZED_LEN);
    }
}
