//! The `client:` block: the capabilities the recorded client declared and how it answered
//! the server's requests (roots, sampling, elicitation).

use serde_json::Value;

use crate::face::app::init::yaml::{flow, literal};
use crate::face::app::record::session::{Ask, Session};
use crate::ground::yaml::write::{quoted, scalar};
use crate::protocol::methods;

/// The `client:` block: the capabilities the client declared and its answers, in the order
/// it gave them (the first whose `when` holds answers).
pub(super) fn client_block(session: &Session, notes: &mut Vec<String>) -> String {
    let caps = &session.capabilities;
    let has = |k: &str| caps.get(k).is_some();
    if !(has("roots") || has("sampling") || has("elicitation")) {
        if !session.asks.is_empty() {
            notes.push(
                "the server asked the client, which declared no capability for it: not scripted"
                    .into(),
            );
        }
        return String::new();
    }
    let mut out = String::from("client:\n  capabilities:\n");
    if let Some(r) = caps.get("roots") {
        let list_changed = r
            .get("listChanged")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        out.push_str(&format!("    roots: {{listChanged: {list_changed}}}\n"));
    }
    if let Some(s) = caps.get("sampling") {
        let mut parts = Vec::new();
        if s.get("tools").is_some() {
            parts.push("tools: true");
        }
        if s.get("context").is_some() {
            parts.push("context: true");
        }
        out.push_str(&format!("    sampling: {{{}}}\n", parts.join(", ")));
    }
    if let Some(e) = caps.get("elicitation") {
        let url = e.get("url").is_some();
        out.push_str(&format!(
            "    elicitation: {{form: true{}}}\n",
            if url { ", url: true" } else { "" }
        ));
    }
    if has("roots") {
        out.push_str("  roots:\n");
        let roots = session
            .asks
            .iter()
            .rev()
            .find(|a| a.method == methods::ROOTS_LIST)
            .and_then(|a| a.answer.as_ref().ok())
            .and_then(|r| r.get("roots"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if roots.is_empty() {
            out.push_str("    []   # the server did not ask for roots while recording\n");
        }
        for root in roots {
            let uri = root.get("uri").and_then(Value::as_str).unwrap_or_default();
            out.push_str(&format!("    - uri: {}\n", scalar(&literal(uri))));
            if let Some(name) = root.get("name").and_then(Value::as_str) {
                out.push_str(&format!("      name: {}\n", scalar(name)));
            }
        }
    }
    if has("sampling") {
        out.push_str("  sampling:\n");
        let answers = answers_of(
            session,
            methods::SAMPLING_CREATE_MESSAGE,
            "$.params.messages",
            sampling_answer,
        );
        if answers.is_empty() {
            out.push_str(
                "    - refuse: true   # the server did not ask for sampling while recording\n",
            );
        }
        out.push_str(&answers);
    }
    if has("elicitation") {
        out.push_str("  elicitation:\n");
        let answers = answers_of(
            session,
            methods::ELICITATION_CREATE,
            "$.params.message",
            elicitation_answer,
        );
        if answers.is_empty() {
            out.push_str("    - action: decline   # the server did not ask while recording\n");
        }
        out.push_str(&answers);
    }
    out
}

/// The recorded answers to `method`, each matched by `when_path` equal to what the server
/// sent when the answers differ.
fn answers_of(
    session: &Session,
    method: &str,
    when_path: &str,
    answer: fn(&Result<Value, Value>) -> Vec<String>,
) -> String {
    let asks: Vec<&Ask> = session.asks.iter().filter(|a| a.method == method).collect();
    let mut seen: Vec<(String, Vec<String>)> = Vec::new();
    for a in &asks {
        let key = crate::ground::json::path::CompiledPath::parse(when_path)
            .ok()
            .and_then(|p| {
                let doc = request_doc(a);
                p.query(&doc).first().cloned()
            })
            .unwrap_or(Value::Null);
        let text = answer(&a.answer);
        let when = flow(&key);
        if !seen.iter().any(|(w, _)| *w == when) {
            seen.push((when, text));
        }
    }
    let same = seen.windows(2).all(|w| w[0].1 == w[1].1);
    let mut out = String::new();
    for (i, (when, parts)) in seen.iter().enumerate() {
        if same && i > 0 {
            break;
        }
        if same {
            out.push_str(&format!("    - {{ {} }}\n", parts.join(", ")));
        } else {
            out.push_str(&format!(
                "    - when: {{ path: {}, equals: {when} }}\n",
                quoted(when_path)
            ));
            for part in parts {
                out.push_str(&format!("      {part}\n"));
            }
        }
    }
    out
}

/// The server's request as the `when` of an answer sees it: the whole message (a modern
/// input request carries `method` and `params` alone).
fn request_doc(a: &Ask) -> Value {
    a.request.clone()
}

fn sampling_answer(answer: &Result<Value, Value>) -> Vec<String> {
    match answer {
        Err(_) => vec!["refuse: true".into()],
        Ok(r) => {
            let content = r.get("content");
            let blocks: Vec<Value> = match content {
                Some(Value::Array(items)) => items.clone(),
                Some(one) => vec![one.clone()],
                None => Vec::new(),
            };
            let mut parts = Vec::new();
            for b in &blocks {
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => parts.push(format!(
                        "text: {}",
                        scalar(&literal(
                            b.get("text").and_then(Value::as_str).unwrap_or_default()
                        ))
                    )),
                    Some("tool_use") => parts.push(format!(
                        "toolUse: {{name: {}, input: {}, id: {}}}",
                        scalar(b.get("name").and_then(Value::as_str).unwrap_or_default()),
                        flow(b.get("input").unwrap_or(&Value::Null)),
                        scalar(b.get("id").and_then(Value::as_str).unwrap_or("toolu_1"))
                    )),
                    _ => {}
                }
            }
            if let Some(m) = r.get("model").and_then(Value::as_str) {
                parts.push(format!("model: {}", scalar(m)));
            }
            if let Some(s) = r.get("stopReason").and_then(Value::as_str) {
                parts.push(format!("stopReason: {}", scalar(s)));
            }
            parts
        }
    }
}

fn elicitation_answer(answer: &Result<Value, Value>) -> Vec<String> {
    match answer {
        Err(_) => vec!["action: decline".into()],
        Ok(r) => {
            let action = r.get("action").and_then(Value::as_str).unwrap_or("decline");
            match r.get("content") {
                Some(c) if action == "accept" => {
                    vec!["action: accept".into(), format!("content: {}", flow(c))]
                }
                _ => vec![format!("action: {}", scalar(action))],
            }
        }
    }
}
