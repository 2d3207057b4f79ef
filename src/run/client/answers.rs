//! The client's answers to what the server asks (`roots/list`, `elicitation/create`,
//! `sampling/createMessage`): the scenario's script, rendered with its template context.
//! One answerer serves both eras: a legacy server request is answered inline by the
//! transport, a modern `input_required` result's `inputRequests` by the retry loop.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::language::assert::{ExpectOutcome, Observed, Reply, check};
use crate::language::dsl::document::ElicitAction;
use crate::language::dsl::template::render_value;
use crate::language::dsl::{Answer, ClientScript, ElicitReply, Roots, SamplingReply};
use crate::protocol::{errors, methods};
use crate::results::exchange::Exchange;

/// The script and the context its templates render with. One answerer serves one
/// scenario run (a warm process gets the next scenario's own): what a `roots` step changes
/// ends with it.
#[derive(Debug)]
pub struct Answerer {
    script: Arc<ClientScript>,
    ctx: Value,
    /// Model answers sent inline (legacy), kept for the transcript's note, which is written
    /// after the exchange: a model is asked once per request (keyed by the request's text).
    sent: Mutex<HashMap<String, Answered>>,
    /// Why a model could not answer, taken by the step, which then errors.
    failures: Mutex<Vec<String>>,
    /// The roots a `roots` step set (rendered), in place of the script's.
    changed_roots: Mutex<Option<Vec<Value>>>,
}

/// What the client answered one server request: a result or a JSON-RPC error, and a line
/// for the transcript.
#[derive(Debug, Clone)]
pub struct Answered {
    pub outcome: Result<Value, (i64, String)>,
    pub note: String,
}

/// A real model answering `sampling/createMessage` for a scripted `profile:` answer: the
/// run's model profiles (`mcpspec run --models FILE`), set once by the run command.
pub trait Sampler: Send + Sync {
    /// The `CreateMessageResult` of profile `profile` for the server's request, within
    /// `timeout`; `Err`: why not, naming the profile.
    fn sample<'a>(
        &'a self,
        profile: &'a str,
        request: &'a Value,
        timeout: Duration,
    ) -> Pin<Box<dyn Future<Output = Result<Value, String>> + Send + 'a>>;
}

static SAMPLER: OnceLock<Arc<dyn Sampler>> = OnceLock::new();

/// The run's model profiles answer `profile:` sampling answers from now on.
pub fn set_sampler(sampler: Arc<dyn Sampler>) {
    let _ = SAMPLER.set(sampler);
}

impl Answerer {
    pub fn new(script: Arc<ClientScript>, ctx: Value) -> Self {
        Answerer {
            script,
            ctx,
            sent: Mutex::default(),
            failures: Mutex::default(),
            changed_roots: Mutex::new(None),
        }
    }

    /// Whether the client declares `roots`.
    pub fn client_declares_roots(&self) -> bool {
        self.script.declares("roots")
    }

    /// Whether the client declares `roots.listChanged` (legacy: a `roots` step notifies).
    pub fn roots_list_changed(&self) -> bool {
        self.script.roots_list_changed
    }

    /// Answer later `roots/list` requests with `roots` (rendered by [`render_roots`]).
    pub fn change_roots(&self, roots: Vec<Value>) {
        *self.changed_roots.lock().unwrap_or_else(|e| e.into_inner()) = Some(roots);
    }

    /// The `ClientCapabilities` declared.
    pub fn capabilities(&self) -> &Value {
        &self.script.capabilities
    }

    /// The bound on `input_required` rounds of one request.
    pub fn max_rounds(&self) -> u32 {
        self.script.max_rounds
    }

    /// The answer to a server request `{method, params}` (a model's answer only if it was
    /// already sent: see [`answer_now`]).
    pub fn answer(&self, request: &Value) -> Answered {
        answer(Some(self), request)
    }

    /// Why a model could not answer during the step, if it could not (taken once).
    pub fn take_failure(&self) -> Option<String> {
        let mut failures = self.failures.lock().unwrap();
        (!failures.is_empty()).then(|| std::mem::take(&mut *failures).join("; "))
    }
}

