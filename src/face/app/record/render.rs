//! A session as scenarios a person would write: steps named after what they do, ids
//! captured and templated into the later requests that use them, volatile values matched by
//! pattern, expectations from what the server answered, and the client's answers to the
//! server's requests as a `client:` script.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use regex::Regex;
use serde_json::Value;

mod client;
mod expect;
mod values;

use super::session::{Call, CallOutcome, EraUsed, Session};
use crate::face::app::init::yaml::slug;
use crate::face::cli::{ExpectMode, Split};
use crate::ground::yaml::write::{quoted, scalar};
use crate::language::assert::golden;
use crate::protocol::{ListKind, methods};
use client::client_block;
use expect::{Known, expectations};
use values::{Templater, collect_candidates};

pub struct Options {
    pub name: String,
    pub expect: ExpectMode,
    pub split: Split,
    pub eras: Eras,
}

/// The `eras:` of the written scenarios: both, or the recorded one and why only it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Eras {
    Both,
    Only(String),
}

/// A file to write, relative to the recording folder.
pub struct File {
    pub path: PathBuf,
    pub text: String,
}

pub struct Rendered {
    pub files: Vec<File>,
    pub notes: Vec<String>,
    /// Parameters the scenarios need (`--set NAME=env:VAR`), from the secrets scrubbed.
    pub parameters: BTreeSet<String>,
}

/// The folder of the scenario files, inside the recording folder.
pub const SCENARIO_DIR: &str = "scenarios";
/// At most this many expectations per step; the rest is left to a snapshot.
const MAX_EXPECTATIONS: usize = 24;
/// Strings longer than this are judged by type, not value.
const MAX_EQUALS_TEXT: usize = 300;

/// One step as it will be written.
struct Step {
    name: String,
    /// The tool a `tools/call` called.
    tool: Option<String>,
    /// `request:` as YAML (flow), templates in place.
    request: String,
    /// Expectation lines (flow mappings).
    expect: Vec<String>,
    comments: Vec<String>,
    /// `capture:` name → JSONPath.
    captures: BTreeMap<String, String>,
    /// Variables its request uses, by the step that captures them.
    uses: BTreeSet<usize>,
    /// A golden file: (name, text).
    golden: Option<(String, String)>,
}

/// A value a result held that a later request may send back (an id).
struct Candidate {
    value: String,
    step: usize,
    path: String,
    key: String,
    var: Option<String>,
}

