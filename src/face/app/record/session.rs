//! A tape read as a session: the era the client spoke, the calls it made with their
//! outcomes, and how it answered the server's own requests.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::protocol::{fields, meta, methods};
use crate::run::record::{End, Entry, From};

/// The era the client spoke, as the scenario's `eras:` label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EraUsed {
    Legacy,
    Modern,
}

impl EraUsed {
    pub fn label(self) -> &'static str {
        match self {
            EraUsed::Legacy => "legacy",
            EraUsed::Modern => "modern",
        }
    }
}

/// What came back for a call.
#[derive(Debug, Clone)]
pub enum CallOutcome {
    Result(Value),
    Error(Value),
    /// The session ended before the answer.
    Unanswered,
}

/// One request of the client's (the handshake and pings left out).
#[derive(Debug, Clone)]
pub struct Call {
    pub method: String,
    /// Without the `_meta` keys the engine adds itself.
    pub params: Option<Value>,
    pub outcome: CallOutcome,
}

/// A request of the server's (legacy: on the wire; modern: inside `input_required`) and how
/// the client answered it.
#[derive(Debug, Clone)]
pub struct Ask {
    pub method: String,
    pub request: Value,
    /// `Ok(result)` or `Err(error object)`.
    pub answer: Result<Value, Value>,
}

#[derive(Debug, Default)]
pub struct Session {
    pub era: Option<EraUsed>,
    /// The client capabilities as the client declared them.
    pub capabilities: Value,
    pub calls: Vec<Call>,
    pub asks: Vec<Ask>,
    pub end: Option<(End, String)>,
    /// What was seen and not turned into steps, for the notes.
    pub server_notifications: usize,
    pub client_notifications: Vec<String>,
    pub malformed: usize,
}

impl Session {
    /// Why the session holds to the era it was recorded in: a method one era does not have
    /// (`None`: it used nothing era-specific).
    pub fn era_bound(&self) -> Option<String> {
        let only_one =
            |m: &str| methods::REMOVED_IN_MODERN.contains(&m) || m == methods::SUBSCRIPTIONS_LISTEN;
        self.calls
            .iter()
            .map(|c| c.method.as_str())
            .chain(self.client_notifications.iter().map(String::as_str))
            .find(|m| only_one(m))
            .map(|m| format!("it used `{m}`, which one era does not have"))
    }
}

fn id_key(v: &Value) -> String {
    v.to_string()
}

impl Session {
    pub fn read(entries: &[Entry]) -> Session {
        let mut s = Session::default();
        // Client request id → index of its call (a modern retry points at the first call).
        let mut pending: HashMap<String, usize> = HashMap::new();
        // Server request id → (method, request).
        let mut asked: HashMap<String, (String, Value)> = HashMap::new();
        for entry in entries {
            match entry {
                Entry::Message { from, msg, .. } => match from {
                    From::Client => s.client(msg, &mut pending, &mut asked),
                    From::Server => s.server(msg, &mut pending, &mut asked),
                },
                Entry::Malformed { .. } => s.malformed += 1,
                Entry::Stderr { .. } => {}
                Entry::End { end, detail, .. } => s.end = Some((*end, detail.clone())),
            }
        }
        s
    }

