//! Compiled JSONPath queries (RFC 9535, by `serde_json_path`), shared rather than copied,
//! with a direct walk for the paths scenarios write most (`$.content[0].text`,
//! `$['a-b'].c`): member names and array indexes only, evaluated without allocating.

use std::sync::Arc;

use serde_json::Value;
use serde_json_path::JsonPath;

/// A parsed JSONPath. Clones share the parse.
#[derive(Debug, Clone)]
pub struct CompiledPath(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    path: JsonPath,
    /// Set when the path is `$` followed by name and index selectors only.
    walk: Option<Box<[PathStep]>>,
}

#[derive(Debug, PartialEq)]
enum PathStep {
    Name(String),
    Index(i64),
}

/// The nodes a query selected, in document order.
pub enum Matches<'a> {
    One(&'a Value),
    Many(Vec<&'a Value>),
}

impl<'a> Matches<'a> {
    pub fn as_slice(&self) -> &[&'a Value] {
        match self {
            Matches::One(v) => std::slice::from_ref(v),
            Matches::Many(v) => v,
        }
    }

    pub fn first(&self) -> Option<&'a Value> {
        self.as_slice().first().copied()
    }
}

/// Deepest nesting of brackets and parentheses in a path: the parser recurses once per
/// level, and a few thousand `(` overflowed the stack. Real paths nest two or three deep.
pub const MAX_NESTING: usize = 64;
/// Deepest nesting of filters (`[?…]`) inside filters: the parser's time grows about
/// twofold per level (12 levels took a third of a second, 20 would take minutes).
pub const MAX_FILTER_NESTING: usize = 8;

impl CompiledPath {
    pub fn parse(src: &str) -> Result<Self, String> {
        let (depth, filters) = nesting(src);
        if depth > MAX_NESTING {
            return Err(format!(
                "brackets and parentheses nest deeper than {MAX_NESTING} levels"
            ));
        }
        if filters > MAX_FILTER_NESTING {
            return Err(format!(
                "filters (`[?…]`) nest deeper than {MAX_FILTER_NESTING} levels"
            ));
        }
        if !src.starts_with('$') {
            // The parser says only "parser error at position 0".
            let fixed = match src.chars().next() {
                Some('.' | '[') => format!("${src}"),
                _ => format!("$.{src}"),
            };
            return Err(format!(
                "a JSONPath starts with `$` (the document's root): did you mean `{fixed}`?"
            ));
        }
        let path = JsonPath::parse(src).map_err(|e| e.to_string())?;
        Ok(CompiledPath(Arc::new(Inner {
            path,
            walk: simple_steps(src).map(Vec::into_boxed_slice),
        })))
    }

    /// The JSON Pointers of the matches (to replace them in place: snapshot sanitizers).
    pub fn pointers(&self, doc: &Value) -> Vec<String> {
        self.0
            .path
            .query_located(doc)
            .locations()
            .map(|l| l.to_json_pointer())
            .collect()
    }

    pub fn query<'a>(&self, doc: &'a Value) -> Matches<'a> {
        match &self.0.walk {
            Some(steps) => match walk(doc, steps) {
                Some(v) => Matches::One(v),
                None => Matches::Many(Vec::new()),
            },
            None => Matches::Many(self.0.path.query(doc).all()),
        }
    }
}

fn walk<'a>(mut node: &'a Value, steps: &[PathStep]) -> Option<&'a Value> {
    for step in steps {
        node = match (step, node) {
            (PathStep::Name(name), Value::Object(map)) => map.get(name)?,
            (PathStep::Index(i), Value::Array(items)) => {
                let at = if *i < 0 {
                    items.len().checked_sub(i.unsigned_abs() as usize)?
                } else {
                    *i as usize
                };
                items.get(at)?
            }
            _ => return None,
        };
    }
    Some(node)
}

/// The steps of `$` followed by `.name`, `['name']`/`["name"]` (no escapes) and `[n]`
/// selectors; `None` for anything else, which the library evaluates.
fn simple_steps(src: &str) -> Option<Vec<PathStep>> {
    let rest = src.strip_prefix('$')?;
    let bytes = rest.as_bytes();
    let mut steps = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'.' => {
                let start = i + 1;
                let mut end = start;
                while end < bytes.len() && is_name_char(bytes[end], end == start) {
                    end += 1;
                }
                if end == start {
                    return None;
                }
                steps.push(PathStep::Name(rest[start..end].to_string()));
                i = end;
            }
            b'[' => {
                let close = i + rest[i..].find(']')?;
                let inner = &rest[i + 1..close];
                let step = match inner.as_bytes().first()? {
                    q @ (b'\'' | b'"') => {
                        let name = inner.strip_prefix(*q as char)?.strip_suffix(*q as char)?;
                        if name.contains(['\\', '\'', '"']) || name.chars().any(char::is_control) {
                            return None;
                        }
                        PathStep::Name(name.to_string())
                    }
                    _ => PathStep::Index(index(inner)?),
                };
                steps.push(step);
                i = close + 1;
            }
            _ => return None,
        }
    }
    Some(steps)
}

