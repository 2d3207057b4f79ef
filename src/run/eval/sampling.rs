//! Sampling answered by a real model: a scenario's `sampling:` answer `profile: NAME` sends
//! the server's `sampling/createMessage` through the eval model client of that profile (the
//! run's `--models FILE`: its `models:`, as in an eval set, keys from the environment), and the reply becomes the `CreateMessageResult`.
//! The answers are recorded or replayed (`--record-models`, `--replay-models`: see
//! [`super::sampling_tape`]), counted per profile (tokens, estimated cost) and capped by
//! `--max-cost`.

use std::path::Path;
use std::pin::Pin;
use std::time::Duration;

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::{Value, json};

use super::conversation::{Call, Msg, ToolSpec, tool_spec};
use super::llm::ModelClient;
use super::profile::Profile;
use super::results::ModelApi;
use super::sampling_tape::SamplingTape;
use super::set::doc::ProfileDoc;
use crate::ground::load_error::{LoadErrors, read_source};
use crate::ground::yaml;
use crate::ground::yaml::value::At;
use crate::results::report::result::ModelUsage;

/// `models:` of any YAML file (an eval set, or a file with only `models:`); the rest is not read.
#[derive(Deserialize)]
struct ModelsDoc {
    #[serde(default)]
    models: IndexMap<String, At<ProfileDoc>>,
}

/// The model profiles of `path`, checked as an eval set's.
pub fn load_profiles(path: &Path) -> Result<IndexMap<String, Profile>, LoadErrors> {
    let file = read_source(path)?;
    let doc: ModelsDoc = yaml::parse(&file)?;
    let mut errors = LoadErrors::default();
    let profiles = doc
        .models
        .into_iter()
        .map(|(name, p)| {
            let profile = super::profile::compile(&file, name.clone(), p.value, &mut errors);
            (name, profile)
        })
        .collect();
    if errors.is_empty() {
        Ok(profiles)
    } else {
        Err(errors)
    }
}

/// How `mcpspec run` asks its models: `--record-models`, `--replay-models`, `--max-cost`.
#[derive(Debug, Default, Clone)]
pub struct SamplerOptions {
    pub record: Option<std::path::PathBuf>,
    pub replay: Option<std::path::PathBuf>,
    pub max_cost: Option<f64>,
}

/// The run's model clients, one per profile (or why it cannot answer: its key is missing),
/// the tape they play on, and what each has answered.
pub struct ProfileSampler {
    clients: IndexMap<String, Result<ModelClient, String>>,
    tape: Option<SamplingTape>,
    /// `--max-cost` (not when replaying): a profile without `price` is not asked under it.
    capped: bool,
    /// Per profile: answers, input and output tokens (in the order first answered).
    usage: std::sync::Mutex<IndexMap<String, (u64, u64, u64)>>,
}

impl ProfileSampler {
    /// Clients for `profiles`, their keys read from the environment (and redacted
    /// everywhere); a replay reads no key. `Err`: the options cannot be served.
    pub fn new(
        profiles: IndexMap<String, Profile>,
        options: &SamplerOptions,
    ) -> Result<ProfileSampler, String> {
        let tape = match (&options.replay, &options.record) {
            (Some(file), _) => Some(SamplingTape::replay(file)?),
            (None, Some(file)) => Some(SamplingTape::record(file)?),
            (None, None) => None,
        };
        let replaying = options.replay.is_some();
        let mut clients: IndexMap<String, Result<ModelClient, String>> = IndexMap::new();
        // One budget for the run: every profile's spend counts against `--max-cost`.
        let mut first: Option<usize> = None;
        for (name, profile) in profiles {
            let key = if replaying {
                Ok(None)
            } else {
                super::profile::key_from_env(&profile).map_err(|why| format!("the {why}"))
            };
            let client = key.and_then(|key| ModelClient::new(profile, key));
            let client = client.map(|c| {
                let shared = first
                    .and_then(|i| clients.get_index(i))
                    .and_then(|(_, c)| c.as_ref().ok());
                match shared {
                    Some(other) => c.sharing_budget_of(other),
                    None => c.with_max_cost(options.max_cost.filter(|_| !replaying)),
                }
            });
            if client.is_ok() && first.is_none() {
                first = Some(clients.len());
            }
            clients.insert(name, client);
        }
        Ok(ProfileSampler {
            clients,
            tape,
            capped: options.max_cost.is_some() && !replaying,
            usage: std::sync::Mutex::default(),
        })
    }

    /// Per profile that answered: its answers, tokens and estimated cost.
    pub fn usage(&self) -> Vec<ModelUsage> {
        let usage = self.usage.lock().unwrap_or_else(|e| e.into_inner());
        usage
            .iter()
            .map(|(name, &(requests, input_tokens, output_tokens))| {
                let price = self
                    .clients
                    .get(name)
                    .and_then(|c| c.as_ref().ok())
                    .and_then(|c| c.profile().price);
                ModelUsage {
                    profile: name.clone(),
                    requests,
                    input_tokens,
                    output_tokens,
                    cost_usd: price.map(|p| p.cost(input_tokens, output_tokens)),
                }
            })
            .collect()
    }

