//! The restricted schema an elicitation in form mode may request (2025-06-18 onwards,
//! `ElicitRequestFormParams.requestedSchema`: "A restricted subset of JSON Schema. Only
//! top-level properties are allowed, without nesting"): an object whose properties are each
//! a `PrimitiveSchemaDefinition` — a string (with `enum`, `enumNames` or `oneOf` of
//! `{const, title}`: SEP-1330's single-select forms), a number or integer, a boolean, or an
//! array whose `items` is a string `enum` or an `anyOf` of `{const, title}` (SEP-1330's
//! multi-select forms). A client shows such a form; anything else it must refuse.

use serde_json::Value;

/// Why `schema` is not within the restricted form (the first reason found), or `None`.
pub fn restricted_schema_problem(schema: &Value) -> Option<String> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Some("its `type` is not \"object\"".into());
    }
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Some("it has no `properties` object".into());
    };
    properties.iter().find_map(|(name, property)| {
        property_problem(property).map(|why| format!("property `{name}`: {why}"))
    })
}

/// Why one property is not a `PrimitiveSchemaDefinition`, or `None`.
fn property_problem(property: &Value) -> Option<String> {
    match property.get("type").and_then(Value::as_str) {
        Some("string") => property
            .get("oneOf")
            .and_then(|options| options_problem(options, "oneOf")),
        Some("number" | "integer" | "boolean") => None,
        Some("array") => multi_select_problem(property.get("items")),
        Some("object") => Some("a nested object (only primitive properties are allowed)".into()),
        Some(other) => Some(format!(
            "type \"{other}\" is not string, number, integer, boolean or a multi-select array"
        )),
        None => Some("no `type`".into()),
    }
}

/// A multi-select array's `items`: a string `enum`, or an `anyOf` of `{const, title}`.
fn multi_select_problem(items: Option<&Value>) -> Option<String> {
    let Some(items) = items else {
        return Some("an array without `items`".into());
    };
    if let Some(values) = items.get("enum") {
        let strings = values
            .as_array()
            .is_some_and(|v| v.iter().all(Value::is_string));
        return (!strings).then(|| "an array whose `items.enum` is not a list of strings".into());
    }
    match items.get("anyOf") {
        Some(options) => options_problem(options, "items.anyOf"),
        None => Some(
            "an array whose `items` is neither a string `enum` nor an `anyOf` of `{const, title}` (a list of objects or of free values)"
                .into(),
        ),
    }
}

/// Titled options (`oneOf` / `anyOf`): each a `{const: string, title: string}`.
fn options_problem(options: &Value, field: &str) -> Option<String> {
    let titled = |o: &Value| {
        o.get("const").is_some_and(Value::is_string) && o.get("title").is_some_and(Value::is_string)
    };
    let ok = options.as_array().is_some_and(|v| v.iter().all(titled));
    (!ok).then(|| format!("`{field}` is not a list of `{{const, title}}` string options"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problem(properties: Value) -> Option<String> {
        restricted_schema_problem(&json!({"type": "object", "properties": properties}))
    }

    #[test]
    fn the_forms_of_the_spec_and_sep_1330_are_within() {
        assert_eq!(
            problem(json!({
                "name": {"type": "string", "format": "email", "default": "a@b.c"},
                "n": {"type": "integer", "minimum": 1},
                "x": {"type": "number"},
                "ok": {"type": "boolean", "default": true},
                "pick": {"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]},
                "titled": {"type": "string", "oneOf": [{"const": "a", "title": "A"}]},
                "many": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
                "manyTitled": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}},
            })),
            None
        );
    }

    #[test]
    fn nesting_and_free_arrays_are_not() {
        let nested = problem(json!({"address": {"type": "object", "properties": {}}}));
        assert!(
            nested
                .unwrap()
                .contains("property `address`: a nested object")
        );
        let free = problem(json!({"tags": {"type": "array", "items": {"type": "string"}}}));
        assert!(free.unwrap().contains("neither a string `enum`"));
        let objects =
            problem(json!({"rows": {"type": "array", "items": {"anyOf": [{"type": "object"}]}}}));
        assert!(objects.unwrap().contains("`items.anyOf`"));
        let top = restricted_schema_problem(&json!({"type": "array"}));
        assert!(top.unwrap().contains("not \"object\""));
        let untyped = problem(json!({"x": {"description": "anything"}}));
        assert_eq!(untyped.as_deref(), Some("property `x`: no `type`"));
    }
}
