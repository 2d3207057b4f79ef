//! The predicates of a `path` expectation (`equals`, `contains`, `matches`, `type`,
//! `length`, `exists`, `oneOf`, `unique`, `validSchema`, comparisons) against the nodes the
//! path matched.

use serde_json::Value;

use crate::dsl::Predicate;
use crate::dsl::model::{JsonType, LengthSpec};
use crate::dsl::template::render_value;
use crate::json::{json_eq, json_type_name, sort_keys, subset_of};

use super::*;

pub(super) type PredFail = (String, Option<String>, Option<String>);

/// One predicate over the matches of `src`. `singular`: the path selects at most one
/// node by construction ([`is_singular_path`]); otherwise its matches are a list.
pub(super) fn check_predicate(
    pred: &Predicate,
    src: &str,
    matches: &[&Value],
    singular: bool,
    ctx: &Value,
) -> Result<(), PredFail> {
    let render = |v: &crate::dsl::value::TValue| -> Result<Value, PredFail> {
        render_value(v, ctx).map_err(|(_, _, e)| (format!("template error: {e}"), None, None))
    };
    let nothing = || {
        (
            format!("`{src}` matched nothing"),
            None,
            Some("no match".to_string()),
        )
    };
    // A multi-node path (wildcard, filter, slice, descendant) yields the list of its
    // matches; a singular path yields its one value. For `equals`/`notEquals`, one match
    // of a multi-node path compared with a value that is not a list is that value (the
    // natural `readOnlyHint equals true` on a filter), as `scalar` says.
    let single_as = |scalar: bool| -> Result<std::borrow::Cow<'_, Value>, PredFail> {
        use std::borrow::Cow;
        let one_value = scalar && matches.len() == 1;
        if !(singular || one_value) {
            return Ok(Cow::Owned(Value::Array(
                matches.iter().map(|v| (*v).clone()).collect(),
            )));
        }
        match matches {
            [] => Err(nothing()),
            [one] => Ok(Cow::Borrowed(*one)),
            many => Ok(Cow::Owned(Value::Array(
                many.iter().map(|v| (*v).clone()).collect(),
            ))),
        }
    };
    match pred {
        Predicate::Equals(v) => {
            let expected = render(v)?;
            let actual = single_as(!expected.is_array())?;
            if json_eq(&expected, &actual) {
                Ok(())
            } else {
                // Several (or no) matches against a single value: say how to check each.
                let hint = if !singular && !expected.is_array() && matches.len() != 1 {
                    format!(
                        " (the path matched {} nodes, compared as a list; `oneOf: [{}]` checks each match)",
                        matches.len(),
                        compact(&expected, 60)
                    )
                } else {
                    String::new()
                };
                Err((
                    format!(
                        "`{src}` is {}, expected {}{hint}",
                        compact(&actual, 120),
                        compact(&expected, 120)
                    ),
                    Some(pretty(&expected)),
                    Some(pretty(&actual)),
                ))
            }
        }
        Predicate::NotEquals(v) => {
            let expected = render(v)?;
            let actual = single_as(!expected.is_array())?;
            if json_eq(&expected, &actual) {
                Err((
                    format!(
                        "`{src}` equals {}, expected a different value",
                        compact(&actual, 120)
                    ),
                    Some(format!("not {}", compact(&expected, 200))),
                    Some(pretty(&actual)),
                ))
            } else {
                Ok(())
            }
        }
        Predicate::Contains(v) => {
            let expected = render(v)?;
            if matches.is_empty() {
                return Err(nothing());
            }
            let found = if matches.len() > 1 {
                matches.iter().any(|m| {
                    json_eq(m, &expected) || (expected.is_object() && subset_of(&expected, m))
                })
            } else {
                contains(matches[0], &expected)
            };
            if found {
                Ok(())
            } else {
                let actual = single_as(false)?;
                Err((
                    format!("`{src}` does not contain {}", compact(&expected, 120)),
                    Some(format!("contains {}", compact(&expected, 500))),
                    Some(pretty(&actual)),
                ))
            }
        }
        Predicate::Matches(re) => {
            if matches.is_empty() {
                // Every match must hold: vacuously true for a multi-node path.
                return if singular { Err(nothing()) } else { Ok(()) };
            }
            for m in matches {
                match m.as_str() {
                    Some(s) if re.is_match(s) => {}
                    None => {
                        return Err((
                            format!(
                                "`{src}` is {} ({}), not a string to match /{}/",
                                json_type_name(m),
                                compact(m, 80),
                                re.as_str()
                            ),
                            Some(format!("a string matching /{}/", re.as_str())),
                            Some(compact(m, 500)),
                        ));
                    }
                    _ => {
                        return Err((
                            format!(
                                "`{src}` value {} does not match /{}/",
                                compact(m, 120),
                                re.as_str()
                            ),
                            Some(format!("/{}/", re.as_str())),
                            Some(compact(m, 500)),
                        ));
                    }
                }
            }
            Ok(())
        }
        Predicate::Type(t) => {
            if matches.is_empty() {
                // Every match must hold: vacuously true for a multi-node path.
                return if singular { Err(nothing()) } else { Ok(()) };
            }
            for m in matches {
                if !has_type(m, *t) {
                    return Err((
                        format!(
                            "`{src}` is {} ({}), expected type {}",
                            json_type_name(m),
                            compact(m, 80),
                            type_label(*t)
                        ),
                        Some(type_label(*t).into()),
                        Some(json_type_name(m).into()),
                    ));
                }
            }
            Ok(())
        }
        Predicate::Length(spec) => {
            let len = if singular {
                match matches {
                    [] => return Err(nothing()),
                    [one] => match one {
                        Value::Array(a) => a.len(),
                        Value::String(s) => s.chars().count(),
                        Value::Object(o) => o.len(),
                        other => {
                            return Err((
                                format!(
                                    "`{src}` is {}, which has no length",
                                    json_type_name(other)
                                ),
                                None,
                                Some(compact(other, 200)),
                            ));
                        }
                    },
                    _ => matches.len(),
                }
            } else {
                matches.len()
            } as u64;
            let (ok, wanted) = length_holds(spec, len);
            if ok {
                Ok(())
            } else {
                Err((
                    format!("`{src}` has length {len}, expected {wanted}"),
                    Some(wanted),
                    Some(len.to_string()),
                ))
            }
        }
        Predicate::Exists(want) => {
            let got = !matches.is_empty();
            match (want, got) {
                (true, false) => Err((
                    format!("`{src}` matched nothing, expected it to exist"),
                    Some("exists".into()),
                    Some("absent".into()),
                )),
                (false, true) => Err((
                    format!("`{src}` exists, expected it to be absent"),
                    Some("absent".into()),
                    Some(compact(&*single_as(false)?, 500)),
                )),
                _ => Ok(()),
            }
        }
        Predicate::OneOf(options) => {
            let options: Vec<Value> = match render(options)? {
                Value::Array(items) => items,
                other => {
                    return Err((
                        format!("`oneOf` rendered to {}, not a list", json_type_name(&other)),
                        Some("a list of values".into()),
                        Some(compact(&other, 200)),
                    ));
                }
            };
            if matches.is_empty() {
                // Every match must hold: vacuously true for a multi-node path.
                return if singular { Err(nothing()) } else { Ok(()) };
            }
            for m in matches {
                if !options.iter().any(|o| json_eq(o, m)) {
                    let list = Value::Array(options.clone());
                    return Err((
                        format!(
                            "`{src}` is {}, expected one of {}",
                            compact(m, 120),
                            compact(&list, 200)
                        ),
                        Some(compact(&list, 500)),
                        Some(compact(m, 500)),
                    ));
                }
            }
            Ok(())
        }
        Predicate::Increasing(want) => {
            // The first pair out of order (or a match that is no number), if any.
            let mut broken = None;
            for pair in matches.windows(2) {
                let (a, b) = (pair[0].as_f64(), pair[1].as_f64());
                if !matches!((a, b), (Some(a), Some(b)) if b > a) {
                    broken = Some(format!(
                        "{} then {}",
                        compact(pair[0], 60),
                        compact(pair[1], 60)
                    ));
                    break;
                }
            }
            if let Some(m) = matches.iter().find(|m| !m.is_number()) {
                broken = Some(format!("{} is not a number", compact(m, 60)));
            }
            let all: Vec<String> = matches.iter().map(|m| compact(m, 40)).collect();
            match (want, broken) {
                (true, Some(why)) => Err((
                    format!("`{src}` does not strictly increase: {why}"),
                    Some("strictly increasing numbers".into()),
                    Some(all.join(", ")),
                )),
                (false, None) if matches.len() > 1 => Err((
                    format!("`{src}` strictly increases"),
                    Some("numbers that do not strictly increase".into()),
                    Some(all.join(", ")),
                )),
                _ => Ok(()),
            }
        }
        Predicate::Unique(want) => {
            let mut seen: Vec<String> = Vec::new();
            let mut dups: Vec<String> = Vec::new();
            for m in matches {
                let key = sort_keys((*m).clone()).to_string();
                if seen.contains(&key) {
                    if !dups.contains(&key) {
                        dups.push(key);
                    }
                } else {
                    seen.push(key);
                }
            }
            match (want, dups.is_empty()) {
                (true, false) => Err((
                    format!("`{src}` has duplicates: {}", dups.join(", ")),
                    Some("distinct values".into()),
                    Some(dups.join(", ")),
                )),
                (false, true) => Err((
                    format!("`{src}` has no duplicates"),
                    Some("duplicates".into()),
                    None,
                )),
                _ => Ok(()),
            }
        }
        Predicate::ValidSchema(want) => {
            if matches.is_empty() {
                // Every match must hold: vacuously true for a multi-node path.
                return if singular { Err(nothing()) } else { Ok(()) };
            }
            for m in matches {
                let problem = if !m.is_object() {
                    Some(format!("{} is not a schema object", json_type_name(m)))
                } else {
                    jsonschema::meta::validate(m).err().map(|e| e.to_string())
                };
                match (want, problem) {
                    (true, Some(p)) => {
                        return Err((
                            format!("`{src}` is not a valid JSON Schema: {p}"),
                            Some("a JSON Schema 2020-12 object".into()),
                            Some(compact(m, 300)),
                        ));
                    }
                    (false, None) => {
                        return Err((
                            format!("`{src}` is a valid JSON Schema"),
                            Some("an invalid schema".into()),
                            Some(compact(m, 300)),
                        ));
                    }
                    _ => {}
                }
            }
            Ok(())
        }
        Predicate::Compare(op, bound) => {
            if matches.is_empty() {
                // Every match must hold: vacuously true for a multi-node path.
                return if singular { Err(nothing()) } else { Ok(()) };
            }
            for m in matches {
                match m.as_f64() {
                    Some(n) if op.holds(n, *bound) => {}
                    _ => {
                        return Err((
                            format!(
                                "`{src}` is {}, expected {} {bound}",
                                compact(m, 120),
                                op.symbol()
                            ),
                            Some(format!("{} {bound}", op.symbol())),
                            Some(compact(m, 500)),
                        ));
                    }
                }
            }
            Ok(())
        }
    }
}

