//! The values of a session as template text: ids a result held and a later request sent
//! back become captures, scrubbed secrets become parameters, volatile parts become patterns.

use std::collections::BTreeSet;

use regex::Regex;
use serde_json::Value;

use super::Candidate;
use crate::face::app::init::yaml::{literal, slug};
use crate::ground::json::path::child;
use crate::ground::yaml::write::scalar;
use crate::language::assert::golden;
use crate::run::record::tape::placeholders;

/// What templating a request's params learns and uses: the values earlier answers held (an
/// id taken becomes a variable), the parameters scrubbed secrets became.
pub(super) struct Templater<'a> {
    pub(super) candidates: &'a mut [Candidate],
    pub(super) vars_taken: &'a mut BTreeSet<String>,
    pub(super) parameters: &'a mut BTreeSet<String>,
    /// The tool each earlier step called (variables are named after it).
    pub(super) tools: &'a [Option<String>],
    /// The steps whose captures the request uses.
    pub(super) uses: BTreeSet<usize>,
    /// A secret-shaped value (`***`) was in the request.
    pub(super) masked: bool,
}

impl Templater<'_> {
    /// The params as YAML flow text: strings that held an earlier result's value or a
    /// scrubbed secret become templates, every other string is sent as written.
    pub(super) fn flow(&mut self, v: &Value) -> String {
        match v {
            Value::String(s) => scalar(&self.string(s)),
            Value::Array(items) => {
                let parts: Vec<String> = items.iter().map(|i| self.flow(i)).collect();
                format!("[{}]", parts.join(", "))
            }
            Value::Object(map) if map.is_empty() => "{}".into(),
            Value::Object(map) => {
                let parts: Vec<String> = map
                    .iter()
                    .map(|(k, v)| format!("{}: {}", scalar(&literal(k)), self.flow(v)))
                    .collect();
                format!("{{ {} }}", parts.join(", "))
            }
            other => other.to_string(),
        }
    }

    /// One string of a request as template text.
    fn string(&mut self, s: &str) -> String {
        if s.contains(crate::ground::redact::MASK) {
            self.masked = true;
        }
        let mut pieces = Pieces::new(s);
        pieces.parameters(self.parameters);
        // The most recent value first: the latest `create` is the one a `get` means.
        for i in (0..self.candidates.len()).rev() {
            let value = self.candidates[i].value.clone();
            if !pieces.holds(&value) {
                continue;
            }
            let var = match &self.candidates[i].var {
                Some(v) => v.clone(),
                None => self.name(i),
            };
            self.uses.insert(self.candidates[i].step);
            pieces.replace(&value, &var);
        }
        pieces.template()
    }

    /// A new variable for candidate `i`, unique in the session.
    fn name(&mut self, i: usize) -> String {
        let c = &self.candidates[i];
        let tool = self.tools.get(c.step).cloned().flatten();
        let base = var_name(tool.as_deref(), &c.key);
        let mut name = base.clone();
        let mut n = 2;
        while !self.vars_taken.insert(name.clone()) {
            name = format!("{base}_{n}");
            n += 1;
        }
        self.candidates[i].var = Some(name.clone());
        name
    }
}

/// A string cut into text and variables, written back as template text.
pub(super) struct Pieces(pub(super) Vec<(bool, String)>);

impl Pieces {
    pub(super) fn new(s: &str) -> Pieces {
        Pieces(vec![(false, s.to_string())])
    }

    /// Whether a text piece is `value`, or holds it and it is long enough to be no accident.
    pub(super) fn holds(&self, value: &str) -> bool {
        self.0
            .iter()
            .any(|(v, t)| !v && (t == value || (value.len() >= 8 && t.contains(value))))
    }

    /// Scrubbed secrets (`<param:NAME>`) become parameters.
    pub(super) fn parameters(&mut self, parameters: &mut BTreeSet<String>) {
        let found: Vec<(String, String)> = self
            .0
            .iter()
            .filter(|(v, _)| !v)
            .flat_map(|(_, t)| {
                placeholders(t)
                    .map(|(whole, name)| (whole.to_string(), name.to_string()))
                    .collect::<Vec<_>>()
            })
            .collect();
        for (whole, name) in found {
            parameters.insert(name.clone());
            self.replace(&whole, &name);
        }
    }