/// What a request is answered with: ready, or a model profile to ask.
enum Resolved {
    Ready(Answered),
    Model(String),
}

/// The answer to a server request, with no script (`None`) or with one. Without a
/// declared capability for its method, or with no scripted answer matching, -32601. A
/// model's answer is the one [`answer_now`] sent for this request.
pub fn answer(answerer: Option<&Answerer>, request: &Value) -> Answered {
    match resolve(answerer, request) {
        Resolved::Ready(answered) => answered,
        Resolved::Model(profile) => {
            let sent = answerer.and_then(|a| a.sent.lock().unwrap().remove(&request.to_string()));
            sent.unwrap_or_else(|| Answered {
                outcome: Err((errors::INTERNAL_ERROR, "no model answer was sent".into())),
                note: format!("the model profile `{profile}` was not asked for this request"),
            })
        }
    }
}

/// The answer to a server request, asking a model when the script says so (within
/// `timeout`). `keep`: the answer is kept for the transcript's note ([`answer`]).
pub async fn answer_now(
    answerer: Option<&Answerer>,
    request: &Value,
    timeout: Duration,
    keep: bool,
) -> Answered {
    let profile = match resolve(answerer, request) {
        Resolved::Ready(answered) => return answered,
        Resolved::Model(profile) => profile,
    };
    let method = request.get("method").and_then(Value::as_str).unwrap_or("");
    let asked = match SAMPLER.get() {
        None => Err(format!(
            "the sampling answer names the model profile `{profile}`, but the run has no model profiles: give `mcpspec run --models FILE` (a file with `models:`, such as an eval set)"
        )),
        Some(sampler) => {
            match tokio::time::timeout(timeout, sampler.sample(&profile, request, timeout)).await {
                Ok(r) => r,
                Err(_) => Err(format!(
                    "the model profile `{profile}` did not answer within {} (the step's time left)",
                    humantime::format_duration(timeout)
                )),
            }
        }
    };
    let answered = match asked {
        Ok(result) => Answered {
            note: format!(
                "`{method}`: answered by the model profile `{profile}`: {}",
                crate::language::assert::compact(&result, 200)
            ),
            outcome: Ok(result),
        },
        Err(why) => {
            if let Some(a) = answerer {
                a.failures.lock().unwrap().push(why.clone());
            }
            Answered {
                note: format!("`{method}`: answered error -32603 ({why})"),
                outcome: Err((errors::INTERNAL_ERROR, why)),
            }
        }
    };
    if let Some(a) = answerer.filter(|_| keep) {
        a.sent
            .lock()
            .unwrap()
            .insert(request.to_string(), answered.clone());
    }
    answered
}

fn resolve(answerer: Option<&Answerer>, request: &Value) -> Resolved {
    let method = request.get("method").and_then(Value::as_str).unwrap_or("");
    let refused = |why: String| {
        Resolved::Ready(Answered {
            outcome: Err((errors::METHOD_NOT_FOUND, why.clone())),
            note: format!("`{method}`: answered -32601 ({why})"),
        })
    };
    let Some(a) = answerer else {
        return refused(format!(
            "mcpspec declares no client capabilities and does not serve `{method}`"
        ));
    };
    let Some(capability) = methods::client_capability_for(method) else {
        return refused(format!("mcpspec does not serve `{method}`"));
    };
    if !a.script.declares(capability) {
        return refused(format!(
            "the client did not declare the `{capability}` capability"
        ));
    }
    let outcome = match capability {
        "roots" => Some(a.roots()),
        "elicitation" => {
            first_match(a, &a.script.elicitation, request).map(|r| a.elicit(r, request))
        }
        _ => match first_match(a, &a.script.sampling, request) {
            Some(SamplingReply::Profile(profile)) => return Resolved::Model(profile.clone()),
            other => other.map(|r| a.sample(r)),
        },
    };
    Resolved::Ready(match outcome {
        None => {
            return refused(format!(
                "no scripted `{capability}` answer matched the request"
            ));
        }
        Some(Ok(result)) => Answered {
            note: format!(
                "`{method}`: answered from the script: {}",
                crate::language::assert::compact(&result, 200)
            ),
            outcome: Ok(result),
        },
        Some(Err((code, message))) => Answered {
            note: format!("`{method}`: answered error {code} ({message})"),
            outcome: Err((code, message)),
        },
    })
}