/// Single match containment: array element, substring, object subset.
pub(super) fn contains(haystack: &Value, needle: &Value) -> bool {
    match (haystack, needle) {
        (Value::Array(items), _) => items
            .iter()
            .any(|i| json_eq(i, needle) || (needle.is_object() && subset_of(needle, i))),
        (Value::String(s), Value::String(n)) => s.contains(n.as_str()),
        (Value::Object(_), Value::Object(_)) => subset_of(needle, haystack),
        _ => false,
    }
}

pub(super) fn has_type(v: &Value, t: JsonType) -> bool {
    match t {
        JsonType::String => v.is_string(),
        JsonType::Number => v.is_number(),
        JsonType::Integer => {
            v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        JsonType::Boolean => v.is_boolean(),
        JsonType::Object => v.is_object(),
        JsonType::Array => v.is_array(),
        JsonType::Null => v.is_null(),
    }
}

pub(super) fn type_label(t: JsonType) -> &'static str {
    match t {
        JsonType::String => "string",
        JsonType::Number => "number",
        JsonType::Integer => "integer",
        JsonType::Boolean => "boolean",
        JsonType::Object => "object",
        JsonType::Array => "array",
        JsonType::Null => "null",
    }
}

pub(super) fn length_holds(spec: &LengthSpec, len: u64) -> (bool, String) {
    match spec {
        LengthSpec::Exact(n) => (len == *n, n.to_string()),
        LengthSpec::Compare(c) => {
            let mut parts = Vec::new();
            let mut ok = true;
            if let Some(b) = c.gt {
                ok &= len > b;
                parts.push(format!("> {b}"));
            }
            if let Some(b) = c.gte {
                ok &= len >= b;
                parts.push(format!(">= {b}"));
            }
            if let Some(b) = c.lt {
                ok &= len < b;
                parts.push(format!("< {b}"));
            }
            if let Some(b) = c.lte {
                ok &= len <= b;
                parts.push(format!("<= {b}"));
            }
            (ok, parts.join(" and "))
        }
    }
}

