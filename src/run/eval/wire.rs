//! The API-neutral conversation ([`super::conversation`]) in each model API's wire shape
//! and back: the request body of OpenAI-compatible Chat Completions or Anthropic Messages,
//! and a successful reply of either as a [`Turn`] (`/work/shared/spec/llm-apis-crib.md`).

use serde_json::{Value, json};

use super::conversation::{Call, Msg, ToolSpec, Turn};
use super::profile::Profile;
use super::results::ModelApi;

/// The request body for this conversation in `p`'s API's shape.
pub fn body(p: &Profile, system: Option<&str>, msgs: &[Msg], tools: &[ToolSpec]) -> Value {
    match p.api {
        ModelApi::Openai => {
            let mut messages = Vec::new();
            if let Some(s) = system {
                messages.push(json!({"role": "system", "content": s}));
            }
            for m in msgs {
                match m {
                    Msg::User(t) => messages.push(json!({"role": "user", "content": t})),
                    Msg::Assistant { text, calls } => {
                        let mut a = json!({"role": "assistant", "content": text});
                        if !calls.is_empty() {
                            a["tool_calls"] = calls
                                .iter()
                                .map(|c| {
                                    json!({"id": c.id, "type": "function", "function": {
                                        "name": c.name, "arguments": raw_arguments(c)}})
                                })
                                .collect();
                        }
                        messages.push(a);
                    }
                    Msg::ToolResults(results) => {
                        for (id, text, _) in results {
                            messages
                                .push(json!({"role": "tool", "tool_call_id": id, "content": text}));
                        }
                    }
                }
            }
            let mut body = json!({
                "model": p.model,
                "messages": messages,
                "max_completion_tokens": p.max_tokens,
                "stream": false,
            });
            if !tools.is_empty() {
                body["tools"] = tools
                    .iter()
                    .map(|t| {
                        json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.schema}})
                    })
                    .collect();
                body["tool_choice"] = json!("auto");
            }
            if let Some(t) = p.temperature {
                body["temperature"] = json!(t);
            }
            if let Some(s) = p.seed {
                body["seed"] = json!(s);
            }
            body
        }
        ModelApi::Anthropic => {
            let mut messages = Vec::new();
            for m in msgs {
                match m {
                    Msg::User(t) => messages.push(json!({"role": "user", "content": t})),
                    Msg::Assistant { text, calls } => {
                        let mut blocks = Vec::new();
                        if let Some(t) = text.as_ref().filter(|t| !t.is_empty()) {
                            blocks.push(json!({"type": "text", "text": t}));
                        }
                        for c in calls {
                            let input = match &c.arguments {
                                Ok(v) => v.clone(),
                                Err((raw, _)) => json!(raw),
                            };
                            blocks.push(json!({"type": "tool_use", "id": c.id,
                                "name": c.name, "input": input}));
                        }
                        messages.push(json!({"role": "assistant", "content": blocks}));
                    }
                    Msg::ToolResults(results) => {
                        let blocks: Vec<Value> = results
                            .iter()
                            .map(|(id, text, err)| {
                                json!({"type": "tool_result",
                                "tool_use_id": id, "content": text, "is_error": err})
                            })
                            .collect();
                        messages.push(json!({"role": "user", "content": blocks}));
                    }
                }
            }
            let mut body = json!({
                "model": p.model,
                "max_tokens": p.max_tokens,
                "messages": messages,
            });
            if let Some(s) = system {
                body["system"] = json!(s);
            }
            if !tools.is_empty() {
                body["tools"] = tools
                    .iter()
                    .map(|t| {
                        json!({"name": t.name, "description": t.description,
                        "input_schema": t.schema})
                    })
                    .collect();
                body["tool_choice"] = json!({"type": "auto"});
            }
            if let Some(t) = p.temperature {
                body["temperature"] = json!(t);
            }
            // The Messages API has no seed: it is recorded in the results only.
            body
        }
    }
}

/// The arguments as the model sent them (OpenAI carries a string).
fn raw_arguments(c: &Call) -> String {
    match &c.arguments {
        Ok(v) => v.to_string(),
        Err((raw, _)) => raw.clone(),
    }
}