    pub(super) fn replace(&mut self, needle: &str, var: &str) {
        let mut out = Vec::new();
        for (is_var, text) in std::mem::take(&mut self.0) {
            if is_var || !text.contains(needle) {
                out.push((is_var, text));
                continue;
            }
            let mut rest = text.as_str();
            while let Some(at) = rest.find(needle) {
                if at > 0 {
                    out.push((false, rest[..at].to_string()));
                }
                out.push((true, var.to_string()));
                rest = &rest[at + needle.len()..];
            }
            if !rest.is_empty() {
                out.push((false, rest.to_string()));
            }
        }
        self.0 = out;
    }

    pub(super) fn changed(&self) -> bool {
        self.0.iter().any(|(v, _)| *v)
    }

    /// Template text: a lone variable keeps its type (`"{{ id }}"`), text around variables is
    /// sent as written.
    pub(super) fn template(&self) -> String {
        self.0
            .iter()
            .map(|(is_var, text)| {
                if *is_var {
                    format!("{{{{ {text} }}}}")
                } else {
                    literal(text)
                }
            })
            .collect()
    }
}

/// `create_note_id` from the tool and the key (`id`), `note_id` from `noteId`.
fn var_name(tool: Option<&str>, key: &str) -> String {
    let mut snake = String::new();
    for (i, c) in key.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            snake.push('_');
        }
        if c.is_ascii_alphanumeric() {
            snake.push(c.to_ascii_lowercase());
        } else if !snake.ends_with('_') {
            snake.push('_');
        }
    }
    let snake = snake.trim_matches('_').to_string();
    let generic = matches!(snake.as_str(), "id" | "uri" | "handle" | "" | "text");
    let name = match (generic, tool) {
        (true, Some(tool)) => format!(
            "{}_{}",
            slug(tool).replace('-', "_"),
            if snake.is_empty() { "value" } else { &snake }
        ),
        (true, None) => format!(
            "recorded_{}",
            if snake.is_empty() { "value" } else { &snake }
        ),
        (false, _) => snake,
    };
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("v_{name}")
    } else {
        name
    }
}

static ID_KEY: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
    Regex::new(
        r"(?i)^(id|uri|handle|ref|key|cursor|token|session)$|(Id|_id|ID|Uri|_uri|Handle|_handle)$",
    )
    .expect("compiles")
});

/// Values of a result a later request may send back: id-like keys, UUIDs, a tool's whole
/// one-word text answer.
pub(super) fn collect_candidates(result: &Value, step: usize, out: &mut Vec<Candidate>) {
    fn walk(v: &Value, path: &str, key: &str, step: usize, out: &mut Vec<Candidate>) {
        match v {
            Value::String(s) => {
                let id_like = ID_KEY.is_match(key) || golden::UUID.is_match(s);
                let word = key == "text" && !s.contains(char::is_whitespace) && s.len() <= 100;
                if s.len() >= 4 && (id_like || word) && !out.iter().any(|c| c.value == *s) {
                    out.push(Candidate {
                        value: s.clone(),
                        step,
                        path: path.to_string(),
                        key: key.to_string(),
                        var: None,
                    });
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate().take(50) {
                    walk(item, &format!("{path}[{i}]"), key, step, out);
                }
            }
            Value::Object(map) => {
                for (k, item) in map {
                    if k == "_meta" {
                        continue;
                    }
                    walk(item, &child(path, k), k, step, out);
                }
            }
            _ => {}
        }
    }
    walk(result, "$", "", step, out);
}

/// A pattern for a string holding volatile parts (UUIDs, timestamps, loopback ports), or
/// `None` when it holds none.
pub(super) fn volatile_pattern(s: &str) -> Option<String> {
    static PORT: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        Regex::new(r"\b(?:127\.0\.0\.1|localhost|\[::1\]):\d{2,5}\b").expect("compiles")
    });
    let mut spans: Vec<(usize, usize, &str)> = Vec::new();
    for (re, pattern) in [
        (&*golden::UUID, "[0-9a-fA-F-]{36}"),
        (
            &*golden::TIMESTAMP,
            r"\d{4}-\d{2}-\d{2}[T ][0-9:.,]+(?:Z|[+-][0-9:]+)?",
        ),
        (&*PORT, r"[^\s/]+:\d+"),
    ] {
        for m in re.find_iter(s) {
            if !spans.iter().any(|(a, b, _)| m.start() < *b && *a < m.end()) {
                spans.push((m.start(), m.end(), pattern));
            }
        }
    }
    if spans.is_empty() {
        return None;
    }
    spans.sort();
    let mut out = String::from("^");
    let mut at = 0;
    for (start, end, pattern) in spans {
        out.push_str(&regex::escape(&s[at..start]));
        out.push_str(pattern);
        at = end;
    }
    out.push_str(&regex::escape(&s[at..]));
    out.push('$');
    Some(out)
}
