//! The tools that ask the client back (elicitation, sampling, roots): `mcpspec init` probes
//! each era once more as a client that declares every client capability and answers with
//! defaults, calls the read-only tools again, and notes which ones asked (legacy: requests
//! on the connection; 2026-07-28: an `input_required` result's `inputRequests`). Servers
//! such as server-everything list these tools only to a client that declares the
//! capability, so the plain probe cannot see them. Each is written as a scenario that
//! declares what it asked for and answers with the defaults: an elicitation accepted with the
//! requested schema's defaults, a canned sampling text, a placeholder root.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};

use super::probe::is_read_only;
use super::render::File;
use super::yaml;
use crate::ground::yaml::write::scalar;
use crate::protocol::{fields, methods};
use crate::run::client::{Connection, Target};

/// The client the probe plays: every capability, answered with defaults.
const PROBE_CLIENT: &str = "scenario: init-probe\nclient:\n  capabilities:\n    roots: {}\n    sampling: {tools: true}\n    elicitation: {form: true}\n  roots: [{uri: \"file:///tmp/mcpspec-root\", name: placeholder}]\n  elicitation: [{action: accept}]\n  sampling: [{text: A canned answer from mcpspec.}]\nsteps:\n  - name: l\n    request: {method: tools/list}\n";

/// The folder (under the pack) of the interactive tools' scenarios.
const ASKS_DIR: &str = "asks";

/// One tool that asked the client something.
pub struct Asking {
    pub tool: String,
    pub arguments: Value,
    /// The methods it asked (`elicitation/create`, …).
    pub methods: BTreeSet<String>,
    /// A sampling request of it offered tools (`sampling.tools` is then declared).
    pub sampling_tools: bool,
    /// The eras it asked in.
    pub eras: Vec<String>,
}

fn probe_answerer() -> Option<Arc<crate::run::client::answers::Answerer>> {
    let file = crate::ground::source::SourceFile::new("init-probe.yaml", PROBE_CLIENT.to_string());
    let scenario = crate::language::dsl::parse_scenario(file).ok()?;
    let script = scenario.client?;
    Some(Arc::new(crate::run::client::answers::Answerer::new(
        script,
        json!({}),
    )))
}

/// The read-only tools that ask the client back, in each of `eras` (labels).
pub async fn probe(target: &Target, eras: &[String]) -> Vec<Asking> {
    let mut found: Vec<Asking> = Vec::new();
    for label in eras {
        let Ok(request) = crate::protocol::era::EraRequest::parse(label) else {
            continue;
        };
        let Ok(mut conn) = Connection::open_as(target, label, &request, probe_answerer()).await
        else {
            continue;
        };
        for (tool, arguments, asked) in asked_by_tools(&mut conn).await {
            let methods: BTreeSet<String> = asked
                .iter()
                .filter_map(|r| r.get("method").and_then(Value::as_str).map(String::from))
                .collect();
            let sampling_tools = asked.iter().any(|r| {
                r.get("method").and_then(Value::as_str) == Some(methods::SAMPLING_CREATE_MESSAGE)
                    && r.pointer("/params/tools").is_some()
            });
            match found.iter_mut().find(|a| a.tool == tool) {
                Some(a) => {
                    a.methods.extend(methods);
                    a.sampling_tools |= sampling_tools;
                    a.eras.push(label.clone());
                }
                None => found.push(Asking {
                    tool,
                    arguments,
                    methods,
                    sampling_tools,
                    eras: vec![label.clone()],
                }),
            }
        }
        conn.close().await;
    }
    found
}

/// Each read-only tool that asked something: its name, the example arguments, the requests.
async fn asked_by_tools(conn: &mut Connection) -> Vec<(String, Value, Vec<Value>)> {
    let Ok(tools) = conn.tools().await else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for tool in tools.iter().filter(|t| is_read_only(t)) {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        let Some(arguments) = fields::input_schema(tool).and_then(crate::run::argsgen::example)
        else {
            continue;
        };
        let before = conn.server_requests().len();
        let result = conn
            .call(
                methods::TOOLS_CALL,
                Some(json!({"name": name, "arguments": arguments})),
            )
            .await;
        let mut asked: Vec<Value> = conn.server_requests()[before..].to_vec();
        if let Ok(result) = &result
            && let Some(requests) = result
                .get(fields::INPUT_REQUESTS)
                .and_then(Value::as_object)
        {
            asked.extend(requests.values().cloned());
        }
        if !asked.is_empty() {
            out.push((name.to_string(), arguments, asked));
        }
    }
    out
}

/// A scenario per tool that asks, under the pack's `asks/`.
pub fn files(pack_dir: &Path, found: &[Asking], all_eras: &[String]) -> Vec<File> {
    found
        .iter()
        .map(|a| {
            let path: PathBuf = pack_dir
                .join(ASKS_DIR)
                .join(format!("{}.yaml", yaml::slug(&a.tool)));
            let text = format!(
                "{}{}",
                super::render::modeline(&path, super::render::scenario_schema_name()),
                scenario(a, all_eras)
            );
            File { path, text }
        })
        .collect()
}

fn scenario(a: &Asking, all_eras: &[String]) -> String {
    let asks = |m: &str| a.methods.contains(m);
    let mut out = format!(
        "scenario: asks-{}\ndescription: {}\n",
        yaml::slug(&a.tool),
        scalar(&format!(
            "{} asks the client back ({}); mcpspec answers with defaults",
            a.tool,
            a.methods.iter().cloned().collect::<Vec<_>>().join(", ")
        ))
    );
    if a.eras.len() < all_eras.len() {
        out.push_str(&format!("eras: [{}]\n", a.eras.join(", ")));
    }
    out.push_str("client:\n  capabilities:\n");
    if asks(methods::ROOTS_LIST) {
        out.push_str("    roots: {}\n");
    }
    if asks(methods::SAMPLING_CREATE_MESSAGE) {
        out.push_str(if a.sampling_tools {
            "    sampling: {tools: true}\n"
        } else {
            "    sampling: {}\n"
        });
    }
    if asks(methods::ELICITATION_CREATE) {
        out.push_str("    elicitation: {form: true}\n");
    }
    if asks(methods::ROOTS_LIST) {
        out.push_str("  # a placeholder: put the folders the server may use here\n  roots:\n    - uri: \"file:///tmp/mcpspec-root\"\n      name: placeholder\n");
    }
    if asks(methods::SAMPLING_CREATE_MESSAGE) {
        out.push_str("  # a canned answer; `profile: NAME` asks a real model (run --models FILE)\n  sampling:\n    - text: A canned answer from mcpspec.\n");
    }
    if asks(methods::ELICITATION_CREATE) {
        out.push_str("  # accept, with the requested schema's defaults (add `content:` to fill fields)\n  elicitation:\n    - action: accept\n");
    }
    out.push_str(&format!(
        "steps:\n  - name: {} is carried to its result\n    request:\n      method: tools/call\n      params: {}\n    expect:\n      - isError: false\n",
        scalar(&a.tool),
        yaml::flow(&json!({"name": a.tool, "arguments": a.arguments}))
    ));
    for m in &a.methods {
        out.push_str(&format!("      - asked: {m}\n"));
    }
    out
}
