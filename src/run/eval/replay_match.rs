//! How a replay compares a request with the recorded one, and says where they differ:
//! - a tool list is a set (`tools`, by name): a server that lists the same tools in another
//!   order asks the model the same question;
//! - a recorded string where a key was masked (`***`, see [`super::record::redacted`])
//!   matches any text there: the replay reads no key, so it cannot mask the same way;
//! - a server's tool result that differs only in timestamps and UUIDs is the same answer;
//! - a difference is shown from its first differing character, not cut before it.

use serde_json::Value;

use crate::ground::redact::MASK;

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
/// sanitizers see it.
pub fn same_but_volatile(recorded: &Value, now: &Value) -> bool {
    same(recorded, now) || {
        use crate::language::assert::golden::without_volatile;
        same(
            &without_volatile(recorded.clone()),
            &without_volatile(now.clone()),
        )
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
        let mut start = first.saturating_sub(BEFORE).min(s.len());
        while !s.is_char_boundary(start) {
            start -= 1;
        }
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