/// The first answer whose `when` holds on the request.
fn first_match<'a, T>(a: &Answerer, answers: &'a [Answer<T>], request: &Value) -> Option<&'a T> {
    let exchange = Exchange::default();
    answers
        .iter()
        .find(|ans| match &ans.when {
            None => true,
            Some(when) => {
                let seen = Observed::with_reply(&exchange, Reply::result(request), false);
                matches!(
                    check(when, &seen, &a.ctx),
                    ExpectOutcome::Pass | ExpectOutcome::Vacuous(_)
                )
            }
        })
        .map(|ans| &ans.reply)
}

type Outcome = Result<Value, (i64, String)>;

impl Answerer {
    fn render(&self, v: &crate::ground::yaml::value::TValue) -> Result<Value, (i64, String)> {
        render_value(v, &self.ctx)
            .map_err(|(_, _, e)| (errors::INTERNAL_ERROR, format!("template error: {e}")))
    }

    fn roots(&self) -> Outcome {
        let changed = self
            .changed_roots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let roots = match changed {
            Some(roots) => roots,
            None => render_roots(&self.script.roots, &self.ctx)
                .map_err(|(_, _, e)| (errors::INTERNAL_ERROR, format!("template error: {e}")))?,
        };
        Ok(json!({ "roots": roots }))
    }

    fn elicit(&self, reply: &ElicitReply, request: &Value) -> Outcome {
        let params = request.get("params");
        let url_mode = params.and_then(|p| p.get("mode")).and_then(Value::as_str) == Some("url");
        let mut result = Map::new();
        result.insert("action".into(), json!(reply.action.name()));
        if reply.action == ElicitAction::Accept && !url_mode {
            let mut content = schema_defaults(params.and_then(|p| p.get("requestedSchema")));
            if let Some(given) = &reply.content {
                match self.render(given)? {
                    Value::Object(fields) => content.extend(fields),
                    other => {
                        return Err((
                            errors::INTERNAL_ERROR,
                            format!("the scripted elicitation content is not a mapping: {other}"),
                        ));
                    }
                }
            }
            result.insert("content".into(), Value::Object(content));
        }
        Ok(Value::Object(result))
    }

    fn sample(&self, reply: &SamplingReply) -> Outcome {
        match reply {
            SamplingReply::Profile(profile) => Err((
                errors::INTERNAL_ERROR,
                format!("the model profile `{profile}` answers only asynchronously"),
            )),
            SamplingReply::Refuse => Err((
                errors::USER_REJECTED,
                "User rejected sampling request".into(),
            )),
            SamplingReply::Message {
                text,
                tool_use,
                model,
                stop_reason,
            } => {
                let text = match text {
                    Some(t) => Some(match self.render(t)? {
                        Value::String(s) => s,
                        other => other.to_string(),
                    }),
                    None => None,
                };
                let text_block = |t: String| json!({"type": "text", "text": t});
                let content = match tool_use {
                    None => text_block(text.unwrap_or_default()),
                    Some(u) => {
                        let input = match &u.input {
                            None => json!({}),
                            Some(i) => match self.render(i)? {
                                v @ Value::Object(_) => v,
                                other => {
                                    return Err((
                                        errors::INTERNAL_ERROR,
                                        format!(
                                            "the scripted tool use's input is not a mapping: {other}"
                                        ),
                                    ));
                                }
                            },
                        };
                        let block =
                            json!({"type": "tool_use", "id": u.id, "name": u.name, "input": input});
                        // A tool use with text: both blocks, the text first.
                        Value::Array(text.map(text_block).into_iter().chain([block]).collect())
                    }
                };
                Ok(json!({
                    "role": "assistant",
                    "content": content,
                    "model": model,
                    "stopReason": stop_reason,
                }))
            }
        }
    }
}