    fn client(
        &mut self,
        msg: &Value,
        pending: &mut HashMap<String, usize>,
        asked: &mut HashMap<String, (String, Value)>,
    ) {
        let method = msg.get("method").and_then(Value::as_str);
        let id = msg.get("id");
        match (method, id) {
            (Some(method), Some(id)) => {
                let params = msg.get("params");
                if let Some(m) = params.and_then(|p| p.get("_meta"))
                    && let Some(v) = m.get(meta::PROTOCOL_VERSION)
                {
                    let _ = v;
                    self.era = Some(EraUsed::Modern);
                    if let Some(caps) = m.get(meta::CLIENT_CAPABILITIES) {
                        self.capabilities = caps.clone();
                    }
                }
                match method {
                    methods::INITIALIZE => {
                        self.era = Some(EraUsed::Legacy);
                        if let Some(caps) = params.and_then(|p| p.get("capabilities")) {
                            self.capabilities = caps.clone();
                        }
                        return;
                    }
                    methods::PING | methods::SERVER_DISCOVER => return,
                    _ => {}
                }
                // A modern retry (`inputResponses`) continues the call it answers.
                if let Some(responses) = params.and_then(|p| p.get(fields::INPUT_RESPONSES))
                    && let Some(index) = self.calls.iter().rposition(|c| c.method == method)
                {
                    self.input_answers(index, responses);
                    pending.insert(id_key(id), index);
                    return;
                }
                self.calls.push(Call {
                    method: method.to_string(),
                    params: params.map(without_engine_meta),
                    outcome: CallOutcome::Unanswered,
                });
                pending.insert(id_key(id), self.calls.len() - 1);
            }
            (Some(method), None) => {
                if method != methods::NOTIFICATIONS_INITIALIZED {
                    self.client_notifications.push(method.to_string());
                }
            }
            (None, Some(id)) => {
                // The client's answer to a server request.
                if let Some((method, request)) = asked.remove(&id_key(id)) {
                    let answer = match (msg.get("result"), msg.get("error")) {
                        (Some(r), _) => Ok(r.clone()),
                        (None, Some(e)) => Err(e.clone()),
                        (None, None) => Err(Value::Null),
                    };
                    self.asks.push(Ask {
                        method,
                        request,
                        answer,
                    });
                }
            }
            (None, None) => {}
        }
    }

    fn server(
        &mut self,
        msg: &Value,
        pending: &mut HashMap<String, usize>,
        asked: &mut HashMap<String, (String, Value)>,
    ) {
        let method = msg.get("method").and_then(Value::as_str);
        match (method, msg.get("id")) {
            (Some(method), Some(id)) => {
                asked.insert(id_key(id), (method.to_string(), msg.clone()));
            }
            (Some(_), None) => self.server_notifications += 1,
            (None, Some(id)) => {
                let Some(index) = pending.remove(&id_key(id)) else {
                    return;
                };
                let outcome = match (msg.get("result"), msg.get("error")) {
                    (Some(r), _) => CallOutcome::Result(r.clone()),
                    (None, Some(e)) => CallOutcome::Error(e.clone()),
                    _ => return,
                };
                self.calls[index].outcome = outcome;
            }
            (None, None) => {}
        }
    }

    /// The answers of a modern retry: each `inputResponses` key pairs with the
    /// `inputRequests` entry of the same key in the answered call's result.
    fn input_answers(&mut self, index: usize, responses: &Value) {
        let CallOutcome::Result(result) = &self.calls[index].outcome else {
            return;
        };
        let Some(requests) = result
            .get(fields::INPUT_REQUESTS)
            .and_then(Value::as_object)
        else {
            return;
        };
        let Some(responses) = responses.as_object() else {
            return;
        };
        for (key, request) in requests {
            let Some(response) = responses.get(key) else {
                continue;
            };
            let method = request
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            // An input response is a result, or (a refusal) an error object.
            let answer = if response.get("code").is_some() && response.get("message").is_some() {
                Err(response.clone())
            } else {
                Ok(response.clone())
            };
            self.asks.push(Ask {
                method,
                request: request.clone(),
                answer,
            });
        }
    }
}