fn parse_arguments(raw: Value) -> Result<Value, (String, String)> {
    match raw {
        Value::String(s) => match serde_json::from_str::<Value>(&s) {
            Ok(v @ Value::Object(_)) => Ok(v),
            Ok(other) => Err((
                s,
                format!("arguments are {}, not a JSON object", kind(&other)),
            )),
            Err(e) => Err((s, format!("arguments are not valid JSON: {e}"))),
        },
        v @ Value::Object(_) => Ok(v),
        Value::Null => Ok(json!({})),
        other => {
            let k = kind(&other);
            Err((
                other.to_string(),
                format!("arguments are {k}, not a JSON object"),
            ))
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A successful reply of either API.
pub fn parse_reply(api: ModelApi, v: &Value) -> Result<Turn, String> {
    match api {
        ModelApi::Openai => {
            let message = v
                .pointer("/choices/0/message")
                .ok_or("the reply has no choices[0].message")?;
            let text = message
                .get("content")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(String::from);
            let calls = message
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
                .map(|(i, c)| Call {
                    id: c
                        .get("id")
                        .and_then(Value::as_str)
                        .map_or_else(|| format!("call_{i}"), String::from),
                    name: c
                        .pointer("/function/name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    arguments: parse_arguments(
                        c.pointer("/function/arguments")
                            .cloned()
                            .unwrap_or(Value::Null),
                    ),
                })
                .collect();
            Ok(Turn {
                text,
                calls,
                input_tokens: usage(v, "/usage/prompt_tokens"),
                output_tokens: usage(v, "/usage/completion_tokens"),
                retries: 0,
                estimated: no_usage(v, "/usage/prompt_tokens", "/usage/completion_tokens"),
            })
        }
        ModelApi::Anthropic => {
            let blocks = v
                .get("content")
                .and_then(Value::as_array)
                .ok_or("the reply has no content[]")?;
            let texts: Vec<&str> = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            let calls = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                .enumerate()
                .map(|(i, b)| Call {
                    id: b
                        .get("id")
                        .and_then(Value::as_str)
                        .map_or_else(|| format!("toolu_{i}"), String::from),
                    name: b
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    arguments: parse_arguments(b.get("input").cloned().unwrap_or(Value::Null)),
                })
                .collect();
            Ok(Turn {
                text: (!texts.is_empty()).then(|| texts.join("\n")),
                calls,
                input_tokens: usage(v, "/usage/input_tokens"),
                output_tokens: usage(v, "/usage/output_tokens"),
                retries: 0,
                estimated: no_usage(v, "/usage/input_tokens", "/usage/output_tokens"),
            })
        }
    }
}

/// The reply reports neither token count: they must be estimated.
fn no_usage(v: &Value, input: &str, output: &str) -> bool {
    v.pointer(input).and_then(Value::as_u64).is_none()
        && v.pointer(output).and_then(Value::as_u64).is_none()
}

fn usage(v: &Value, pointer: &str) -> u64 {
    v.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_arguments_are_kept_with_the_reason() {
        let reply = json!({"choices": [{"message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\": "}}]}}]});
        let turn = parse_reply(ModelApi::Openai, &reply).expect("parses");
        let (raw, why) = turn.calls[0].arguments.clone().expect_err("malformed");
        assert_eq!(raw, "{\"city\": ");
        assert!(why.contains("not valid JSON"), "{why}");
        let reply = json!({"content": [{"type": "tool_use", "id": "t", "name": "x", "input": "{oops"}],
            "usage": {"input_tokens": 3, "output_tokens": 4}});
        let turn = parse_reply(ModelApi::Anthropic, &reply).expect("parses");
        assert!(turn.calls[0].arguments.is_err());
        assert_eq!((turn.input_tokens, turn.output_tokens), (3, 4));
    }

    #[test]
    fn arguments_of_another_json_type_say_which() {
        let (_, why) = parse_arguments(json!("[1, 2]")).expect_err("an array");
        assert_eq!(why, "arguments are an array, not a JSON object");
        let (_, why) = parse_arguments(json!(7)).expect_err("a number");
        assert_eq!(why, "arguments are a number, not a JSON object");
    }
}