    /// After the run: a recorder writes its file; `Some(line)` says where.
    pub fn finish(&self) -> Result<Option<String>, String> {
        self.tape.as_ref().map_or(Ok(None), SamplingTape::finish)
    }

    async fn answer(&self, name: &str, request: &Value) -> Result<Value, String> {
        let client = match self.clients.get(name) {
            None => {
                let known: Vec<&str> = self.clients.keys().map(String::as_str).collect();
                return Err(format!(
                    "the sampling answer names the model profile `{name}`, which `--models` does not declare (it declares: {})",
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ));
            }
            Some(Err(why)) => return Err(why.clone()),
            Some(Ok(c)) => c,
        };
        if self.capped && client.profile().price.is_none() {
            return Err(format!(
                "--max-cost needs the model's prices: add `price: {{input: USD, output: USD}}` (per million tokens) to profile `{name}`"
            ));
        }
        let failed = |why: String| {
            format!("the model profile `{name}` could not answer the sampling request: {why}")
        };
        let params = request.get("params").cloned().unwrap_or(Value::Null);
        let (system, msgs, tools) = conversation(&params);
        let body = request_body(client, &params, system.as_deref(), &msgs, &tools);
        let (reply, turn) = match self.tape.as_ref().and_then(|t| t.replayed(name, &body)) {
            Some(recorded) => {
                let reply = recorded?;
                // Nothing was sent: the recorded tokens count, no request is made.
                let turn = client
                    .accept(&body, &reply, 0)
                    .map_err(|e| failed(e.to_string()))?;
                (reply, turn)
            }
            None => {
                let (reply, turn) = client
                    .reply(&body)
                    .await
                    .map_err(|e| failed(e.to_string()))?;
                if let Some(tape) = &self.tape {
                    tape.store(name, &body, &reply);
                }
                (reply, turn)
            }
        };
        {
            let mut usage = self.usage.lock().unwrap_or_else(|e| e.into_inner());
            let u = usage.entry(name.to_string()).or_default();
            u.0 += 1;
            u.1 += turn.input_tokens;
            u.2 += turn.output_tokens;
        }
        let api = client.profile().api;
        let mut blocks: Vec<Value> = turn
            .text
            .iter()
            .map(|t| json!({"type": "text", "text": t}))
            .collect();
        for call in &turn.calls {
            let input = call.arguments.clone().map_err(|(raw, why)| {
                failed(format!(
                    "its call of `{}` has arguments that are not a JSON object ({why}): {raw}",
                    call.name
                ))
            })?;
            blocks.push(
                json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}),
            );
        }
        let content = match blocks.len() {
            0 => json!({"type": "text", "text": ""}),
            1 if turn.calls.is_empty() => blocks.remove(0),
            _ => Value::Array(blocks),
        };
        let model = reply
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or(&client.profile().model)
            .to_string();
        let stop_reason = if turn.calls.is_empty() {
            stop_reason(api, &reply)
        } else {
            "toolUse".to_string()
        };
        Ok(
            json!({"role": "assistant", "content": content, "model": model, "stopReason": stop_reason}),
        )
    }
}

impl crate::run::client::answers::Sampler for ProfileSampler {
    fn sample<'a>(
        &'a self,
        profile: &'a str,
        request: &'a Value,
        _timeout: Duration,
    ) -> Pin<Box<dyn Future<Output = Result<Value, String>> + Send + 'a>> {
        Box::pin(self.answer(profile, request))
    }
}