/// Whether a JSONPath selects at most one node by construction (no wildcard, filter,
/// slice, union or descendant segment). Used by `length`: a singular path measures the
/// value, a multi-node path counts the matches.
pub fn is_singular_path(src: &str) -> bool {
    let mut in_quote: Option<char> = None;
    let mut depth = 0;
    let mut prev = ' ';
    for c in src.chars() {
        if let Some(q) = in_quote {
            if c == q && prev != '\\' {
                in_quote = None;
            }
        } else {
            match c {
                '\'' | '"' => in_quote = Some(c),
                '[' => depth += 1,
                ']' => depth -= 1,
                '*' | '?' => return false,
                '.' if prev == '.' => return false,
                ':' | ',' if depth > 0 => return false,
                _ => {}
            }
        }
        prev = c;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn increasing_means_strictly_increasing_numbers() {
        let check = |want: bool, values: Value| {
            let values = values.as_array().unwrap().clone();
            let matches: Vec<&Value> = values.iter().collect();
            check_predicate(
                &Predicate::Increasing(want),
                "p",
                &matches,
                false,
                &json!({}),
            )
        };
        assert!(check(true, json!([1, 2, 2.5, 10])).is_ok());
        assert!(check(true, json!([])).is_ok());
        assert!(check(true, json!([7])).is_ok());
        let (message, _, actual) = check(true, json!([1, 2, 2])).unwrap_err();
        assert!(message.contains("2 then 2"), "{message}");
        assert_eq!(actual.as_deref(), Some("1, 2, 2"));
        assert!(check(true, json!([2, 1])).is_err());
        assert!(
            check(true, json!([1, "2"]))
                .unwrap_err()
                .0
                .contains("not a number")
        );
        assert!(check(false, json!([2, 1])).is_ok());
        assert!(check(false, json!([1, 2])).is_err());
    }
}
