//! Templates in string values only (never the raw file text). A string that is exactly
//! one `{{ expr }}` evaluates to the expression's value and keeps its type, so
//! `count: "{{ n }}"` sends a number when `n` is a number.

use std::collections::{BTreeSet, HashSet};
use std::sync::LazyLock;

use minijinja::{Environment, UndefinedBehavior};
use serde_json::Value;

use crate::ground::yaml::value::{TKind, TValue};

/// The work one template may do, in minijinja fuel: about one unit per instruction and
/// one per 64 bytes of data it makes (so about 64 MB at most). Real templates take a few
/// hundred; `{{ [1]*100000000 }}` or a loop of 10⁹ steps is stopped at once instead of
/// taking gigabytes and minutes.
pub const FUEL: u64 = 1_000_000;
/// The largest value one template may render, in bytes (the default message size limit).
pub const MAX_OUTPUT_BYTES: usize = 16 << 20;

static ENV: LazyLock<Environment<'static>> = LazyLock::new(|| environment(false));

/// For JSONPath templates: every value written out is escaped for a JSONPath string
/// literal (either quote), so `'{{ tool }}'` matches the tool's name whatever it holds.
static PATH_ENV: LazyLock<Environment<'static>> = LazyLock::new(|| environment(true));

fn environment(path: bool) -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_debug(false);
    env.set_fuel(Some(FUEL));
    env.add_filter("fromjson", fromjson);
    // Fuel pays for output once written: a lazy list (`[1]*100000000`) is measured before
    // it is written out, as a value is before it is sent.
    env.set_formatter(move |out, state, value| {
        if value.as_object().is_some()
            && let Err(bytes) = within_output(value, &mut 0)
        {
            return Err(minijinja::Error::new(
                minijinja::ErrorKind::InvalidOperation,
                output_too_large(bytes),
            ));
        }
        if path {
            let text = match value.as_str() {
                Some(s) => s.to_string(),
                None => value.to_string(),
            };
            return out.write_str(&path_literal(&text)).map_err(|e| {
                minijinja::Error::new(minijinja::ErrorKind::WriteFailure, e.to_string())
            });
        }
        minijinja::escape_formatter(out, state, value)
    });
    env
}

/// `text` as the inside of a JSONPath string literal (RFC 9535), valid between single
/// quotes and between double quotes: quotes, backslashes and control characters escaped.
pub fn path_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' | '"' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// `fromjson`: the value of a JSON text (a tool's text content that holds JSON).
fn fromjson(text: String) -> Result<minijinja::Value, minijinja::Error> {
    match serde_json::from_str::<Value>(&text) {
        Ok(v) => Ok(minijinja::Value::from(minijinja::value::Serde(v))),
        Err(e) => Err(minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            format!(
                "fromjson: the text is not JSON ({e}): `{}`",
                crate::ground::redact::excerpt(&text)
            ),
        )),
    }
}

/// How every bound's message ends: the fault is the scenario's.
const SCENARIO_FAULT: &str = "this is an error in the scenario, not the server's";

/// Why a template was stopped: the scenario's fault, worded so nobody blames the server.
fn over_budget() -> String {
    format!(
        "the template does more work than mcpspec allows (about {FUEL} steps, or {} MB of data): \
         a loop or a value too large; {SCENARIO_FAULT}",
        (FUEL * 64) >> 20
    )
}

fn output_too_large(bytes: usize) -> String {
    format!(
        "the template renders {bytes} bytes, more than the {MAX_OUTPUT_BYTES} mcpspec allows; \
         {SCENARIO_FAULT}"
    )
}

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

/// Runs one evaluation within the budget for writing values out (`~`, `|string`, `|join`
/// walk containers without fuel; see vendor/minijinja/PATCHED.md): a spent
/// budget means the result was cut short, so it is the scenario's error.
fn bounded<T>(evaluate: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match minijinja::render_budget::with_budget(MAX_OUTPUT_BYTES as u64, evaluate) {
        (_, true) => Err(format!(
            "the template writes out more than the {MAX_OUTPUT_BYTES} bytes mcpspec allows; \
             {SCENARIO_FAULT}"
        )),
        (result, false) => result,
    }
}