pub fn render(session: &Session, opts: &Options) -> Rendered {
    let mut notes = Vec::new();
    let mut parameters = BTreeSet::new();
    let era = session.era.unwrap_or(EraUsed::Legacy);
    if session.era.is_none() {
        notes.push(
            "the client sent neither `initialize` nor a modern `_meta`: the scenarios are written for the legacy era".into(),
        );
    }
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut vars_taken: BTreeSet<String> = BTreeSet::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut names_taken: BTreeMap<String, usize> = BTreeMap::new();
    for call in &session.calls {
        let index = steps.len();
        let tools = steps_tools(&steps);
        let mut templater = Templater {
            candidates: &mut candidates,
            vars_taken: &mut vars_taken,
            parameters: &mut parameters,
            tools: &tools,
            uses: BTreeSet::new(),
            masked: false,
        };
        let params = call.params.as_ref().map(|p| templater.flow(p));
        let (uses, masked) = (templater.uses, templater.masked);
        let base = readable_name(&step_name(call), &candidates);
        let n = names_taken.entry(base.clone()).or_insert(0);
        *n += 1;
        let name = if *n == 1 {
            base
        } else {
            format!("{base} #{n}")
        };
        let mut request = format!("{{ method: {}", scalar(&call.method));
        if let Some(p) = &params {
            request.push_str(&format!(", params: {p}"));
        }
        request.push_str(" }");
        let mut step = Step {
            name,
            tool: tool_of(call),
            request,
            expect: Vec::new(),
            comments: Vec::new(),
            captures: BTreeMap::new(),
            uses,
            golden: None,
        };
        if masked {
            step.comments.push(
                "a secret-shaped value the client sent is written as *** (the recording never holds it); put a parameter there".into(),
            );
        }
        let known: BTreeMap<String, String> = candidates
            .iter()
            .filter_map(|c| c.var.clone().map(|v| (c.value.clone(), v)))
            .collect();
        match &call.outcome {
            CallOutcome::Result(result) => {
                let mut known = Known {
                    vars: &known,
                    parameters: &mut parameters,
                    masked: false,
                };
                expectations(call, result, &mut known, opts.expect, &mut step);
                if known.masked {
                    step.comments.push(
                        "the answer held a secret-shaped value (*** in the recording): judged by type only".into(),
                    );
                }
                collect_candidates(result, index, &mut candidates);
            }
            CallOutcome::Error(error) => {
                let code = error.get("code").cloned().unwrap_or(Value::Null);
                step.expect.push(format!("error: {{ code: {code} }}"));
            }
            CallOutcome::Unanswered => {
                notes.push(format!(
                    "`{}` got no answer before the session ended: not written as a step",
                    step.name
                ));
                continue;
            }
        }
        steps.push(step);
    }
    // Captures go to the steps that produced the values later requests used.
    for c in &candidates {
        if let Some(var) = &c.var {
            steps[c.step].captures.insert(var.clone(), c.path.clone());
        }
    }
    let client = client_block(session, &mut notes);
    let mut files = Vec::new();
    let groups: Vec<(String, Vec<usize>)> = match opts.split {
        Split::Session => vec![(opts.name.clone(), (0..steps.len()).collect())],
        Split::Tool => by_tool(&steps, &opts.name),
    };
    for (id, members) in groups {
        let file = PathBuf::from(SCENARIO_DIR).join(format!("{id}.yaml"));
        let mut text = format!(
            "# Recorded by `mcpspec record`: {} of the session{}.\n",
            plural(members.len(), "step"),
            match &session.end {
                Some((end, detail)) => format!(" (it ended: {} — {detail})", end_word(*end)),
                None => String::new(),
            }
        );
        text.push_str(&format!("scenario: {}\n", scalar(&id)));
        match &opts.eras {
            Eras::Both => text.push_str("eras: [legacy, modern]\n"),
            Eras::Only(why) => {
                text.push_str(&format!("# {} only: {why}\n", era.label()));
                text.push_str(&format!("eras: [{}]\n", era.label()));
            }
        }
        let used: BTreeSet<String> = members
            .iter()
            .flat_map(|&i| parameter_uses(&steps[i].request))
            .filter(|p| parameters.contains(p))
            .collect();
        if !used.is_empty() {
            let list: Vec<String> = used.iter().map(|p| scalar(p)).collect();
            text.push_str(&format!(
                "requires:\n  parameters: [{}]   # secrets the client sent: run with --set NAME=env:VAR\n",
                list.join(", ")
            ));
        }
        text.push_str(&client);
        text.push_str("steps:\n");
        for &i in &members {
            let step = &steps[i];
            for c in &step.comments {
                text.push_str(&format!("  # {c}\n"));
            }
            text.push_str(&format!("  - name: {}\n", quoted(&step.name)));
            text.push_str(&format!("    request: {}\n", step.request));
            if !step.expect.is_empty() {
                text.push_str("    expect:\n");
                for e in &step.expect {
                    text.push_str(&format!("      - {e}\n"));
                }
            }
            if !step.captures.is_empty() {
                text.push_str("    capture:\n");
                for (var, path) in &step.captures {
                    text.push_str(&format!("      {var}: {}\n", quoted(path)));
                }
            }
            if let Some((name, golden)) = &step.golden {
                files.push(File {
                    path: PathBuf::from(SCENARIO_DIR)
                        .join("__snapshots__")
                        .join(&id)
                        .join(format!("{name}.json")),
                    text: golden.clone(),
                });
            }
        }
        files.push(File { path: file, text });
    }
    if session.server_notifications > 0 {
        notes.push(format!(
            "{} from the server not turned into expectations (add `notifications:` expectations where they matter)",
            plural(session.server_notifications, "notification")
        ));
    }
    let sent: BTreeSet<&String> = session.client_notifications.iter().collect();
    if !sent.is_empty() {
        let list: Vec<&str> = sent.iter().map(|s| s.as_str()).collect();
        notes.push(format!(
            "notifications the client sent are not replayed: {}",
            list.join(", ")
        ));
    }
    if session.malformed > 0 {
        notes.push(format!(
            "{} on the wire were not JSON (forwarded as they were; see the tape)",
            plural(session.malformed, "line")
        ));
    }
    Rendered {
        files,
        notes,
        parameters,
    }
}

fn steps_tools(steps: &[Step]) -> Vec<Option<String>> {
    steps.iter().map(|s| s.tool.clone()).collect()
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn end_word(end: crate::run::record::End) -> &'static str {
    use crate::run::record::End;
    match end {
        End::ClientClosed => "the client closed the session",
        End::ServerExited => "the server exited",
        End::ServerCrashed => "THE SERVER CRASHED",
        End::Interrupted => "interrupted",
    }
}

fn tool_of(call: &Call) -> Option<String> {
    (call.method == methods::TOOLS_CALL)
        .then(|| param_str(call, "name"))
        .flatten()
}

