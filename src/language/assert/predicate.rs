//! The predicates of a `path` expectation (`equals`, `contains`, `matches`, `type`,
//! `length`, `exists`, `oneOf`, `unique`, `increasing`, `validSchema`, comparisons) against the nodes the
//! path matched: one file per predicate under `predicate/`, Hurl-style.

mod compare;
mod contains;
mod equals;
mod exists;
mod increasing;
mod length;
mod matches;
mod min_matches;
mod not_equals;
mod one_of;
mod type_is;
mod unique;
mod valid_schema;

use std::borrow::Cow;

use serde_json::Value;

use crate::ground::json::{json_eq, subset_of};
use crate::ground::yaml::value::TValue;
use crate::language::dsl::document::{JsonType, LengthSpec};
use crate::language::dsl::scenario::expect::Predicate;
use crate::language::dsl::template::render_value;
use crate::results::outcome::Finding;

/// The matches of a path, and what a predicate needs to judge them.
#[derive(Clone, Copy)]
pub(super) struct Nodes<'a> {
    /// The path as written (for messages).
    pub src: &'a str,
    pub matches: &'a [&'a Value],
    /// The path selects at most one node by construction ([`is_singular_path`]).
    pub singular: bool,
    /// The template context expected values are rendered with.
    pub ctx: &'a Value,
}

impl<'a> Nodes<'a> {
    fn render(&self, v: &TValue) -> Result<Value, Finding> {
        render_value(v, self.ctx)
            .map_err(|(_, _, e)| Finding::message(format!("template error: {e}")))
    }

    fn nothing(&self) -> Finding {
        Finding {
            message: format!("`{}` matched nothing", self.src),
            expected: None,
            actual: Some("no match".to_string()),
        }
    }

    /// A multi-node path (wildcard, filter, slice, descendant) yields the list of its
    /// matches; a singular path yields its one value. For `equals`/`notEquals`, one match
    /// of a multi-node path compared with a value that is not a list is that value (the
    /// natural `readOnlyHint equals true` on a filter), as `scalar` says.
    fn single_as(&self, scalar: bool) -> Result<Cow<'a, Value>, Finding> {
        let one_value = scalar && self.matches.len() == 1;
        if !(self.singular || one_value) {
            return Ok(Cow::Owned(Value::Array(
                self.matches.iter().map(|v| (*v).clone()).collect(),
            )));
        }
        match self.matches {
            [] => Err(self.nothing()),
            [one] => Ok(Cow::Borrowed(*one)),
            many => Ok(Cow::Owned(Value::Array(
                many.iter().map(|v| (*v).clone()).collect(),
            ))),
        }
    }
}

/// One predicate over the matches of `src`. `singular`: the path selects at most one
/// node by construction ([`is_singular_path`]); otherwise its matches are a list.
pub(super) fn check_predicate(
    pred: &Predicate,
    src: &str,
    matches: &[&Value],
    singular: bool,
    ctx: &Value,
) -> Result<(), Finding> {
    let n = Nodes {
        src,
        matches,
        singular,
        ctx,
    };
    match pred {
        Predicate::Equals(v) => equals::check(&n, v),
        Predicate::NotEquals(v) => not_equals::check(&n, v),
        Predicate::Contains(v) => contains::check(&n, v),
        Predicate::Matches(re) => matches::check(&n, re),
        Predicate::Type(t) => type_is::check(&n, t),
        Predicate::Length(spec) => length::check(&n, spec),
        Predicate::Exists(want) => exists::check(&n, want),
        Predicate::OneOf(options) => one_of::check(&n, options),
        Predicate::Unique(want) => unique::check(&n, want),
        Predicate::Increasing(want) => increasing::check(&n, want),
        Predicate::ValidSchema(want) => valid_schema::check(&n, want),
        Predicate::Compare(op, bound) => compare::check(&n, op, bound),
        Predicate::MinMatches(min) => min_matches::check(&n, *min),
    }
}

/// Whether predicates that held over `matches` held vacuously: a multi-node path matched
/// nothing and every predicate judges each match (`type`, `oneOf`, comparisons…), none
/// the number of matches (`length`, `exists`, `equals`, `contains`, `minMatches`).
pub(super) fn held_vacuously(predicates: &[Predicate], matches: &[&Value], singular: bool) -> bool {
    let each = |p: &Predicate| {
        matches!(
            p,
            Predicate::Matches(_)
                | Predicate::Type(_)
                | Predicate::OneOf(_)
                | Predicate::ValidSchema(_)
                | Predicate::Compare(..)
                | Predicate::NotEquals(_)
                | Predicate::Unique(_)
                | Predicate::Increasing(_)
        )
    };
    matches.is_empty() && !singular && !predicates.is_empty() && predicates.iter().all(each)
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

/// Whether `len` meets the spec, and the spec in words; `Err` when a templated bound does
/// not render to a whole number.
pub(super) fn length_holds(
    spec: &LengthSpec,
    len: u64,
    ctx: &Value,
) -> Result<(bool, String), String> {
    const WHOLE: &str = "a whole number (0 or more)";
    Ok(match spec {
        LengthSpec::Exact(n) => {
            let n = n.resolve(ctx, WHOLE)?;
            (len == n, n.to_string())
        }
        LengthSpec::Compare(c) => {
            let mut parts = Vec::new();
            let mut ok = true;
            for (bound, symbol, holds) in [
                (&c.gt, ">", (|l, b| l > b) as fn(u64, u64) -> bool),
                (&c.gte, ">=", |l, b| l >= b),
                (&c.lt, "<", |l, b| l < b),
                (&c.lte, "<=", |l, b| l <= b),
            ] {
                if let Some(b) = bound {
                    let b = b.resolve(ctx, WHOLE)?;
                    ok &= holds(len, b);
                    parts.push(format!("{symbol} {b}"));
                }
            }
            (ok, parts.join(" and "))
        }
    })
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
