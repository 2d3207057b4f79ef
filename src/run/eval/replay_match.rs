//! How a replay compares a request with the recorded one, and says where they differ:
//! - a tool list is a set (`tools`, by name): a server that lists the same tools in another
//!   order asks the model the same question;
//! - a recorded string where a key was masked (`***`, see [`super::record::redacted`])
//!   matches any text there: the replay reads no key, so it cannot mask the same way;
//! - a server's tool result that differs only in timestamps and UUIDs is the same answer,
//!   and so is one that differs only where the set's `sanitize` says (golden responses'
//!   sanitizers, applied to each tool result; a `{path}` to a result whose text is JSON);
//! - a difference is shown from its first differing character, not cut before it.

use serde_json::Value;

use crate::ground::redact::MASK;
use crate::language::assert::golden::sanitize;
use crate::language::dsl::scenario::expect::SanitizerSpec;

/// Context kept before the first differing character, and the length of an excerpt.
const BEFORE: usize = 60;
const EXCERPT: usize = 200;

/// The two values are the same request part (see the module).
pub fn same(recorded: &Value, now: &Value) -> bool {
    match (recorded, now) {
        (Value::String(a), Value::String(b)) => a == b || (a.contains(MASK) && masked_match(a, b)),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
        }
        _ => recorded == now,
    }
}

/// Two messages after the set's (the server's tool results, the recorded model turns)
/// are the same when they differ only in timestamps and UUIDs — what a server mints anew
/// on every call (`create_note`'s id) — as golden responses' `timestamps` and `uuids`
/// sanitizers see it, or only where the set's `sanitizers` replace in the tool results.
pub fn same_but_volatile(recorded: &Value, now: &Value, sanitizers: &[SanitizerSpec]) -> bool {
    same(recorded, now) || same(&stable(recorded, sanitizers), &stable(now, sanitizers))
}

/// A message without what varies between runs: its tool results through `sanitizers`,
/// then every timestamp and UUID.
fn stable(message: &Value, sanitizers: &[SanitizerSpec]) -> Value {
    let mut m = message.clone();
    if !sanitizers.is_empty() {
        for text in tool_results(&mut m) {
            if let Value::String(s) = text {
                // A result whose text is JSON is sanitized as JSON (a `{path}` reaches into
                // it), any other as the string it is.
                let parsed = serde_json::from_str::<Value>(s).ok();
                let as_json = parsed.is_some();
                let value = sanitize(
                    parsed.unwrap_or_else(|| Value::String(s.clone())),
                    sanitizers,
                );
                *text = match (as_json, value) {
                    (false, Value::String(plain)) => Value::String(plain),
                    (_, other) => Value::String(other.to_string()),
                };
            }
        }
    }
    crate::language::assert::golden::without_volatile(m)
}

/// The tool results' texts of a message: OpenAI's `role: tool` message `content`,
/// Anthropic's `tool_result` blocks' `content`.
fn tool_results(message: &mut Value) -> Vec<&mut Value> {
    if message.get("role").and_then(Value::as_str) == Some("tool") {
        return message.get_mut("content").into_iter().collect();
    }
    match message.get_mut("content") {
        Some(Value::Array(blocks)) => blocks
            .iter_mut()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            .filter_map(|b| b.get_mut("content"))
            .collect(),
        _ => Vec::new(),
    }
}

/// `tools` of a request body as a set: sorted by name (OpenAI's `function.name`,
/// Anthropic's `name`), so another order compares equal.
pub fn tools_as_set(tools: Option<&Value>) -> Option<Value> {
    let list = tools?.as_array()?;
    let name = |t: &Value| {
        t.pointer("/function/name")
            .or_else(|| t.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let mut sorted = list.clone();
    sorted.sort_by_key(name);
    Some(Value::Array(sorted))
}

/// `recorded`, where each `***` stands for some text, matches `now` whole.
fn masked_match(recorded: &str, now: &str) -> bool {
    let parts: Vec<String> = recorded.split(MASK).map(regex::escape).collect();
    regex::Regex::new(&format!("^(?s:{})$", parts.join(".+?")))
        .map(|re| re.is_match(now))
        .unwrap_or(false)
}

/// The two values as the error shows them: from a little before their first difference.
pub fn excerpts(recorded: Option<&Value>, now: Option<&Value>) -> (String, String) {
    let text = |v: Option<&Value>| v.map_or_else(|| "absent".to_string(), Value::to_string);
    let (a, b) = (text(recorded), text(now));
    let first = a
        .char_indices()
        .zip(b.chars())
        .find(|((_, x), y)| x != y)
        .map(|((i, _), _)| i)
        .unwrap_or_else(|| a.len().min(b.len()));
    let cut = |s: &str| {
        let start = crate::ground::redact::char_floor(s, first.saturating_sub(BEFORE));
        let lead = if start > 0 { "…" } else { "" };
        let shown = crate::ground::redact::shorten(&s[start..], EXCERPT);
        format!("{lead}{shown}")
    };
    (cut(&a), cut(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn masks_match_any_text_and_tools_are_a_set() {
        assert!(same(&json!("the *** of it"), &json!("the weather of it")));
        assert!(!same(
            &json!("the *** of it"),
            &json!("the weather of that")
        ));
        let a = json!([{"name": "a"}, {"name": "b"}]);
        let b = json!([{"name": "b"}, {"name": "a"}]);
        assert!(!same(&a, &b));
        assert_eq!(tools_as_set(Some(&a)), tools_as_set(Some(&b)));
    }

    /// A tool result that differs only at a sanitized path is the same answer (both APIs'
    /// shapes); without the sanitizer, or elsewhere, it differs.
    #[test]
    fn sanitizers_reach_into_tool_results() {
        let path = crate::ground::json::path::CompiledPath::parse("$.temperature").unwrap();
        let s = [SanitizerSpec::Path(path, "<path>".into())];
        let openai = |t: u32| json!({"role": "tool", "tool_call_id": "c1", "content": format!("{{\"temperature\":{t},\"city\":\"Boston\"}}")});
        assert!(same_but_volatile(&openai(21), &openai(23), &s));
        assert!(!same_but_volatile(&openai(21), &openai(23), &[]));
        let anthropic = |t: u32, city: &str| json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": format!("{{\"temperature\":{t},\"city\":\"{city}\"}}"), "is_error": false}]});
        assert!(same_but_volatile(
            &anthropic(21, "Boston"),
            &anthropic(23, "Boston"),
            &s
        ));
        assert!(!same_but_volatile(
            &anthropic(21, "Boston"),
            &anthropic(21, "Paris"),
            &s
        ));
        // Not a tool result: untouched.
        let user = |t: u32| json!({"role": "user", "content": format!("{{\"temperature\":{t}}}")});
        assert!(!same_but_volatile(&user(21), &user(23), &s));
    }

    #[test]
    fn the_excerpt_starts_near_the_first_difference() {
        let long = "x".repeat(500);
        let (a, b) = excerpts(
            Some(&json!(format!("{long} sunny"))),
            Some(&json!(format!("{long} rainy"))),
        );
        assert!(a.starts_with('…') && a.contains("sunny"), "{a}");
        assert!(b.contains("rainy"), "{b}");
    }
}