/// Render one string against `ctx` (a JSON object of variables).
pub fn render_str(s: &str, ctx: &Value) -> Result<Value, String> {
    if !is_template(s) {
        return Ok(Value::String(s.to_string()));
    }
    bounded(|| render_template(s, ctx))
}

/// Render a JSONPath template against `ctx`: every value written out is escaped for a
/// string literal ([`path_literal`]).
pub fn render_path(s: &str, ctx: &Value) -> Result<String, String> {
    bounded(|| {
        let ctx = minijinja::Value::from(minijinja::value::Serde(ctx));
        let text = PATH_ENV.render_str(s, ctx).map_err(|e| describe(&e))?;
        if text.len() > MAX_OUTPUT_BYTES {
            return Err(output_too_large(text.len()));
        }
        Ok(text)
    })
}

/// The filters a template names (`{{ x | name }}`) that mcpspec does not have: found
/// before the run, as undefined variables are. Only the expression parts (`{{ }}`, `{% %}`)
/// are read, string literals skipped.
pub fn unknown_filters(s: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = s;
    while let Some(open) = [rest.find("{{"), rest.find("{%")]
        .into_iter()
        .flatten()
        .min()
    {
        let body = &rest[open + 2..];
        let close = body
            .find("}}")
            .or_else(|| body.find("%}"))
            .unwrap_or(body.len());
        filter_names(&body[..close], &mut names);
        rest = &body[close..];
    }
    names.retain(|name| {
        let probe = format!("none | {name}");
        matches!(
            ENV.compile_expression(&probe).and_then(|e| e.eval(())),
            Err(e) if e.kind() == minijinja::ErrorKind::UnknownFilter
        )
    });
    names.dedup();
    names
}

/// The names after `|` in one expression, outside string literals.
fn filter_names(expr: &str, names: &mut Vec<String>) {
    let mut quote: Option<char> = None;
    let mut chars = expr.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match (quote, c) {
            (Some(_), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '|') => {
                let after = expr[i + 1..].trim_start();
                let name: String = after
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && !names.contains(&name) {
                    names.push(name);
                }
            }
            _ => {}
        }
    }
}

fn render_template(s: &str, ctx: &Value) -> Result<Value, String> {
    let ctx = minijinja::Value::from(minijinja::value::Serde(ctx));
    if let Some(expr) = sole_expression(s) {
        let value = ENV
            .compile_expression(expr)
            .and_then(|e| e.eval(ctx))
            .map_err(|e| describe(&e))?;
        if value.is_undefined() {
            return Err(format!(
                "undefined value: `{}` is undefined",
                crate::ground::redact::excerpt(expr)
            ));
        }
        // Measured before it is converted: `[1]*100000000` is a lazy list, cheap to make
        // and gigabytes once written out.
        if let Err(bytes) = within_output(&value, &mut 0) {
            return Err(output_too_large(bytes));
        }
        return serde_json::to_value(&value).map_err(|e| e.to_string());
    }
    let text = ENV.render_str(s, ctx).map_err(|e| describe(&e))?;
    if text.len() > MAX_OUTPUT_BYTES {
        return Err(output_too_large(text.len()));
    }
    Ok(Value::String(text))
}

