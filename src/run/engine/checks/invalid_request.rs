//! Invalid Request (`invalid_request_answered`): JSON that is no valid Request object (JSON-RPC
//! 2.0 section 4: `jsonrpc` "MUST be exactly "2.0"", `method` "A String", `id` "MUST contain a
//! String, Number, or NULL value if included") wants error -32600 ("The JSON sent is not a
//! valid Request object", section 5.1), with the request's id, or Null when it cannot be
//! read. Sent the same way as the cut-short request of [`super::parse_error`], on a connection of
//! the probe's own.

use serde_json::Value;

use super::parse_error::{Reply, http_reply, own_connection, stdio_reply};
use crate::protocol::errors;
use crate::run::client::Connection;
use crate::run::engine::checks::outcome::CheckOutcome;
use crate::run::engine::pool::Pool;

/// The invalid requests of `invalid_request_answered`: what is wrong with each, and how a
/// valid request (the harmless one, with its id) is spoiled into it.
/// Turns a valid request object into an invalid one.
type Spoil = fn(&mut serde_json::Map<String, Value>);

const INVALID_REQUESTS: &[(&str, Spoil)] = &[
    ("without `jsonrpc`", |m| {
        m.remove("jsonrpc");
    }),
    ("with `\"jsonrpc\": \"1.0\"`", |m| {
        m.insert("jsonrpc".into(), Value::from("1.0"));
    }),
    ("with a `method` that is no string", |m| {
        m.insert("method".into(), Value::from(7));
    }),
    ("with an `id` that is an object", |m| {
        let id = m.remove("id").unwrap_or(Value::Null);
        m.insert("id".into(), serde_json::json!({ "n": id }));
    }),
];

/// What the invalid-request probe saw, one case per request of [`INVALID_REQUESTS`].
pub struct InvalidProbe {
    cases: Vec<InvalidCase>,
    /// The `notifications/message` the server sent on the probe's connection around the
    /// invalid requests (judged by `undeclared_logging_not_sent`, as [`ParseProbe::logs`]).
    logs: Vec<Value>,
}

impl InvalidProbe {
    /// The log messages seen on the probe's connection.
    pub fn logs(&self) -> &[Value] {
        &self.logs
    }
}

struct InvalidCase {
    what: &'static str,
    sent: String,
    /// The id the request carried (an answer may echo it, or say null).
    id: Value,
    reply: Reply,
}

/// Send each invalid request on a connection of its own like `conn`'s (as [`probe`] does),
/// noting what came back in `conn`'s transcript.
pub async fn invalid_request_probe(
    conn: &mut Connection,
    pool: &Pool,
) -> Result<InvalidProbe, String> {
    let mut own = own_connection(conn, pool).await?;
    let method = own.harmless_method();
    let mut cases = Vec::new();
    let mut logs = Vec::new();
    for &(what, spoil) in INVALID_REQUESTS {
        let id = own.next_id();
        let mut out = own.build_plain(method, None, Some(id));
        let Ok(Value::Object(mut request)) = serde_json::from_str::<Value>(&out.body) else {
            return Err(format!("could not build the request: {}", out.body));
        };
        spoil(&mut request);
        let id = request.get("id").cloned().unwrap_or(Value::Null);
        out.body = Value::Object(request).to_string();
        out.id = None;
        let reply = if own.is_http() {
            http_reply(&mut own, &out, &mut logs).await
        } else {
            stdio_reply(&mut own, &out, method, &mut logs).await.0
        };
        conn.note(format!(
            "invalid-request probe, on a connection of its own: sent `{}` ({what}); {}",
            out.body,
            reply.describe()
        ));
        cases.push(InvalidCase {
            what,
            sent: out.body,
            id,
            reply,
        });
        if own.is_broken() {
            break;
        }
    }
    own.close().await;
    Ok(InvalidProbe { cases, logs })
}

const EXPECTED_INVALID: &str = "a JSON-RPC error -32600 (Invalid Request) with the request's id, or id null (or none) when it cannot be read";

/// `invalid_request_answered`: each invalid request got -32600 with its id (or null).
pub fn invalid_request_answered(probe: &InvalidProbe) -> CheckOutcome {
    let mut findings = Vec::new();
    for case in &probe.cases {
        let problem = match &case.reply {
            Reply::Message(msg) => {
                let code = msg.pointer("/error/code").and_then(Value::as_i64);
                let id = msg.get("id");
                match code {
                    Some(errors::INVALID_REQUEST) => match id {
                        None | Some(Value::Null) => None,
                        Some(id) if *id == case.id => None,
                        Some(id) => Some(format!(
                            "error -32600 with id {id}, which is neither the request's id nor null"
                        )),
                    },
                    Some(code) => Some(format!("error {code}, not -32600 Invalid Request")),
                    None if msg.get("error").is_some() => {
                        Some("an error without an integer code".into())
                    }
                    None => Some("a result, not an error".into()),
                }
            }
            // HTTP: "If the server cannot accept the input, it MUST return an HTTP error
            // status code (e.g., 400 Bad Request)"; its body MAY be a JSON-RPC error.
            Reply::Http { status, .. } if (400..500).contains(status) => None,
            other => Some(other.describe()),
        };
        if let Some(problem) = problem {
            findings.push(crate::results::outcome::Finding::new(
                format!("a request {} got {problem}", case.what),
                EXPECTED_INVALID,
                format!("sent `{}`; {}", case.sent, case.reply.describe()),
            ));
        }
    }
    if findings.is_empty() {
        CheckOutcome::Pass
    } else {
        CheckOutcome::Fail(findings)
    }
}
