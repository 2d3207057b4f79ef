//! Validity of `x-mcp-header` annotations in a tool's `inputSchema` (MCP 2026-07-28).
//!
//! A property annotated with `x-mcp-header: NAME` is mirrored by Streamable HTTP clients
//! into an `Mcp-Param-NAME` request header. A client MUST drop a tool whose schema
//! carries an invalid annotation from `tools/list`, so every violation matters:
//!
//! * the value is a non-empty string of RFC 9110 `tchar`s;
//! * values are unique, case-insensitively, within the schema;
//! * the annotated property has type `integer`, `string` or `boolean`;
//! * the property is reachable from the root through `properties` keys only;
//! * an annotated integer does not allow values beyond ±(2^53−1).

use serde_json::{Map, Number, Value};

use super::schema_diff::{join, prop_segment};

const KEY: &str = "x-mcp-header";

/// 2^53 − 1, the largest integer every JSON implementation represents exactly.
const MAX_SAFE: i128 = 9_007_199_254_740_991;

/// One human-readable reason per violation, sorted by schema path; empty when every
/// `x-mcp-header` annotation in the schema is valid.
pub fn invalid_x_mcp_headers(input_schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    walk(input_schema, String::new(), true, &mut found);
    found.sort_by(|a, b| a.path.cmp(&b.path));

    let mut reasons = Vec::new();
    let mut seen: Vec<(String, &Found)> = Vec::new();
    for f in &found {
        let at = display(&f.path);
        match f.value {
            Value::String(s) if s.is_empty() => {
                reasons.push(format!("{at}: x-mcp-header must not be empty"))
            }
            Value::String(s) => {
                if let Some(c) = s.chars().find(|c| !is_tchar(*c)) {
                    reasons.push(format!(
                        "{at}: x-mcp-header {} contains {c:?}, which is not an HTTP token character (RFC 9110 tchar)",
                        quote(s)
                    ));
                }
                let folded = s.to_lowercase();
                if let Some((_, first)) = seen.iter().find(|(k, _)| *k == folded) {
                    reasons.push(format!(
                        "{at}: x-mcp-header {} duplicates {} at {} (header names are case-insensitive)",
                        quote(s),
                        first.value,
                        display(&first.path)
                    ));
                } else {
                    seen.push((folded, f));
                }
            }
            other => reasons.push(format!(
                "{at}: x-mcp-header must be a string, found {other}"
            )),
        }
        if !f.reachable {
            reasons.push(format!(
                "{at}: x-mcp-header is only allowed on a property reachable from the root through `properties`"
            ));
        }
        match header_type(f.schema.get("type")) {
            Err(t) => reasons.push(format!(
                "{at}: x-mcp-header is only allowed on an integer, string or boolean property, found type {t}"
            )),
            Ok(true) => reasons.extend(unsafe_integer_bounds(f.schema).map(|why| format!("{at}: {why}"))),
            Ok(false) => {}
        }
    }
    reasons
}

/// One annotation and where it was found.
struct Found<'a> {
    path: String,
    value: &'a Value,
    /// reached from the root through `properties` keys only, and not the root itself
    reachable: bool,
    schema: &'a Map<String, Value>,
}

