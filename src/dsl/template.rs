//! Templates in string values only (never the raw file text). A string that is exactly
//! one `{{ expr }}` evaluates to the expression's value and keeps its type, so
//! `count: "{{ n }}"` sends a number when `n` is a number.

use std::collections::{BTreeSet, HashSet};
use std::sync::LazyLock;

use minijinja::{Environment, UndefinedBehavior};
use serde_json::Value;

use super::value::{TKind, TValue};

static ENV: LazyLock<Environment<'static>> = LazyLock::new(|| {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_debug(false);
    env
});

/// Whether a string contains template syntax at all (fast path: most strings do not).
pub fn is_template(s: &str) -> bool {
    s.contains("{{") || s.contains("{%")
}

/// If the whole string is one `{{ expr }}`, the expression inside.
fn sole_expression(s: &str) -> Option<&str> {
    let t = s.trim();
    let inner = t.strip_prefix("{{")?.strip_suffix("}}")?;
    if inner.contains("{{") || inner.contains("}}") {
        return None;
    }
    Some(inner.trim())
}

/// Variables a template string refers to (top-level names), or a syntax error message.
pub fn referenced_variables(s: &str) -> Result<BTreeSet<String>, String> {
    let names: HashSet<String> = if let Some(expr) = sole_expression(s) {
        ENV.compile_expression(expr)
            .map_err(|e| describe(&e))?
            .undeclared_variables(false)
    } else {
        ENV.template_from_str(s)
            .map_err(|e| describe(&e))?
            .undeclared_variables(false)
    };
    Ok(names
        .into_iter()
        .filter(|n| ENV.globals().all(|(g, _)| g != n))
        .collect())
}

/// Render one string against `ctx` (a JSON object of variables).
pub fn render_str(s: &str, ctx: &Value) -> Result<Value, String> {
    if !is_template(s) {
        return Ok(Value::String(s.to_string()));
    }
    let ctx = minijinja::Value::from(minijinja::value::Serde(ctx));
    if let Some(expr) = sole_expression(s) {
        let value = ENV
            .compile_expression(expr)
            .and_then(|e| e.eval(ctx))
            .map_err(|e| describe(&e))?;
        if value.is_undefined() {
            return Err(format!("undefined value: `{expr}` is undefined"));
        }
        return serde_json::to_value(&value).map_err(|e| e.to_string());
    }
    ENV.render_str(s, ctx)
        .map(Value::String)
        .map_err(|e| describe(&e))
}

/// Why the expression `expr` (no braces) has no value against `ctx` (undefined, null, or
/// an error such as indexing an empty list), or `None` when it has one.
pub fn no_value(expr: &str, ctx: &Value) -> Option<String> {
    let ctx = minijinja::Value::from(minijinja::value::Serde(ctx));
    match ENV.compile_expression(expr).and_then(|e| e.eval(ctx)) {
        Ok(v) if v.is_undefined() => Some("is undefined".into()),
        Ok(v) if v.is_none() => Some("is null".into()),
        Ok(_) => None,
        Err(e) if e.kind() == minijinja::ErrorKind::UndefinedError => Some("is undefined".into()),
        Err(e) => Some(format!("has no value: {}", describe(&e))),
    }
}

/// The value as JSON when no string in it is a template (so rendering is a copy).
pub fn fixed_json(v: &TValue) -> Option<Value> {
    fn fixed(v: &TValue) -> bool {
        match &v.kind {
            TKind::Str(s) => !is_template(s),
            TKind::Seq(items) => items.iter().all(fixed),
            TKind::Map(entries) => entries.iter().all(|(_, item)| fixed(item)),
            _ => true,
        }
    }
    fixed(v).then(|| v.to_json())
}

/// Render every string leaf of a value. On failure, returns the failing leaf's position.
pub fn render_value(v: &TValue, ctx: &Value) -> Result<Value, (u32, u32, String)> {
    Ok(match &v.kind {
        TKind::Str(s) => render_str(s, ctx).map_err(|e| (v.line, v.col, e))?,
        TKind::Seq(items) => Value::Array(
            items
                .iter()
                .map(|i| render_value(i, ctx))
                .collect::<Result<_, _>>()?,
        ),
        TKind::Map(entries) => {
            let mut map = serde_json::Map::new();
            for (k, item) in entries {
                map.insert(k.clone(), render_value(item, ctx)?);
            }
            Value::Object(map)
        }
        _ => v.to_json(),
    })
}

fn describe(e: &minijinja::Error) -> String {
    let mut msg = match e.detail() {
        Some(detail) => format!("{}: {detail}", e.kind()),
        None => e.kind().to_string(),
    };
    let mut source = std::error::Error::source(e);
    while let Some(inner) = source {
        msg.push_str(&format!(": {inner}"));
        source = inner.source();
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sole_expression_keeps_type() {
        let ctx = json!({"n": 42, "city": "Boston"});
        assert_eq!(render_str("{{ n }}", &ctx).unwrap(), json!(42));
        assert_eq!(render_str(" {{ n + 1 }} ", &ctx).unwrap(), json!(43));
        assert_eq!(
            render_str("city={{ city }}", &ctx).unwrap(),
            json!("city=Boston")
        );
        assert_eq!(render_str("plain {", &ctx).unwrap(), json!("plain {"));
    }

    #[test]
    fn undefined_is_an_error() {
        let err = render_str("{{ missing }}", &json!({})).unwrap_err();
        assert!(err.contains("undefined"), "{err}");
    }

    #[test]
    fn no_value_of_an_empty_list_item() {
        let ctx = json!({"items": [], "full": [{"uri": "a"}], "nothing": null});
        assert!(no_value("items[0].uri", &ctx).is_some());
        assert!(no_value("missing", &ctx).is_some());
        assert!(no_value("nothing", &ctx).is_some());
        assert_eq!(no_value("full[0].uri", &ctx), None);
    }

    #[test]
    fn finds_referenced_variables() {
        let vars = referenced_variables("{{ a.b }} and {{ c | upper }}").unwrap();
        assert_eq!(vars.into_iter().collect::<Vec<_>>(), vec!["a", "c"]);
        assert!(referenced_variables("{{ a").is_err());
    }
}