/// The text of a sampling content (one block or a list); images and audio are named, not sent.
fn text_of(content: &Value) -> String {
    let blocks = match content {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    blocks
        .iter()
        .filter_map(|b| match b.get("type").and_then(Value::as_str) {
            Some("text") => b.get("text").and_then(Value::as_str).map(String::from),
            Some(kind @ ("image" | "audio")) => Some(format!("[{kind} omitted]")),
            Some("tool_result") => b.get("content").map(text_of),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn blocks_of(content: &Value) -> Vec<&Value> {
    match content {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    }
}

/// The server's request as the API-neutral conversation: system prompt, messages, tools.
fn conversation(params: &Value) -> (Option<String>, Vec<Msg>, Vec<ToolSpec>) {
    let system = params
        .get("systemPrompt")
        .and_then(Value::as_str)
        .map(String::from);
    let mut msgs = Vec::new();
    for m in params
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let content = m.get("content").unwrap_or(&Value::Null);
        let blocks = blocks_of(content);
        let kind = |b: &&Value| b.get("type").and_then(Value::as_str).map(String::from);
        if m.get("role").and_then(Value::as_str) == Some("assistant") {
            let calls = blocks
                .iter()
                .filter(|b| kind(b).as_deref() == Some("tool_use"))
                .map(|b| Call {
                    id: b
                        .get("id")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    name: b
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    arguments: Ok(b.get("input").cloned().unwrap_or_else(|| json!({}))),
                })
                .collect();
            let text = text_of(content);
            msgs.push(Msg::Assistant {
                text: (!text.is_empty()).then_some(text),
                calls,
            });
        } else if blocks
            .iter()
            .any(|b| kind(b).as_deref() == Some("tool_result"))
        {
            let results = blocks
                .iter()
                .filter(|b| kind(b).as_deref() == Some("tool_result"))
                .map(|b| {
                    (
                        b.get("toolUseId")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        b.get("content").map(text_of).unwrap_or_default(),
                        b.get("isError").and_then(Value::as_bool).unwrap_or(false),
                    )
                })
                .collect();
            msgs.push(Msg::ToolResults(results));
        } else {
            msgs.push(Msg::User(text_of(content)));
        }
    }
    let tools = params
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| Some(tool_spec(t, t.get("name")?.as_str()?.to_string())))
        .collect();
    (system, msgs, tools)
}

/// The model request: the profile's body, with the server's `maxTokens` (at most the
/// profile's), `temperature`, `stopSequences` and `toolChoice`. `modelPreferences` are
/// hints a client may ignore: the profile's model answers.
fn request_body(
    client: &ModelClient,
    params: &Value,
    system: Option<&str>,
    msgs: &[Msg],
    tools: &[ToolSpec],
) -> Value {
    let mut body = client.body(system, msgs, tools);
    let api = client.profile().api;
    if let Some(n) = params.get("maxTokens").and_then(Value::as_u64) {
        let n = n.min(u64::from(client.profile().max_tokens));
        match api {
            ModelApi::Openai => body["max_completion_tokens"] = json!(n),
            ModelApi::Anthropic => body["max_tokens"] = json!(n),
        }
    }
    if let Some(t) = params.get("temperature").filter(|t| t.is_number()) {
        body["temperature"] = t.clone();
    }
    if let Some(stops) = params.get("stopSequences").filter(|s| s.is_array()) {
        match api {
            ModelApi::Openai => body["stop"] = stops.clone(),
            ModelApi::Anthropic => body["stop_sequences"] = stops.clone(),
        }
    }
    let mode = params.pointer("/toolChoice/mode").and_then(Value::as_str);
    if let (Some(mode), false) = (mode, tools.is_empty()) {
        match api {
            ModelApi::Openai => body["tool_choice"] = json!(mode),
            ModelApi::Anthropic => {
                let kind = if mode == "required" { "any" } else { mode };
                body["tool_choice"] = json!({"type": kind});
            }
        }
    }
    body
}

/// The API's stop reason in MCP's words (`endTurn`, `maxTokens`, `stopSequence`), else as given.
fn stop_reason(api: ModelApi, reply: &Value) -> String {
    let raw = match api {
        ModelApi::Openai => reply.pointer("/choices/0/finish_reason"),
        ModelApi::Anthropic => reply.get("stop_reason"),
    }
    .and_then(Value::as_str)
    .unwrap_or("stop");
    match raw {
        "stop" | "end_turn" => "endTurn",
        "length" | "max_tokens" => "maxTokens",
        "stop_sequence" => "stopSequence",
        "tool_calls" | "tool_use" => "toolUse",
        other => other,
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_round_becomes_the_neutral_conversation() {
        let params = json!({"systemPrompt": "s", "messages": [
            {"role": "user", "content": {"type": "text", "text": "weather?"}},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Oslo"}}]},
            {"role": "user", "content": [{"type": "tool_result", "toolUseId": "t1", "content": [{"type": "text", "text": "sunny"}]}]},
        ], "tools": [{"name": "get_weather", "inputSchema": {"type": "object"}}]});
        let (system, msgs, tools) = conversation(&params);
        assert_eq!(system.as_deref(), Some("s"));
        assert!(matches!(&msgs[0], Msg::User(t) if t == "weather?"));
        assert!(matches!(&msgs[1], Msg::Assistant { calls, .. } if calls[0].id == "t1"));
        assert!(
            matches!(&msgs[2], Msg::ToolResults(r) if r[0] == ("t1".into(), "sunny".into(), false))
        );
        assert_eq!(tools[0].name, "get_weather");
        assert_eq!(
            stop_reason(ModelApi::Anthropic, &json!({"stop_reason": "max_tokens"})),
            "maxTokens"
        );
        assert_eq!(
            stop_reason(
                ModelApi::Openai,
                &json!({"choices": [{"finish_reason": "stop"}]})
            ),
            "endTurn"
        );
    }
}
