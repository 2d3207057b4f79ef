//! The ground floor for JSON: one equality (exact for integers, key order ignored), one
//! subset test, one key sort, type names, and compiled JSONPath queries. Expectations,
//! contract comparison and snapshots all take these from here, so they cannot disagree on
//! whether two values are the same.

use std::cmp::Ordering;

use serde_json::{Number, Value};

pub mod path;

/// Structural equality: key order does not matter and numbers compare by value (`1 ==
/// 1.0`), exactly when both are integers (`2^64-1 != 2^64-2`, which `f64` cannot tell).
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => num_cmp(x, y) == Ordering::Equal,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Numeric order of two JSON numbers, exact when both are integers.
pub fn num_cmp(a: &Number, b: &Number) -> Ordering {
    if let (Some(x), Some(y)) = (as_i128(a), as_i128(b)) {
        return x.cmp(&y);
    }
    let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
    x.partial_cmp(&y).unwrap_or(Ordering::Equal)
}

fn as_i128(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// `expected` is contained in `actual`: objects by subset (recursively), arrays by
/// element-wise subset of the same length, scalars by [`json_eq`].
pub fn subset_of(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => e
            .iter()
            .all(|(k, v)| a.get(k).is_some_and(|w| subset_of(v, w))),
        (Value::Array(e), Value::Array(a)) => {
            e.len() == a.len() && e.iter().zip(a).all(|(x, y)| subset_of(x, y))
        }
        _ => json_eq(expected, actual),
    }
}

/// The JSON Schema type name of a value (`integer` for whole numbers written as such).
pub fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Recursively sort object keys, so the text of a value is canonical (snapshot files
/// that diff well, uniqueness keys).
pub fn sort_keys(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, sort_keys(v)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sort_keys).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value() {
        assert!(json_eq(&json!(1), &json!(1.0)));
        assert!(!json_eq(&json!(1), &json!("1")));
        assert!(json_eq(&json!({"a": [1, 2]}), &json!({"a": [1.0, 2]})));
        assert!(json_eq(&json!({"a": 1, "b": 2}), &json!({"b": 2, "a": 1})));
    }

    /// Integers beyond 2^53 differ although their `f64` images are equal (the equality
    /// of expectations used to go through `f64` and called these equal).
    #[test]
    fn large_integers_compare_exactly() {
        let max: Value = serde_json::from_str("18446744073709551615").unwrap();
        let below: Value = serde_json::from_str("18446744073709551614").unwrap();
        assert_eq!(max.as_f64(), below.as_f64());
        assert!(!json_eq(&max, &below));
        assert!(json_eq(&max, &max.clone()));
        assert!(!subset_of(&json!({ "id": below }), &json!({ "id": max })));
        let big = json!(9_007_199_254_740_993_i64);
        assert!(!json_eq(&big, &json!(9_007_199_254_740_992_i64)));
        assert_eq!(
            num_cmp(&Number::from(-1), &Number::from(u64::MAX)),
            Ordering::Less
        );
    }

    #[test]
    fn subset_matching() {
        assert!(subset_of(
            &json!({"supported": ["2026-07-28"]}),
            &json!({"supported": ["2026-07-28"], "requested": "x"})
        ));
        assert!(!subset_of(&json!({"a": 1}), &json!({"b": 1})));
    }

    #[test]
    fn keys_sort_recursively() {
        let sorted = sort_keys(json!({"b": [{"d": 1, "c": 2}], "a": 0}));
        assert_eq!(sorted.to_string(), r#"{"a":0,"b":[{"c":2,"d":1}]}"#);
    }
}
