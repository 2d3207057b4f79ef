//! `mcpspec record --replay TAPE -- SERVER` (or `--url URL`): the client side of a recorded
//! session sent again, in order, to a server over stdio or Streamable HTTP; each answer is
//! compared with the recorded one (volatile parts sanitized), for a bug report that says
//! where the server changed.
//!
//! A scrubbed secret (`<param:NAME>`) is sent as the value of the environment variable
//! `NAME` (upper case); a server request is answered with the recorded client's answer to
//! the same method, in order.

mod http;
mod stdio;

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::tape::{Entry, From, placeholders};
use crate::language::dsl::scenario::expect::SanitizerSpec;

/// The server a session is replayed to.
pub enum Server<'a> {
    /// Its command line, started for the replay.
    Stdio(&'a [String]),
    /// Its Streamable HTTP endpoint.
    Http(reqwest::Url),
}

/// What came from the server while an answer was awaited.
enum Came {
    /// Messages: answers, the server's requests, notifications.
    Messages(Vec<Value>),
    /// Nothing more comes for this request (HTTP: its reply ended); what came instead of
    /// an answer, if anything (`HTTP 404: …`).
    Done(Option<String>),
    /// The server is gone: why.
    Gone(String),
    TimedOut,
}

/// One side of the replay's connection: the server over stdio or HTTP.
trait Peer {
    /// Send one client message (`text`, and its parsed form); `Err`: why the server takes
    /// no more.
    async fn send(&mut self, msg: &Value, text: &str) -> Result<(), String>;
    /// What the server sent next, waiting until `deadline`.
    async fn next(&mut self, deadline: Instant) -> Came;
    /// Answer one of the server's requests (`text`, a JSON-RPC response).
    async fn answer(&mut self, text: &str);
    /// End the session (stop the server, or end the HTTP session).
    async fn stop(&mut self);
}

/// One answer that differs from the recording.
pub struct Difference {
    /// What was asked (`tools/call echo`), and the request's id.
    pub request: String,
    /// The recorded answer and the new one, sanitized and pretty (`None`: no answer).
    pub recorded: Option<String>,
    pub now: Option<String>,
}

pub struct Replayed {
    pub requests: usize,
    pub differences: Vec<Difference>,
    /// Why the replay stopped early, if it did.
    pub stopped: Option<String>,
}

/// How an answer is compared: result or error, sanitized, keys sorted.
fn canonical(msg: &Value) -> String {
    let mut body = match (msg.get("result"), msg.get("error")) {
        (Some(r), _) => serde_json::json!({ "result": r }),
        (None, Some(e)) => serde_json::json!({ "error": e }),
        _ => msg.clone(),
    };
    if let Some(r) = body.get_mut("result").and_then(Value::as_object_mut) {
        r.remove("_meta");
    }
    let value = crate::language::assert::golden::canonical(
        body,
        &[SanitizerSpec::Timestamps, SanitizerSpec::Uuids],
    );
    serde_json::to_string_pretty(&value).unwrap_or_default()
}

/// Values the server now answers with in place of recorded ones (a new note's id): walked
/// in step through the recorded and the new answer, strings that differ where both hold a
/// string of at least 4 characters.
fn learn(was: &Value, now: &Value, map: &mut Vec<(String, String)>) {
    match (was, now) {
        (Value::String(a), Value::String(b))
            if a != b
                && a.len() >= 4
                && b.len() >= 4
                && is_word(a)
                && is_word(b)
                && !map.iter().any(|(k, _)| k == a) =>
        {
            map.push((a.clone(), b.clone()));
        }
        (Value::Array(a), Value::Array(b)) => {
            for (x, y) in a.iter().zip(b) {
                learn(x, y, map);
            }
        }
        (Value::Object(a), Value::Object(b)) => {
            for (k, x) in a {
                if let Some(y) = b.get(k) {
                    learn(x, y, map);
                }
            }
        }
        _ => {}
    }
}

/// An id-like string: one word, not prose (a changed sentence is a difference, not an id).
fn is_word(s: &str) -> bool {
    s.len() <= 200 && !s.contains(char::is_whitespace)
}

/// The recorded line with its scrubbed secrets put back from the environment, and the
/// values the server now answers with in place of recorded ones.
fn restored(msg: &Value, map: &[(String, String)]) -> Result<String, String> {
    let mut msg = msg.clone();
    substitute(&mut msg, map);
    let mut text = serde_json::to_string(&msg).unwrap_or_default();
    let found: Vec<(String, String)> = placeholders(&text)
        .map(|(whole, name)| (whole.to_string(), name.to_string()))
        .collect();
    for (whole, name) in found {
        let var = name.to_ascii_uppercase();
        let value = std::env::var(&var).map_err(|_| {
            format!("the recording sent a secret as `{whole}`: set {var} to replay it")
        })?;
        let escaped = serde_json::to_string(&value).unwrap_or_default();
        text = text.replace(&whole, &escaped[1..escaped.len() - 1]);
    }
    Ok(text)
}