/// A list of roots as `roots/list` answers it, each uri rendered with `ctx` (an error:
/// its template's line, column and message).
pub fn render_roots(roots: &Roots, ctx: &Value) -> Result<Vec<Value>, (u32, u32, String)> {
    roots
        .iter()
        .map(|(uri, name)| {
            let mut root = Map::new();
            root.insert("uri".into(), render_value(uri, ctx)?);
            if let Some(name) = name {
                root.insert("name".into(), json!(name));
            }
            Ok(Value::Object(root))
        })
        .collect()
}

/// The `default` of each property of a requested schema (SEP-1034).
fn schema_defaults(schema: Option<&Value>) -> Map<String, Value> {
    schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .filter_map(|(name, p)| Some((name.clone(), p.get("default")?.clone())))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_come_from_the_requested_schema() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "Ada"},
            "age": {"type": "integer"}
        }});
        let d = schema_defaults(Some(&schema));
        assert_eq!(Value::Object(d), json!({"name": "Ada"}));
    }

    fn answerer(client: &str) -> Answerer {
        let text = format!(
            "scenario: s\n{client}steps:\n  - name: l\n    request: {{method: tools/list}}\n"
        );
        let file = crate::ground::source::SourceFile::new("s.yaml", text);
        let scenario = crate::language::dsl::parse_scenario(file).expect("the scenario loads");
        Answerer::new(scenario.client.expect("a client"), json!({"dir": "work"}))
    }

    const SCRIPT: &str = "vars: {dir: work}\nclient:\n  capabilities: {elicitation: {url: true}, roots: {}}\n  roots: [{uri: \"file:///{{ dir }}\"}]\n  elicitation:\n    - when: {path: \"$.params.message\", contains: delete}\n      action: cancel\n    - action: accept\n      content: {b: 2}\n  sampling:\n    - text: never sent\n";

    #[test]
    fn the_first_answer_whose_when_holds_answers() {
        let a = answerer(SCRIPT);
        let ask = |message: &str| {
            a.answer(
                &json!({"method": "elicitation/create", "params": {"message": message,
                "requestedSchema": {"properties": {"a": {"default": 1}, "b": {"default": 1}}}}}),
            )
            .outcome
            .expect("answered")
        };
        assert_eq!(ask("delete all?"), json!({"action": "cancel"}));
        assert_eq!(
            ask("deploy?"),
            json!({"action": "accept", "content": {"a": 1, "b": 2}})
        );
        let url = a.answer(
            &json!({"method": "elicitation/create", "params": {"mode": "url", "url": "https://x"}}),
        );
        assert_eq!(
            url.outcome.expect("answered"),
            json!({"action": "accept"}),
            "no content in URL mode"
        );
        let roots = a.answer(&json!({"method": "roots/list"}));
        assert_eq!(
            roots.outcome.expect("answered"),
            json!({"roots": [{"uri": "file:///work"}]})
        );
    }

    #[test]
    fn changed_roots_answer_every_later_roots_request() {
        let a = answerer(SCRIPT);
        a.change_roots(vec![json!({"uri": "file:///other", "name": "other"})]);
        for _ in 0..2 {
            let roots = a.answer(&json!({"method": "roots/list"}));
            assert_eq!(
                roots.outcome.expect("answered"),
                json!({"roots": [{"uri": "file:///other", "name": "other"}]})
            );
        }
        assert!(!a.roots_list_changed(), "`listChanged` is not declared");
    }

    #[test]
    fn an_undeclared_capability_is_refused_even_with_answers() {
        let a = answerer(SCRIPT);
        let sampled = a.answer(&json!({"method": "sampling/createMessage", "params": {}}));
        assert_eq!(sampled.outcome.unwrap_err().0, -32601);
        assert!(
            sampled
                .note
                .contains("did not declare the `sampling` capability"),
            "{}",
            sampled.note
        );
        let unknown = a.answer(&json!({"method": "tasks/get"}));
        assert_eq!(unknown.outcome.unwrap_err().0, -32601);
    }

    #[test]
    fn without_a_script_every_request_is_refused() {
        let a = answer(None, &json!({"method": "roots/list", "id": 1}));
        assert_eq!(a.outcome.unwrap_err().0, -32601);
    }
}