/// Add the size of `v` as sent to `seen`, walking it only until [`MAX_OUTPUT_BYTES`]
/// is passed: `Err(bytes seen)` then.
fn within_output(v: &minijinja::Value, seen: &mut usize) -> Result<(), usize> {
    use minijinja::value::ValueKind;
    let over = |seen: &mut usize, n: usize| {
        *seen += n;
        if *seen > MAX_OUTPUT_BYTES {
            Err(*seen)
        } else {
            Ok(())
        }
    };
    match v.kind() {
        ValueKind::String => over(seen, v.as_str().map_or(0, str::len) + 2),
        ValueKind::Seq | ValueKind::Iterable => {
            for item in v.try_iter().into_iter().flatten() {
                over(seen, 1)?;
                within_output(&item, seen)?;
            }
            over(seen, 2)
        }
        ValueKind::Map => {
            for key in v.try_iter().into_iter().flatten() {
                within_output(&key, seen)?;
                if let Ok(item) = v.get_item(&key) {
                    within_output(&item, seen)?;
                }
            }
            over(seen, 2)
        }
        _ => over(seen, 8),
    }
}

/// A template without variables, evaluated once at load time: `Err` when it can never
/// run within the bounds (its value is static, so `validate` can tell).
pub fn static_budget(s: &str) -> Result<(), String> {
    match render_str(s, &Value::Object(Default::default())) {
        Err(e) if e.contains(SCENARIO_FAULT) => Err(e),
        _ => Ok(()),
    }
}

/// Why the expression `expr` (no braces) has no value against `ctx` (undefined, null, or
/// an error such as indexing an empty list), or `None` when it has one.
pub fn no_value(expr: &str, ctx: &Value) -> Option<String> {
    let ctx = minijinja::Value::from(minijinja::value::Serde(ctx));
    let verdict = bounded(|| {
        Ok(
            match ENV.compile_expression(expr).and_then(|e| e.eval(ctx)) {
                Ok(v) if v.is_undefined() => Some("is undefined".into()),
                Ok(v) if v.is_none() => Some("is null".into()),
                Ok(_) => None,
                Err(e) if e.kind() == minijinja::ErrorKind::UndefinedError => {
                    Some("is undefined".into())
                }
                Err(e) => Some(format!("has no value: {}", describe(&e))),
            },
        )
    });
    verdict.unwrap_or_else(|too_large| Some(format!("has no value: {too_large}")))
}

/// The value as JSON when no string in it is a template (so rendering is a copy).
pub fn fixed_json(v: &TValue) -> Option<Value> {
    fn fixed(v: &TValue) -> bool {
        match &v.kind {
            TKind::Str(s) => !is_template(s),
            TKind::Seq(items) => items.iter().all(fixed),
            TKind::Map(entries) => entries
                .iter()
                .all(|(key, item)| !is_template(key) && fixed(item)),
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
                // A key may be a template too (`"{{ field }}": 1`): it renders to text.
                let key = if is_template(k) {
                    match render_str(k, ctx).map_err(|e| (item.line, item.col, e))? {
                        Value::String(text) => text,
                        other => other.to_string(),
                    }
                } else {
                    k.clone()
                };
                map.insert(key, render_value(item, ctx)?);
            }
            Value::Object(map)
        }
        _ => v.to_json(),
    })
}

