//! The deterministic "model": which tool a task calls, with which arguments, and the final
//! answer. Real in effect — it reads only what a model would (the task text and the tool
//! descriptions it is sent), so editing a description on the MCP server changes its choice.
//!
//! Rules (documented in docs/src/eval.md):
//! - words: lower-case runs of letters/digits, 3+ characters, minus a few stop words;
//! - a tool's score is how many distinct task words occur in its description; the best score
//!   of at least [`THRESHOLD`] wins, ties go to the description with fewer distinct words
//!   (the more specific one), then to the first listed; no such tool → a plain text answer;
//! - arguments: each property of the input schema, in order — numbers take the task's
//!   numbers in order, strings a quoted phrase, else a capitalized word that does not start
//!   the task, else the whole task;
//! - once a tool result is in the conversation, the answer is final text quoting it.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

/// Fewest shared words for a tool to be picked.
pub const THRESHOLD: usize = 2;

const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "with", "what", "which", "that", "this", "from", "into", "please", "tell",
    "give", "are", "you", "your", "our", "its", "then", "them", "their", "about", "one", "how",
    "can", "could", "would", "should", "will", "all", "any", "out", "now", "use", "using",
];

/// A tool as the model was sent it (either API's shape, mapped by the caller).
pub struct Tool {
    pub name: String,
    pub description: String,
    pub schema: Value,
}

/// What the model says next.
pub enum Reply {
    Text(String),
    /// `arguments` is the JSON text (kept as text so a fault can make it malformed).
    Call {
        name: String,
        arguments: String,
    },
}

fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .collect()
}

/// The tool the task asks for, if any clears the threshold.
pub fn pick<'a>(task: &str, tools: &'a [Tool]) -> Option<&'a Tool> {
    let task_words = words(task);
    let mut best: Option<(usize, usize, &Tool)> = None;
    for tool in tools {
        let desc = words(&tool.description);
        let score = task_words.intersection(&desc).count();
        if score < THRESHOLD {
            continue;
        }
        let better = match best {
            None => true,
            Some((s, len, _)) => score > s || (score == s && desc.len() < len),
        };
        if better {
            best = Some((score, desc.len(), tool));
        }
    }
    best.map(|(_, _, t)| t)
}

/// Arguments for `tool` filled from the task text. A `sloppy` model (a model named
/// `sloppy…`) picks the same tools but fills every free-text argument with the whole task:
/// a weaker model, for comparing two models on one server.
pub fn arguments(task: &str, tool: &Tool, sloppy: bool) -> Value {
    let mut numbers = task
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .filter_map(|w| w.trim_matches('.').parse::<f64>().ok())
        .collect::<Vec<_>>()
        .into_iter();
    let quoted = quoted(task);
    let capitalized = task
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .skip(1)
        .find(|w| w.chars().next().is_some_and(char::is_uppercase))
        .map(str::to_string);
    let mut args = Map::new();
    let props = tool
        .schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let required: Vec<&str> = tool
        .schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, prop) in &props {
        let kind = prop.get("type").and_then(Value::as_str).unwrap_or("string");
        let value = match kind {
            "number" => numbers.next().map(|n| json!(n)),
            "integer" => numbers.next().map(|n| json!(n as i64)),
            "string" => {
                if let Some(allowed) = prop.get("enum").and_then(Value::as_array) {
                    // An enum value named in the task, else none.
                    let lower = task.to_lowercase();
                    allowed
                        .iter()
                        .filter_map(Value::as_str)
                        .find(|v| lower.contains(&v.to_lowercase()))
                        .map(|v| json!(v))
                } else if sloppy {
                    Some(json!(task))
                } else {
                    Some(json!(
                        quoted
                            .clone()
                            .or_else(|| capitalized.clone())
                            .unwrap_or_else(|| task.to_string())
                    ))
                }
            }
            _ => None,
        };
        match value {
            Some(v) => {
                args.insert(name.clone(), v);
            }
            None if required.contains(&name.as_str()) => {
                let fallback = if matches!(kind, "number" | "integer") {
                    json!(0)
                } else {
                    json!(task)
                };
                args.insert(name.clone(), fallback);
            }
            None => {}
        }
    }
    Value::Object(args)
}

fn quoted(task: &str) -> Option<String> {
    for q in ['"', '\''] {
        let mut parts = task.split(q);
        parts.next();
        if let (Some(inner), Some(_)) = (parts.next(), parts.next())
            && !inner.trim().is_empty()
        {
            return Some(inner.to_string());
        }
    }
    None
}

/// The next reply for a conversation: `task` is the last user turn's text, `results` the tool
/// results so far (text), `last_call` the last tool called (for the endless-loop fault).
pub fn reply(task: &str, tools: &[Tool], results: &[String], sloppy: bool) -> Reply {
    if let Some(last) = results.last() {
        return Reply::Text(format!("Here is what I found: {last}"));
    }
    match pick(task, tools) {
        Some(tool) => Reply::Call {
            name: tool.name.clone(),
            arguments: arguments(task, tool, sloppy).to_string(),
        },
        None => Reply::Text(format!("I can answer that directly: {task}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, description: &str) -> Tool {
        Tool {
            name: name.into(),
            description: description.into(),
            schema: json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
        }
    }

    #[test]
    fn picks_by_description_words() {
        let tools = [
            tool("echo", "Return the given text unchanged."),
            tool(
                "get_weather",
                "Get the current weather for a city (deterministic fake data).",
            ),
        ];
        let t = pick("What is the current weather in Boston?", &tools).expect("a tool");
        assert_eq!(t.name, "get_weather");
        assert_eq!(
            arguments("What is the current weather in Boston?", t, false)["city"],
            "Boston"
        );
        assert!(pick("Write a haiku about autumn", &tools).is_none());
        // A more specific description with the same score wins.
        let tools = [
            tools[1].clone_tool(),
            tool("echo", "Current weather, as given text."),
        ];
        assert_eq!(
            pick("the current weather in Oslo", &tools).unwrap().name,
            "echo"
        );
    }

    impl Tool {
        fn clone_tool(&self) -> Tool {
            Tool {
                name: self.name.clone(),
                description: self.description.clone(),
                schema: self.schema.clone(),
            }
        }
    }

    #[test]
    fn numbers_fill_in_order() {
        let t = Tool {
            name: "add".into(),
            description: String::new(),
            schema: json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}),
        };
        assert_eq!(
            arguments("add 2 and 3.5", &t, false),
            json!({"a": 2.0, "b": 3.5})
        );
    }
}
