//! Writing readable, always-valid scenario YAML by hand: scalars through the one YAML
//! writer ([`crate::ground::yaml::write`]), flow style for small values. Strings the engine would
//! treat as templates are escaped, and names go into JSONPath string literals escaped, so
//! any server-chosen name round-trips exactly.

use serde_json::Value;

use crate::ground::yaml::write::scalar;
use crate::language::dsl::template::is_template;

/// A string value the engine renders as a template (`params`, `equals`, …): text that
/// looks like template syntax is wrapped in `{% raw %}` so it is sent as written.
pub fn literal(s: &str) -> String {
    if is_template(s) && !s.contains("{% endraw %}") {
        format!("{{% raw %}}{s}{{% endraw %}}")
    } else {
        s.to_string()
    }
}

/// A JSON value in YAML flow style (`{ a: 1, b: [x, "y z"] }`), with every string
/// escaped as a [`literal`] (the value goes where templates are rendered).
pub fn flow(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => scalar(&literal(s)),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(flow).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Object(map) if map.is_empty() => "{}".into(),
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", scalar(k), flow(v)))
                .collect();
            format!("{{ {} }}", parts.join(", "))
        }
    }
}

/// A file-name-safe slug: lowercase ASCII letters, digits and `-` (at most 60 bytes).
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let mut out: String = out.trim_matches('-').chars().take(60).collect();
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() { "item".into() } else { out }
}

/// Slugs made unique in order of appearance: `a`, `a-2`, `a-3`.
pub fn unique_slugs<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    names
        .into_iter()
        .map(|name| {
            let base = slug(name);
            let mut candidate = base.clone();
            let mut n = 2;
            while !seen.insert(candidate.clone()) {
                candidate = format!("{base}-{n}");
                n += 1;
            }
            candidate
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ground::json::path::string_literal as jsonpath_string;
    use serde_json::json;

    /// Parse `key: <text>` back with the project's YAML reader.
    fn read_back(text: &str) -> Value {
        let doc: std::collections::BTreeMap<String, Value> =
            crate::ground::yaml::from_str(&format!("k: {text}\n")).expect("valid YAML");
        doc["k"].clone()
    }

    #[test]
    fn flow_values_read_back() {
        let v = json!({"a": 1, "b": [true, null, "x y", "{}"], "c d": {"e": 1.5}, "f": {}});
        assert_eq!(read_back(&flow(&v)), v);
    }

    #[test]
    fn template_text_is_sent_as_written() {
        let raw = "{{ not a var }} {% if %}";
        let escaped = literal(raw);
        let rendered = crate::language::dsl::template::render_str(&escaped, &json!({})).unwrap();
        assert_eq!(rendered, json!(raw));
        assert_eq!(literal("plain"), "plain");
    }

    #[test]
    fn jsonpath_literals_select_odd_names() {
        let names = ["it's", "back\\slash", "q\"uote", "tab\tx"];
        for name in names {
            let doc = json!({"tools": [{"name": name}, {"name": "other"}]});
            let path = format!("$.tools[?@.name == {}]", jsonpath_string(name));
            let p = serde_json_path::JsonPath::parse(&path).expect(&path);
            assert_eq!(p.query(&doc).all().len(), 1, "{path}");
        }
    }

    #[test]
    fn slugs_are_safe_and_unique() {
        assert_eq!(slug("Get Weather!"), "get-weather");
        assert_eq!(slug("..."), "item");
        assert_eq!(slug("example://items/{id}"), "example-items-id");
        assert_eq!(
            unique_slugs(["a.b", "a_b", "A-B"]),
            ["a-b", "a-b-2", "a-b-3"]
        );
    }
}
