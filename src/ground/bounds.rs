//! What a regular expression or a JSON Schema may cost to compile, whoever wrote it: a
//! scenario's `matches:` and `schema:`, a pack's sanitizers, injection rules, or a
//! server's tool schemas. A 1 MiB pattern once took 50 s to compile and a 30 MiB one
//! 11 GB; past these bounds the pattern is refused at once, with a short reason (the
//! pattern itself is never repeated whole: see [`crate::ground::redact::excerpt`]).

use regex::{Regex, RegexBuilder};
use serde_json::Value;

/// The longest pattern accepted, in bytes. Real patterns are a few hundred.
pub const MAX_PATTERN_BYTES: usize = 32 * 1024;
/// The memory one compiled pattern may take (its program, and its lazy DFA's cache).
pub const REGEX_SIZE_LIMIT: usize = 8 << 20;

/// The most pattern text compiled for one document (a scenario, with its groups) or one
/// JSON Schema (a server's tool schema too), all patterns together: each is bounded alone,
/// but a thousand of 900 bytes took 38 s and 1.36 GB to compile, and a server's
/// `outputSchema` holding them 55 s.
pub const MAX_PATTERN_BYTES_TOTAL: usize = 64 * 1024;
/// The most patterns compiled for one document or one JSON Schema (each costs its
/// compilation, however short).
pub const MAX_PATTERNS: usize = 512;

/// What the patterns of one document have spent of [`MAX_PATTERN_BYTES_TOTAL`] and
/// [`MAX_PATTERNS`].
#[derive(Debug, Default)]
pub struct PatternBudget {
    bytes: usize,
    count: usize,
}

impl PatternBudget {
    /// Spend `count` patterns of `bytes` in all. Past the budget: `Err(Some(why))` the first
    /// time (one error for the document), `Err(None)` after (nothing more is compiled).
    pub fn spend(&mut self, count: usize, bytes: usize) -> Result<(), Option<String>> {
        let was_over = self.over().is_some();
        self.bytes = self.bytes.saturating_add(bytes);
        self.count = self.count.saturating_add(count);
        match self.over() {
            None => Ok(()),
            Some(_) if was_over => Err(None),
            Some(why) => Err(Some(why)),
        }
    }

    fn over(&self) -> Option<String> {
        over_budget(self.count, self.bytes, "one file")
    }
}

/// Why `count` patterns of `bytes` in all are more than mcpspec compiles for `whole`.
fn over_budget(count: usize, bytes: usize, whole: &str) -> Option<String> {
    if count > MAX_PATTERNS {
        Some(format!(
            "more than the {MAX_PATTERNS} regular expressions mcpspec compiles for {whole}"
        ))
    } else if bytes > MAX_PATTERN_BYTES_TOTAL {
        Some(format!(
            "more than the {MAX_PATTERN_BYTES_TOTAL} bytes of regular expressions mcpspec compiles for {whole}"
        ))
    } else {
        None
    }
}

/// Why `pattern` is too long to compile, if it is.
pub fn too_long(pattern: &str) -> Option<String> {
    (pattern.len() > MAX_PATTERN_BYTES).then(|| {
        format!(
            "the pattern is {} bytes long, more than the {MAX_PATTERN_BYTES} mcpspec accepts",
            pattern.len()
        )
    })
}

/// `pattern` compiled within the bounds, or why not (short: the parser's last line, not
/// the pattern it repeats).
pub fn regex(pattern: &str) -> Result<Regex, String> {
    if let Some(why) = too_long(pattern) {
        return Err(why);
    }
    RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(limit) => format!(
                "the compiled pattern would take more than the {limit} bytes mcpspec allows"
            ),
            other => {
                let detail = other.to_string();
                let last = detail.lines().last().unwrap_or("").trim();
                crate::ground::redact::excerpt(last.strip_prefix("error: ").unwrap_or(last))
            }
        })
}

/// [`regex`], for a pattern written in a file: the error at its position, quoting an
/// excerpt of the pattern (the parser's own message repeats all of it: megabytes).
pub fn regex_at(
    pattern: &str,
    pos: crate::ground::source::Pos,
) -> Result<Regex, crate::ground::load_error::LoadError> {
    regex(pattern).map_err(|why| {
        crate::ground::load_error::LoadError::at(
            pos,
            format!(
                "invalid regular expression `{}`: {why}",
                crate::ground::redact::excerpt(pattern)
            ),
        )
        .with_help("regular expressions use Rust `regex` syntax")
    })
}