/// Visits every subschema, recording each annotation.
fn walk<'a>(schema: &'a Value, path: String, via_properties: bool, found: &mut Vec<Found<'a>>) {
    let Value::Object(m) = schema else {
        return;
    };
    if let Some(v) = m.get(KEY) {
        found.push(Found {
            path: path.clone(),
            value: v,
            reachable: via_properties && !path.is_empty(),
            schema: m,
        });
    }
    for (key, sub) in m {
        let here = join(&path, key);
        match key.as_str() {
            "properties" => {
                if let Value::Object(props) = sub {
                    for (name, s) in props {
                        walk(s, join(&path, &prop_segment(name)), via_properties, found);
                    }
                }
            }
            // a schema, or an array of schemas
            "items"
            | "prefixItems"
            | "allOf"
            | "anyOf"
            | "oneOf"
            | "not"
            | "if"
            | "then"
            | "else"
            | "additionalProperties"
            | "unevaluatedProperties"
            | "additionalItems"
            | "unevaluatedItems"
            | "contains"
            | "propertyNames"
            | "contentSchema" => match sub {
                Value::Array(xs) => {
                    for (i, s) in xs.iter().enumerate() {
                        walk(s, join(&here, &i.to_string()), false, found);
                    }
                }
                _ => walk(sub, here, false, found),
            },
            // maps of name → schema
            "$defs" | "definitions" | "patternProperties" | "dependentSchemas" | "dependencies" => {
                if let Value::Object(subs) = sub {
                    for (name, s) in subs {
                        walk(s, join(&here, &quote_segment(name)), false, found);
                    }
                }
            }
            _ => {}
        }
    }
}

/// `Ok(true)` when the type admits integers, `Ok(false)` for string/boolean only, `Err`
/// with the offending `type` when it is absent or allows anything else.
fn header_type(t: Option<&Value>) -> Result<bool, String> {
    let allowed = ["integer", "string", "boolean"];
    let names: Option<Vec<&str>> = match t {
        Some(Value::String(s)) => Some(vec![s.as_str()]),
        Some(Value::Array(xs)) if !xs.is_empty() => xs.iter().map(Value::as_str).collect(),
        _ => None,
    };
    match names {
        Some(names) if names.iter().all(|n| allowed.contains(n)) => Ok(names.contains(&"integer")),
        _ => Err(t.map_or_else(|| "(none)".to_string(), Value::to_string)),
    }
}

/// Why an annotated integer property may hold values beyond ±(2^53−1).
fn unsafe_integer_bounds(m: &Map<String, Value>) -> impl Iterator<Item = String> + '_ {
    // (keyword, largest/smallest allowed limit, upper?)
    [
        ("maximum", MAX_SAFE, true),
        ("exclusiveMaximum", MAX_SAFE + 1, true),
        ("minimum", -MAX_SAFE, false),
        ("exclusiveMinimum", -MAX_SAFE - 1, false),
    ]
    .into_iter()
    .filter_map(move |(key, limit, upper)| {
        let Some(Value::Number(n)) = m.get(key) else {
            return None;
        };
        let beyond = if upper { exceeds(n, limit) } else { below(n, limit) };
        beyond.then(|| {
            format!("x-mcp-header integer property has {key} {n}, beyond the safe integer range ±(2^53−1)")
        })
    })
}

fn exceeds(n: &Number, limit: i128) -> bool {
    match as_i128(n) {
        Some(i) => i > limit,
        None => n.as_f64().is_some_and(|f| f > limit as f64),
    }
}

fn below(n: &Number, limit: i128) -> bool {
    match as_i128(n) {
        Some(i) => i < limit,
        None => n.as_f64().is_some_and(|f| f < limit as f64),
    }
}