fn param_str(call: &Call, key: &str) -> Option<String> {
    call.params
        .as_ref()
        .and_then(|p| p.get(key))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// A step's name: what it does, as a person would say it.
fn step_name(call: &Call) -> String {
    let arg = |k| param_str(call, k).unwrap_or_default();
    match call.method.as_str() {
        methods::TOOLS_CALL => format!("call {}", arg("name")),
        methods::RESOURCES_READ => format!("read {}", arg("uri")),
        methods::RESOURCES_SUBSCRIBE => format!("subscribe to {}", arg("uri")),
        methods::RESOURCES_UNSUBSCRIBE => format!("unsubscribe from {}", arg("uri")),
        methods::PROMPTS_GET => format!("get prompt {}", arg("name")),
        methods::LOGGING_SET_LEVEL => format!("set the log level to {}", arg("level")),
        methods::COMPLETION_COMPLETE => "complete an argument".into(),
        m => match ListKind::from_method(m) {
            Some(ListKind::Tools) => "list tools".into(),
            Some(ListKind::Resources) => "list resources".into(),
            Some(ListKind::ResourceTemplates) => "list resource templates".into(),
            Some(ListKind::Prompts) => "list prompts".into(),
            None => m.to_string(),
        },
    }
}

/// A step's name with the captured values it holds as `<variable>` and volatile parts as
/// `<uuid>` / `<timestamp>`: the same name on every recording.
fn readable_name(name: &str, candidates: &[Candidate]) -> String {
    let mut out = name.to_string();
    for c in candidates.iter().rev() {
        if let Some(var) = &c.var
            && c.value.len() >= 4
            && out.contains(&c.value)
        {
            out = out.replace(&c.value, &format!("<{var}>"));
        }
    }
    let out = golden::UUID.replace_all(&out, "<uuid>");
    golden::TIMESTAMP
        .replace_all(&out, "<timestamp>")
        .into_owned()
}

static PARAM_USE: std::sync::LazyLock<Regex> =
    std::sync::LazyLock::new(|| Regex::new(r"\{\{ ([a-z0-9_]+) \}\}").expect("compiles"));

fn parameter_uses(request: &str) -> Vec<String> {
    PARAM_USE
        .captures_iter(request)
        .map(|c| c[1].to_string())
        .collect()
}

/// `--split tool`: a scenario per tool called (its steps, after the earlier steps whose
/// values they use), and one for the rest.
fn by_tool(steps: &[Step], name: &str) -> Vec<(String, Vec<usize>)> {
    let mut groups: BTreeMap<String, BTreeSet<usize>> = BTreeMap::new();
    let mut rest = BTreeSet::new();
    for (i, s) in steps.iter().enumerate() {
        match &s.tool {
            Some(t) => {
                groups.entry(t.clone()).or_default().insert(i);
            }
            None => {
                rest.insert(i);
            }
        }
    }
    let mut out = Vec::new();
    if !rest.is_empty() {
        out.push((name.to_string(), rest));
    }
    for (tool, members) in groups {
        out.push((format!("{name}-{}", slug(&tool)), members));
    }
    out.into_iter()
        .map(|(id, members)| {
            // The steps whose captures these use, transitively.
            let mut all = members.clone();
            let mut todo: Vec<usize> = members.into_iter().collect();
            while let Some(i) = todo.pop() {
                for &dep in &steps[i].uses {
                    if all.insert(dep) {
                        todo.push(dep);
                    }
                }
            }
            (id, all.into_iter().collect())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::face::app::record::session::Session;
    use crate::run::record::{Entry, From};
    use serde_json::json;

    fn session(msgs: Vec<(From, Value)>) -> Session {
        let entries: Vec<Entry> = msgs
            .into_iter()
            .map(|(from, msg)| Entry::Message { ms: 0, from, msg })
            .collect();
        Session::read(&entries)
    }

    #[test]
    fn ids_become_captures_and_volatile_values_patterns() {
        let s = session(vec![
            (
                From::Client,
                json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}),
            ),
            (From::Server, json!({"jsonrpc":"2.0","id":0,"result":{}})),
            (
                From::Client,
                json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_note","arguments":{"title":"t"}}}),
            ),
            (
                From::Server,
                json!({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"created"}],"structuredContent":{"id":"0b4e7f4a-8a43-4d47-9a0c-7d6f1c2b9e11","at":"2026-12-07T04:00:00Z"}}}),
            ),
            (
                From::Client,
                json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_note","arguments":{"id":"0b4e7f4a-8a43-4d47-9a0c-7d6f1c2b9e11","key":"<param:api_token>"}}}),
            ),
            (
                From::Server,
                json!({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"note 0b4e7f4a-8a43-4d47-9a0c-7d6f1c2b9e11"}]}}),
            ),
        ]);
        let r = render(
            &s,
            &Options {
                name: "recorded".into(),
                expect: ExpectMode::Shape,
                split: Split::Session,
                eras: Eras::Only("a test".into()),
            },
        );
        let text = &r.files[0].text;
        assert!(
            text.contains("create_note_id: \"$.structuredContent.id\""),
            "{text}"
        );
        assert!(text.contains("id: \"{{ create_note_id }}\""), "{text}");
        assert!(text.contains("key: \"{{ api_token }}\""), "{text}");
        assert!(text.contains("parameters: [api_token]"), "{text}");
        assert!(text.contains("matches: \"^\\\\d{4}"), "{text}");
        assert!(!text.contains("0b4e7f4a"), "{text}");
        assert_eq!(r.parameters.iter().collect::<Vec<_>>(), ["api_token"]);
    }
}