/// Params without the `_meta` keys the engine sends itself (protocol version, client
/// capabilities and info); an emptied `_meta` goes too.
fn without_engine_meta(params: &Value) -> Value {
    let mut params = params.clone();
    if let Some(obj) = params.as_object_mut()
        && let Some(Value::Object(m)) = obj.get_mut("_meta")
    {
        let kept: Map<String, Value> = std::mem::take(m)
            .into_iter()
            .filter(|(k, _)| !k.starts_with(meta::PREFIX))
            .collect();
        *m = kept;
        if m.is_empty() {
            obj.remove("_meta");
        }
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msg(from: From, msg: Value) -> Entry {
        Entry::Message { ms: 0, from, msg }
    }

    #[test]
    fn a_method_one_era_lacks_binds_the_session_to_its_era() {
        let init = msg(
            From::Client,
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}),
        );
        let call = |id: u32, method: &str| {
            msg(
                From::Client,
                json!({"jsonrpc":"2.0","id":id,"method":method}),
            )
        };
        let neutral = Session::read(&[init.clone(), call(1, "tools/list"), call(2, "ping")]);
        assert_eq!(neutral.era_bound(), None);
        let bound = Session::read(&[
            init.clone(),
            call(1, "tools/list"),
            call(2, "logging/setLevel"),
        ]);
        assert_eq!(
            bound.era_bound().as_deref(),
            Some("it used `logging/setLevel`, which one era does not have")
        );
        let roots = msg(
            From::Client,
            json!({"jsonrpc":"2.0","method":"notifications/roots/list_changed"}),
        );
        assert!(Session::read(&[init, roots]).era_bound().is_some());
    }

    #[test]
    fn a_legacy_session_reads_as_calls_and_asks() {
        let entries = vec![
            msg(
                From::Client,
                json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}}}}),
            ),
            msg(From::Server, json!({"jsonrpc":"2.0","id":0,"result":{}})),
            msg(
                From::Client,
                json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            ),
            msg(
                From::Client,
                json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{}}}),
            ),
            msg(
                From::Server,
                json!({"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":"ok?"}}),
            ),
            msg(
                From::Client,
                json!({"jsonrpc":"2.0","id":7,"result":{"action":"accept","content":{"x":1}}}),
            ),
            msg(
                From::Server,
                json!({"jsonrpc":"2.0","id":1,"result":{"content":[]}}),
            ),
            msg(
                From::Client,
                json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
            ),
            Entry::End {
                ms: 5,
                end: End::ServerCrashed,
                detail: "boom".into(),
            },
        ];
        let s = Session::read(&entries);
        assert_eq!(s.era, Some(EraUsed::Legacy));
        assert_eq!(s.capabilities, json!({"elicitation":{}}));
        assert_eq!(s.calls.len(), 2);
        assert!(matches!(s.calls[0].outcome, CallOutcome::Result(_)));
        assert!(matches!(s.calls[1].outcome, CallOutcome::Unanswered));
        assert_eq!(s.asks.len(), 1);
        assert_eq!(
            s.asks[0].answer,
            Ok(json!({"action":"accept","content":{"x":1}}))
        );
        assert_eq!(s.end.as_ref().unwrap().0, End::ServerCrashed);
    }

    #[test]
    fn a_modern_retry_continues_its_call() {
        let m = json!({"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}},"progressToken":"p"});
        let entries = vec![
            msg(
                From::Client,
                json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"r","arguments":{},"_meta":m}}),
            ),
            msg(
                From::Server,
                json!({"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}}}}),
            ),
            msg(
                From::Client,
                json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"r","arguments":{},"inputResponses":{"a":{"roots":[{"uri":"file:///x"}]}}}}),
            ),
            msg(
                From::Server,
                json!({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"roots: file:///x"}]}}),
            ),
        ];
        let s = Session::read(&entries);
        assert_eq!(s.era, Some(EraUsed::Modern));
        assert_eq!(s.calls.len(), 1);
        assert_eq!(
            s.calls[0].params.as_ref().unwrap()["_meta"],
            json!({"progressToken":"p"})
        );
        let CallOutcome::Result(r) = &s.calls[0].outcome else {
            panic!()
        };
        assert_eq!(r["content"][0]["text"], "roots: file:///x");
        assert_eq!(s.asks.len(), 1);
        assert_eq!(s.asks[0].method, "roots/list");
    }
}