/// The deepest nesting of `[` and `(` outside string literals, and of filter selectors
/// (`[` then `?`) among them: upper bounds of the parser's recursion (unbalanced input only
/// makes them larger).
fn nesting(src: &str) -> (usize, usize) {
    let (mut max, mut quote, mut escaped) = (0, None, false);
    let (mut filters, mut max_filters) = (0, 0);
    // Open brackets and parentheses; `true` for a filter selector.
    let mut open: Vec<bool> = Vec::new();
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => quote = Some(c),
                '[' | '(' => {
                    while chars.next_if(|c| c.is_whitespace()).is_some() {}
                    let filter = c == '[' && chars.peek() == Some(&'?');
                    open.push(filter);
                    filters += usize::from(filter);
                    max = max.max(open.len());
                    max_filters = max_filters.max(filters);
                }
                ']' | ')' => filters -= usize::from(open.pop() == Some(true)),
                _ => {}
            },
        }
    }
    (max, max_filters)
}

/// RFC 9535 member-name-shorthand: ALPHA / "_" / non-ASCII, then also DIGIT.
fn is_name_char(b: u8, first: bool) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80 || (!first && b.is_ascii_digit())
}

/// An RFC 9535 index: `0` or an optionally negative integer without leading zeros, within
/// the I-JSON range.
fn index(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let leading_zero = digits.len() > 1 && digits.starts_with('0');
    if digits.is_empty() || leading_zero || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if text == "-0" {
        return None;
    }
    let n: i64 = text.parse().ok()?;
    (n.unsigned_abs() < (1 << 53)).then_some(n)
}

/// A string as an RFC 9535 single-quoted string literal (`'it\'s'`).
pub fn string_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// The JSONPath of member `key` of the node at `path`: `$.a.b`, or `$['odd key']` for a key
/// that is not a plain name.
pub fn child(path: &str, key: &str) -> String {
    let plain = key
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        format!("{path}.{key}")
    } else {
        format!("{path}[{}]", string_literal(key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The direct walk and the library agree on every path it takes, over documents where
    /// each step can miss (wrong type, absent member, index out of range, negative index).
    #[test]
    fn walk_agrees_with_the_library() {
        let docs = [
            json!({"content": [{"type": "text", "text": "hi"}, {"text": 2}], "a-b": {"c": null},
                   "é": 1, "_x1": [[1, 2], [3]], "isError": false}),
            json!({"content": {"0": "not an array"}}),
            json!([1, 2, 3]),
            json!("scalar"),
            json!(null),
        ];
        let paths = [
            "$",
            "$.content",
            "$.content[0].text",
            "$.content[1].text",
            "$.content[2].text",
            "$.content[-1].text",
            "$.content[-2]",
            "$.content[-3]",
            "$['a-b'].c",
            "$[\"a-b\"]['c']",
            "$.é",
            "$._x1[0][1]",
            "$._x1[1][-1]",
            "$[0]",
            "$[-1]",
            "$[3]",
            "$.isError",
            "$.missing.deeper",
        ];
        for p in paths {
            let compiled = CompiledPath::parse(p).expect(p);
            assert!(compiled.0.walk.is_some(), "{p} takes the direct walk");
            let library = JsonPath::parse(p).unwrap();
            for doc in &docs {
                assert_eq!(
                    compiled.query(doc).as_slice(),
                    library.query(doc).all().as_slice(),
                    "{p} on {doc}"
                );
            }
        }
    }

    #[test]
    fn other_paths_go_to_the_library() {
        for p in [
            "$.content[*].text",
            "$..text",
            "$.content[0:1]",
            "$.content[?@.type == 'text']",
            "$['a','b']",
            "$['it\\'s']",
            "$[01]",
            "$.content[0, 1]",
            "$[ 0 ]",
        ] {
            if let Ok(compiled) = CompiledPath::parse(p) {
                assert!(compiled.0.walk.is_none(), "{p}");
            }
        }
        let doc = json!({"content": [{"text": "a"}, {"text": "b"}]});
        let texts = CompiledPath::parse("$.content[*].text").unwrap();
        assert_eq!(texts.query(&doc).as_slice(), [&json!("a"), &json!("b")]);
    }

    #[test]
    fn deep_nesting_is_refused_before_parsing() {
        let ok = format!("$[?{}@.a{}]", "(".repeat(10), ")".repeat(10));
        assert!(CompiledPath::parse(&ok).is_ok(), "{ok}");
        // Would overflow the parser's stack (a debug build's main thread, 8 MB).
        let deep = format!("$[?{}@.a{}]", "(".repeat(4000), ")".repeat(4000));
        let err = CompiledPath::parse(&deep).map(|_| ()).unwrap_err();
        assert!(err.contains("deeper than 64"), "{err}");
        // Brackets inside string literals do not count.
        let quoted = format!("$['{}']", "(".repeat(100));
        assert!(CompiledPath::parse(&quoted).is_ok());
        // Filters inside filters: parsing time doubles per level.
        let filters = |n: usize| format!("$.a{}{}", "[?@.b".repeat(n), "]".repeat(n));
        assert!(CompiledPath::parse(&filters(8)).is_ok());
        let err = CompiledPath::parse(&filters(9)).map(|_| ()).unwrap_err();
        assert!(err.contains("filters (`[?…]`) nest deeper than 8"), "{err}");
        let spaced = format!("$.a{}{}", "[ ?@.b".repeat(9), "]".repeat(9));
        assert!(CompiledPath::parse(&spaced).is_err());
    }

    #[test]
    fn index_grammar() {
        assert_eq!(index("0"), Some(0));
        assert_eq!(index("-1"), Some(-1));
        assert_eq!(index("12"), Some(12));
        for bad in ["", "-", "-0", "007", "1.0", "+1", " 1", "9007199254740992"] {
            assert_eq!(index(bad), None, "{bad}");
        }
    }
}