fn substitute(v: &mut Value, map: &[(String, String)]) {
    match v {
        Value::String(s) => {
            for (old, new) in map {
                if s.contains(old.as_str()) {
                    *s = s.replace(old.as_str(), new);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| substitute(i, map)),
        Value::Object(fields) => fields.values_mut().for_each(|i| substitute(i, map)),
        _ => {}
    }
}

fn describe(msg: &Value) -> String {
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("?");
    let params = msg.get("params");
    let what = ["name", "uri"]
        .iter()
        .find_map(|k| params.and_then(|p| p.get(*k)).and_then(Value::as_str));
    match what {
        Some(w) => format!(
            "{method} {w} (id {})",
            msg.get("id").unwrap_or(&Value::Null)
        ),
        None => format!("{method} (id {})", msg.get("id").unwrap_or(&Value::Null)),
    }
}

/// Send the client side of `entries` to `server`; compare every answer.
pub async fn replay(
    entries: &[Entry],
    server: Server<'_>,
    wait: Duration,
) -> std::io::Result<Replayed> {
    match server {
        Server::Stdio(words) => run(entries, stdio::StdioPeer::spawn(words)?, wait).await,
        Server::Http(url) => run(entries, http::HttpPeer::new(url, wait)?, wait).await,
    }
}

/// The recorded answers: to each client request (by id), and the client's answers to the
/// server's requests (by method, in order).
fn recorded_answers(
    entries: &[Entry],
) -> (HashMap<String, Value>, HashMap<String, VecDeque<Value>>) {
    let mut recorded: HashMap<String, Value> = HashMap::new();
    let mut answers: HashMap<String, VecDeque<Value>> = HashMap::new();
    let mut asked: HashMap<String, String> = HashMap::new();
    for entry in entries {
        let Entry::Message { from, msg, .. } = entry else {
            continue;
        };
        let id = msg.get("id").map(Value::to_string);
        let method = msg.get("method").and_then(Value::as_str);
        match (from, method, id) {
            (From::Server, None, Some(id)) => {
                recorded.entry(id).or_insert_with(|| msg.clone());
            }
            (From::Server, Some(m), Some(id)) => {
                asked.insert(id, m.to_string());
            }
            (From::Client, None, Some(id)) => {
                if let Some(m) = asked.get(&id) {
                    answers.entry(m.clone()).or_default().push_back(msg.clone());
                }
            }
            _ => {}
        }
    }
    (recorded, answers)
}

async fn run(entries: &[Entry], mut peer: impl Peer, wait: Duration) -> std::io::Result<Replayed> {
    let (recorded, mut answers) = recorded_answers(entries);
    let mut pending: VecDeque<Value> = VecDeque::new();
    let mut map: Vec<(String, String)> = Vec::new();
    let mut out = Replayed {
        requests: 0,
        differences: Vec::new(),
        stopped: None,
    };
    for entry in entries {
        let Entry::Message {
            from: From::Client,
            msg,
            ..
        } = entry
        else {
            continue;
        };
        if msg.get("method").is_none() {
            // The client's answer to a server request: sent when the server asks again.
            continue;
        }
        let sent = restored(msg, &map).and_then(|line| {
            let value = serde_json::from_str::<Value>(&line).map_err(|e| e.to_string())?;
            Ok((line, value))
        });
        let (line, value) = match sent {
            Ok(l) => l,
            Err(e) => {
                out.stopped = Some(e);
                break;
            }
        };
        if let Err(why) = peer.send(&value, &line).await {
            out.stopped = Some(why);
            break;
        }
        let Some(id) = msg.get("id") else { continue };
        out.requests += 1;
        let deadline = Instant::now() + wait;
        let mut instead = None;
        let answer = loop {
            if let Some(at) = pending
                .iter()
                .position(|m| m.get("id") == Some(id) && m.get("method").is_none())
            {
                break pending.remove(at);
            }
            match peer.next(deadline).await {
                Came::Messages(got) => {
                    for m in got {
                        match (m.get("method").and_then(Value::as_str), m.get("id")) {
                            (Some(method), Some(sid)) => {
                                let reply = recorded_reply(&mut answers, method, sid);
                                peer.answer(&restored(&reply, &map).unwrap_or_default())
                                    .await;
                            }
                            (Some(_), None) => {}
                            _ => pending.push_back(m),
                        }
                    }
                }
                Came::Done(what) => {
                    instead = what;
                    break None;
                }
                Came::Gone(why) => {
                    out.stopped = Some(why);
                    break None;
                }
                Came::TimedOut => break None,
            }
        };
        let was = recorded.get(&id.to_string());
        if let (Some(w), Some(n)) = (was, answer.as_ref()) {
            learn(
                w.get("result").unwrap_or(&Value::Null),
                n.get("result").unwrap_or(&Value::Null),
                &mut map,
            );
        }
        let now_text = answer.as_ref().map(canonical).or(instead);
        let was_text = was.map(canonical);
        if now_text != was_text {
            out.differences.push(Difference {
                request: describe(msg),
                recorded: was_text,
                now: now_text,
            });
        }
        if out.stopped.is_some() {
            break;
        }
    }
    peer.stop().await;
    Ok(out)
}

/// The server asks: answered as the recorded client answered the same method (in order),
/// else "not in the recording".
fn recorded_reply(
    answers: &mut HashMap<String, VecDeque<Value>>,
    method: &str,
    id: &Value,
) -> Value {
    answers
        .get_mut(method)
        .and_then(VecDeque::pop_front)
        .map(|mut a| {
            a["id"] = id.clone();
            a
        })
        .unwrap_or_else(|| {
            crate::protocol::jsonrpc::error_response(id, -32601, "not in the recording")
        })
}