fn describe(e: &minijinja::Error) -> String {
    if e.kind() == minijinja::ErrorKind::OutOfFuel {
        return over_budget();
    }
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

    // A bomb's bound is on the work it costs, which a busy machine does not stretch as it
    // stretches wall time (the test failed at a load of 13 on 2 cores, a bomb stopped in
    // time taking 20 s of wall clock).
    use crate::ground::platform::thread_cpu;

    #[test]
    fn bombs_are_stopped_as_the_scenarios_error() {
        let ctx = json!({});
        for bomb in [
            "{{ [1]*100000000 }}",
            "x{{ [1]*100000000 }}",
            "{{ [[1]*100000000] }}",
            "{{ 'x' * 1000000000 }}",
            "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
            "x{% for i in range(100000) %}{% for j in range(100000) %}{{ i }}{% endfor %}{% endfor %}",
            // Containers written out as text or JSON: lazily repeated, or sharing themselves.
            "{{ 'x' ~ ([1]*100000000) }}",
            "{{ ([1]*100000000)|string }}",
            "{{ [[1]*10000]*10000 ~ '' }}",
            "{{ ([[1]*10000]*10000)|join(',') }}",
            "{% set a = [1,1,1,1,1,1,1,1,1,1] %}{% set b = [a,a,a,a,a,a,a,a,a,a] %}\
             {% set c = [b,b,b,b,b,b,b,b,b,b] %}{% set d = [c,c,c,c,c,c,c,c,c,c] %}\
             {% set e = [d,d,d,d,d,d,d,d,d,d] %}{% set f = [e,e,e,e,e,e,e,e,e,e] %}\
             {% set g = [f,f,f,f,f,f,f,f,f,f] %}{% set h = [g,g,g,g,g,g,g,g,g,g] %}\
             {{ h|string|length }}",
            "{% set a = [1,1,1,1,1,1,1,1,1,1] %}{% set b = [a,a,a,a,a,a,a,a,a,a] %}\
             {% set c = [b,b,b,b,b,b,b,b,b,b] %}{% set d = [c,c,c,c,c,c,c,c,c,c] %}\
             {% set e = [d,d,d,d,d,d,d,d,d,d] %}{% set f = [e,e,e,e,e,e,e,e,e,e] %}\
             {% set g = [f,f,f,f,f,f,f,f,f,f] %}{% set h = [g,g,g,g,g,g,g,g,g,g] %}\
             {{ h|join(',')|length }}",
        ] {
            let started = thread_cpu();
            let err = render_str(bomb, &ctx).unwrap_err();
            assert!(err.contains("not the server's"), "{bomb}: {err}");
            assert!(static_budget(bomb).is_err(), "{bomb}");
            let spent = thread_cpu().saturating_sub(started);
            assert!(
                spent < std::time::Duration::from_secs(20),
                "{bomb}: {spent:?} of CPU"
            );
        }
        // Real templates are far below the bounds.
        assert!(static_budget("{% for i in range(1000) %}{{ i }},{% endfor %}").is_ok());
        assert!(static_budget("{{ 'x' * 100000 }}").is_ok());
        assert_eq!(
            render_str("{{ 'n=' ~ ([1, 2] * 2) }}", &ctx).unwrap(),
            json!("n=[1, 2, 1, 2]"),
            "small containers still write out"
        );
        assert_eq!(
            render_str("{{ (['a', 'b'] * 2)|join(',') }}", &ctx).unwrap(),
            json!("a,b,a,b")
        );
        assert!(
            static_budget("{{ 1 / 0 }}").is_ok(),
            "other errors are the run's"
        );
        let big = json!({"big": "y".repeat(MAX_OUTPUT_BYTES)});
        let err = render_str("{{ big }}{{ big }}", &big).unwrap_err();
        assert!(err.contains("not the server's"), "{err}");
    }

    #[test]
    fn finds_unknown_filters_and_escapes_path_values() {
        assert_eq!(
            unknown_filters("{{ a | uper }} {{ b|length }} {{ '|x' }}"),
            vec!["uper"]
        );
        assert!(unknown_filters("{% if a | fromjson %}{% endif %}").is_empty());
        let ctx = json!({"q": "it's \"x\" \\"});
        let path = render_path("$[?@.n == '{{ q }}']", &ctx).unwrap();
        assert_eq!(path, "$[?@.n == 'it\\u0027s \\u0022x\\u0022 \\\\']");
        assert_eq!(
            render_str(
                "{{ (t | fromjson).items[0].id }}",
                &json!({"t": "{\"items\": [{\"id\": 3}]}"})
            )
            .unwrap(),
            json!(3)
        );
        assert!(
            render_str("{{ t | fromjson }}", &json!({"t": "nope"}))
                .unwrap_err()
                .contains("not JSON")
        );
    }

    #[test]
    fn finds_referenced_variables() {
        let vars = referenced_variables("{{ a.b }} and {{ c | upper }}").unwrap();
        assert_eq!(vars.into_iter().collect::<Vec<_>>(), vec!["a", "c"]);
        assert!(referenced_variables("{{ a").is_err());
    }
}