fn as_i128(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// RFC 9110 §5.6.2 `tchar`.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

fn display(path: &str) -> &str {
    if path.is_empty() { "(root)" } else { path }
}

fn quote(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

fn quote_segment(name: &str) -> String {
    name_segment(name).trim_start_matches('.').to_string()
}

fn name_segment(name: &str) -> String {
    if name.is_empty() || name.contains(['.', '[', ']', '"']) {
        format!("[{}]", quote(name))
    } else {
        format!(".{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(props: Value) -> Value {
        json!({"type": "object", "properties": props})
    }

    #[track_caller]
    fn valid(s: Value) {
        let r = invalid_x_mcp_headers(&s);
        assert!(r.is_empty(), "{r:#?}");
    }

    /// Exactly one reason, containing every fragment.
    #[track_caller]
    fn invalid(s: Value, fragments: &[&str]) {
        let r = invalid_x_mcp_headers(&s);
        assert_eq!(r.len(), 1, "{r:#?}");
        for f in fragments {
            assert!(r[0].contains(f), "{:?} lacks {f:?}", r[0]);
        }
    }

    #[test]
    fn schemas_without_annotations_are_valid() {
        valid(json!({}));
        valid(json!(true));
        valid(schema(
            json!({"a": {"type": "number"}, "b": {"type": "object"}}),
        ));
    }

    #[test]
    fn token_characters() {
        valid(schema(
            json!({"a": {"type": "string", "x-mcp-header": "Region-Id_2.x!#$%&'*+^`|~"}}),
        ));
        invalid(
            schema(json!({"a": {"type": "string", "x-mcp-header": ""}})),
            &["properties.a", "must not be empty"],
        );
        invalid(
            schema(json!({"a": {"type": "string", "x-mcp-header": "Region Id"}})),
            &["properties.a", "' '", "token"],
        );
        invalid(
            schema(json!({"a": {"type": "string", "x-mcp-header": "Region\r\nX: y"}})),
            &["'\\r'"],
        );
        invalid(
            schema(json!({"a": {"type": "string", "x-mcp-header": "a\u{1}"}})),
            &["'\\u{1}'"],
        );
        invalid(
            schema(json!({"a": {"type": "string", "x-mcp-header": "Région"}})),
            &["'é'"],
        );
        invalid(
            schema(json!({"a": {"type": "string", "x-mcp-header": "a:b"}})),
            &["':'"],
        );
        invalid(
            schema(json!({"a": {"type": "string", "x-mcp-header": 3}})),
            &["must be a string", "3"],
        );
    }

    #[test]
    fn uniqueness_is_case_insensitive() {
        valid(schema(json!({
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "string", "x-mcp-header": "Zone"}
        })));
        invalid(
            schema(json!({
                "b": {"type": "string", "x-mcp-header": "region"},
                "a": {"type": "string", "x-mcp-header": "Region"}
            })),
            &[
                "properties.b",
                "\"region\" duplicates \"Region\" at properties.a",
            ],
        );
        // across nesting levels too
        invalid(
            schema(json!({
                "a": {"type": "string", "x-mcp-header": "X"},
                "o": {"type": "object", "properties": {"b": {"type": "boolean", "x-mcp-header": "x"}}}
            })),
            &["properties.o.properties.b", "duplicates"],
        );
    }

    #[test]
    fn only_integer_string_or_boolean() {
        for t in [
            json!("integer"),
            json!("string"),
            json!("boolean"),
            json!(["string"]),
        ] {
            valid(schema(json!({"a": {"type": t, "x-mcp-header": "A"}})));
        }
        for t in [
            json!("number"),
            json!("object"),
            json!("array"),
            json!("null"),
            json!(["string", "null"]),
            json!(["integer", "number"]),
            json!([]),
        ] {
            invalid(
                schema(json!({"a": {"type": t.clone(), "x-mcp-header": "A"}})),
                &["properties.a", "integer, string or boolean", &t.to_string()],
            );
        }
        invalid(
            schema(json!({"a": {"x-mcp-header": "A"}})),
            &["found type (none)"],
        );
    }

    #[test]
    fn only_on_properties_reachable_through_properties() {
        valid(schema(
            json!({"o": {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A"}}}}),
        ));
        let cases = [
            (json!({"type": "string", "x-mcp-header": "A"}), "(root)"),
            (
                schema(
                    json!({"l": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}),
                ),
                "properties.l.items",
            ),
            (
                schema(
                    json!({"l": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "A"}}}}}),
                ),
                "properties.l.items.properties.a",
            ),
            (
                json!({"oneOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
                "oneOf.0.properties.a",
            ),
            (
                json!({"anyOf": [{"type": "string", "x-mcp-header": "A"}]}),
                "anyOf.0",
            ),
            (
                json!({"allOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
                "allOf.0.properties.a",
            ),
            (
                json!({"not": {"type": "string", "x-mcp-header": "A"}}),
                "not",
            ),
            (
                json!({"if": {"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}}),
                "if.properties.a",
            ),
            (
                json!({"then": {"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}}),
                "then.properties.a",
            ),
            (
                json!({"else": {"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}}),
                "else.properties.a",
            ),
            (
                json!({"$defs": {"d": {"type": "string", "x-mcp-header": "A"}}, "properties": {"a": {"$ref": "#/$defs/d"}}}),
                "$defs.d",
            ),
            (
                json!({"definitions": {"d": {"type": "string", "x-mcp-header": "A"}}}),
                "definitions.d",
            ),
            (
                json!({"additionalProperties": {"type": "string", "x-mcp-header": "A"}}),
                "additionalProperties",
            ),
            (
                json!({"patternProperties": {"^a": {"type": "string", "x-mcp-header": "A"}}}),
                "patternProperties.^a",
            ),
        ];
        for (s, path) in cases {
            invalid(
                s,
                &[
                    &format!("{path}: "),
                    "reachable from the root through `properties`",
                ],
            );
        }
    }

    #[test]
    fn integer_range() {
        let i = |extra: Value| {
            let mut p = json!({"type": "integer", "x-mcp-header": "N"});
            p.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            schema(json!({"n": p}))
        };
        valid(i(json!({})));
        valid(i(
            json!({"minimum": -9_007_199_254_740_991_i64, "maximum": 9_007_199_254_740_991_i64}),
        ));
        valid(i(
            json!({"exclusiveMinimum": -9_007_199_254_740_992_i64, "exclusiveMaximum": 9_007_199_254_740_992_i64}),
        ));
        invalid(
            i(json!({"maximum": 9_007_199_254_740_992_i64})),
            &["properties.n", "maximum 9007199254740992", "2^53"],
        );
        invalid(
            i(json!({"minimum": -9_007_199_254_740_992_i64})),
            &["minimum"],
        );
        invalid(i(json!({"maximum": 1e300})), &["maximum"]);
        invalid(i(json!({"maximum": u64::MAX})), &["maximum"]);
        invalid(
            i(json!({"exclusiveMaximum": 9_007_199_254_740_993_i64})),
            &["exclusiveMaximum"],
        );
        invalid(i(json!({"exclusiveMinimum": -1e20})), &["exclusiveMinimum"]);
        // strings are not range-checked
        valid(schema(
            json!({"s": {"type": "string", "maximum": 1e300, "x-mcp-header": "S"}}),
        ));
    }

    #[test]
    fn several_violations_are_all_reported_in_path_order() {
        let s = json!({"type": "object", "properties": {
            "z": {"type": "number", "x-mcp-header": "Bad Name"},
            "a": {"type": "string", "x-mcp-header": "Ok"}
        }, "$defs": {"d": {"type": "string", "x-mcp-header": "OK"}}});
        let r = invalid_x_mcp_headers(&s);
        assert_eq!(r.len(), 4, "{r:#?}");
        assert!(
            r[0].starts_with("$defs.d: ") && r[0].contains("reachable"),
            "{r:#?}"
        );
        assert!(
            r[1].starts_with("properties.a: ") && r[1].contains("duplicates \"OK\" at $defs.d"),
            "{r:#?}"
        );
        assert!(
            r[2].starts_with("properties.z: ") && r[2].contains("token"),
            "{r:#?}"
        );
        assert!(
            r[3].starts_with("properties.z: ") && r[3].contains("number"),
            "{r:#?}"
        );
        // independent of key order
        let reordered = json!({"$defs": {"d": {"x-mcp-header": "OK", "type": "string"}}, "properties": {
            "a": {"x-mcp-header": "Ok", "type": "string"},
            "z": {"x-mcp-header": "Bad Name", "type": "number"}
        }, "type": "object"});
        assert_eq!(invalid_x_mcp_headers(&reordered), r);
    }

    #[test]
    fn dotted_property_names_are_quoted_in_paths() {
        invalid(
            schema(json!({"a.b": {"type": "number", "x-mcp-header": "A"}})),
            &["properties[\"a.b\"]: "],
        );
    }
}