/// Every pattern of a JSON Schema (`pattern` values, `patternProperties` keys), with its
/// path in the schema.
fn schema_patterns(schema: &Value) -> Vec<(String, &str)> {
    fn walk<'v>(v: &'v Value, at: &mut String, found: &mut Vec<(String, &'v str)>) {
        match v {
            Value::Object(map) => {
                for (k, item) in map {
                    let len = at.len();
                    at.push('/');
                    at.push_str(k);
                    if k == "pattern"
                        && let Some(p) = item.as_str()
                    {
                        found.push((at.clone(), p));
                    }
                    if k == "patternProperties"
                        && let Some(obj) = item.as_object()
                    {
                        found.extend(obj.keys().map(|p| (at.clone(), p.as_str())));
                    }
                    walk(item, at, found);
                    at.truncate(len);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let len = at.len();
                    at.push_str(&format!("/{i}"));
                    walk(item, at, found);
                    at.truncate(len);
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    walk(schema, &mut String::new(), &mut found);
    found
}

/// How many patterns a JSON Schema holds, and their bytes in all (what it costs of a
/// [`PatternBudget`]).
pub fn schema_pattern_cost(schema: &Value) -> (usize, usize) {
    let patterns = schema_patterns(schema);
    let bytes = patterns.iter().map(|(_, p)| p.len()).sum();
    (patterns.len(), bytes)
}

/// The first pattern in a JSON Schema (`pattern` values, `patternProperties` keys) that is
/// too long, as (its path in the schema, why).
pub fn schema_pattern_too_long(schema: &Value) -> Option<(String, String)> {
    schema_patterns(schema)
        .into_iter()
        .find_map(|(at, p)| too_long(p).map(|why| (at, why)))
}

/// A validator for `schema` whose patterns are bounded in length (here) and in compiled
/// size and backtracking (jsonschema's default engine, fancy-regex, with its default limits:
/// a 10 MiB program, a 2 MiB lazy DFA, 1,000,000 backtracking steps); the error is cut to
/// an excerpt.
///
/// Built by `jsonschema::validator_for`, which is compiled in the jsonschema crate: the
/// generic builder (`options().build()`) would be instantiated again in mcpspec's, about
/// a seventh of its code generation (BENCHMARKS.md, "Clean release build").
pub fn validator(schema: &Value) -> Result<jsonschema::Validator, String> {
    if let Some((at, why)) = schema_pattern_too_long(schema) {
        return Err(format!("{at}: {why}"));
    }
    let (count, bytes) = schema_pattern_cost(schema);
    if let Some(why) = over_budget(count, bytes, "one schema") {
        return Err(format!(
            "it holds {count} regular expressions of {bytes} bytes in all, {why}"
        ));
    }
    jsonschema::validator_for(schema).map_err(|e| crate::ground::redact::excerpt(&e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::{Duration, Instant};

    #[test]
    fn huge_patterns_are_refused_at_once() {
        let started = Instant::now();
        let dots = ".".repeat(1 << 20);
        assert!(regex(&dots).unwrap_err().contains("1048576 bytes long"));
        let err = validator(&json!({"type": "string", "pattern": dots})).unwrap_err();
        assert!(err.starts_with("/pattern: the pattern is"), "{err}");
        let err =
            validator(&json!({"properties": {"a": {"patternProperties": {dots.clone(): {}}}}}))
                .unwrap_err();
        assert!(err.starts_with("/properties/a/patternProperties:"), "{err}");
        // Short but huge once compiled.
        let err = regex(r"\w{1000}\w{1000}\w{1000}").unwrap_err();
        assert!(err.contains("mcpspec allows"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn many_patterns_are_refused_together() {
        let started = Instant::now();
        let props: serde_json::Map<String, Value> = (0..1000)
            .map(|i| {
                let pattern = format!("^{i}{}", r"\w".repeat(450));
                (
                    format!("p{i}"),
                    json!({"type": "string", "pattern": pattern}),
                )
            })
            .collect();
        let schema = json!({"type": "object", "properties": props});
        assert_eq!(schema_pattern_cost(&schema).0, 1000);
        let err = validator(&schema).unwrap_err();
        assert!(err.contains("mcpspec compiles for one schema"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(10));
        // A document's budget says it once, then refuses quietly.
        let mut budget = PatternBudget::default();
        assert_eq!(budget.spend(1, 1000), Ok(()));
        assert!(budget.spend(MAX_PATTERNS, 1).unwrap_err().is_some());
        assert_eq!(budget.spend(1, 1), Err(None));
        let mut budget = PatternBudget::default();
        assert!(
            budget
                .spend(1, MAX_PATTERN_BYTES_TOTAL + 1)
                .unwrap_err()
                .is_some()
        );
    }

    #[test]
    fn errors_do_not_repeat_the_pattern() {
        let bad = format!("({}", "a".repeat(20_000));
        let err = regex(&bad).unwrap_err();
        assert!(err.len() < 300, "{err}");
        assert!(err.contains("unclosed group"), "{err}");
    }

    #[test]
    fn a_catastrophic_schema_pattern_gives_up_instead_of_hanging() {
        // A back-reference sends the match to fancy-regex's backtracker; `(a|aa)+` over 60
        // `a`s and no `b` would take about 10^12 steps unbounded.
        let v = validator(&json!({"type": "string", "pattern": "^(a|aa)+\\1b"})).unwrap();
        let started = Instant::now();
        let subject = json!("a".repeat(60));
        let errors: Vec<String> = v.iter_errors(&subject).map(|e| e.to_string()).collect();
        assert!(
            errors.len() == 1 && errors[0].contains("backtracking"),
            "{errors:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn ordinary_patterns_compile() {
        assert!(
            regex(r"^\d{4}-\d{2}-\d{2}$")
                .unwrap()
                .is_match("2026-12-02")
        );
        let v = validator(&json!({"type": "string", "pattern": "^(?!x)[a-z]+$"})).unwrap();
        assert!(v.is_valid(&json!("abc")));
        assert!(!v.is_valid(&json!("xabc")));
    }
}
