//! `client:`: the capabilities object declared and the scripted answers, each `when`
//! compiled as an expectation. A declared capability without an answer is an error here.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::{BUILTIN_VARS, Compiler};
use crate::ground::load_error::{LoadError, LoadErrors};
use crate::ground::source::SourceFile;
use crate::ground::yaml::value::At;
use crate::language::dsl::document::{ClientCapabilitiesDoc, ClientDoc};
use crate::language::dsl::scenario::expect::Expect;
use crate::language::dsl::scenario::{
    Answer, ClientScript, DEFAULT_MAX_ROUNDS, ElicitReply, Roots, SamplingReply, ToolUseReply,
};
use crate::language::dsl::{document, limits};

/// The model name of a scripted sampling answer that names none.
const SCRIPTED_MODEL: &str = "mcpspec-scripted";
/// The id of a scripted tool use that names none.
const SCRIPTED_TOOL_USE_ID: &str = "toolu_1";

impl Compiler {
    pub(super) fn client(
        &mut self,
        doc: At<ClientDoc>,
        known: &BTreeSet<String>,
    ) -> Option<ClientScript> {
        let doc = doc.value;
        let declared = doc.capabilities.as_ref().map(|c| &c.value);
        let capabilities = declared.map_or_else(|| Value::Object(Map::new()), capabilities_object);
        self.check_answered(&doc);
        let roots = self.roots(doc.roots.map(|r| r.value).unwrap_or_default(), known);
        let roots_list_changed = declared
            .and_then(|c| c.roots.as_ref())
            .is_some_and(|r| r.list_changed);
        let mut elicitation = Vec::new();
        for answer in doc.elicitation.map(|a| a.value).unwrap_or_default() {
            let answer = answer.value;
            if let Some(content) = &answer.content {
                self.check_templates(content, known);
            }
            let when = self.when(answer.when, known);
            elicitation.push(Answer {
                when,
                reply: ElicitReply {
                    action: answer.action.value,
                    content: answer.content,
                },
            });
        }
        let mut sampling = Vec::new();
        for answer in doc.sampling.map(|a| a.value).unwrap_or_default() {
            let at = self.at(&answer);
            let answer = answer.value;
            let reply = if let Some(profile) = answer.profile {
                let given = [
                    (answer.refuse, "refuse"),
                    (answer.text.is_some(), "text"),
                    (answer.tool_use.is_some(), "toolUse"),
                    (answer.model.is_some(), "model"),
                    (answer.stop_reason.is_some(), "stopReason"),
                ];
                if let Some((_, key)) = given.iter().find(|(set, _)| *set) {
                    self.error(
                        at,
                        format!("a sampling answer from a model `profile` takes no `{key}`: the model gives it"),
                    );
                }
                SamplingReply::Profile(profile.value)
            } else if answer.refuse {
                if answer.text.is_some() || answer.tool_use.is_some() {
                    self.error(
                        at,
                        "a sampling answer either refuses or gives a `text` or `toolUse`, not both",
                    );
                }
                SamplingReply::Refuse
            } else {
                if let Some(text) = &answer.text {
                    self.check_templates(text, known);
                }
                let tool_use = answer.tool_use.map(|t| {
                    let t = t.value;
                    if let Some(input) = &t.input {
                        self.check_templates(input, known);
                    }
                    ToolUseReply {
                        id: t.id.unwrap_or_else(|| SCRIPTED_TOOL_USE_ID.into()),
                        name: t.name,
                        input: t.input,
                    }
                });
                let stop_reason = answer.stop_reason.unwrap_or_else(|| {
                    if tool_use.is_some() {
                        "toolUse"
                    } else {
                        "endTurn"
                    }
                    .into()
                });
                SamplingReply::Message {
                    text: answer.text,
                    tool_use,
                    model: answer.model.unwrap_or_else(|| SCRIPTED_MODEL.into()),
                    stop_reason,
                }
            };
            let when = self.when(answer.when, known);
            sampling.push(Answer { when, reply });
        }
        let max_rounds = match doc.max_rounds {
            Some(n) if !limits::MAX_ROUNDS.contains(&n.value) => {
                let range = limits::describe(&limits::MAX_ROUNDS);
                self.error(self.at(&n), format!("`maxRounds` is {range}"));
                DEFAULT_MAX_ROUNDS
            }
            Some(n) => n.value,
            None => DEFAULT_MAX_ROUNDS,
        };
        Some(ClientScript {
            capabilities,
            roots,
            roots_list_changed,
            elicitation,
            sampling,
            max_rounds,
        })
    }

    /// A list of roots (`client: {roots}` or a `roots` step), its uri templates checked.
    pub(super) fn roots(
        &mut self,
        roots: Vec<crate::language::dsl::document::RootDoc>,
        known: &BTreeSet<String>,
    ) -> Roots {
        roots
            .into_iter()
            .map(|root| {
                self.check_templates(&root.uri, known);
                (root.uri, root.name)
            })
            .collect()
    }

    /// Each declared capability has its answers: else an error at its declaration.
    fn check_answered(&mut self, doc: &ClientDoc) {
        let Some(caps) = doc.capabilities.as_ref() else {
            return;
        };
        let checks = [
            (
                caps.roots.as_ref().map(|a| self.at(a)),
                doc.roots.is_some(),
                "roots",
                "add `roots:` (a list of `{uri: file:///…}`), or leave `roots` out of `capabilities`",
            ),
            (
                caps.sampling.as_ref().map(|a| self.at(a)),
                doc.sampling.as_ref().is_some_and(|a| !a.is_empty()),
                "sampling",
                "add `sampling:` answers (`- text: …`), or leave `sampling` out of `capabilities`",
            ),
            (
                caps.elicitation.as_ref().map(|a| self.at(a)),
                doc.elicitation.as_ref().is_some_and(|a| !a.is_empty()),
                "elicitation",
                "add `elicitation:` answers (`- action: accept`), or leave `elicitation` out of `capabilities`",
            ),
        ];
        for (at, answered, name, help) in checks {
            if let Some(at) = at.filter(|_| !answered) {
                let message = format!("the client declares `{name}` but has no answer for it");
                self.errors.push(LoadError::at(at, message).with_help(help));
            }
        }
    }

    /// A `when:` compiled as an expectation on the server's whole request.
    fn when(
        &mut self,
        when: Option<At<document::Expectation>>,
        known: &BTreeSet<String>,
    ) -> Option<Expect> {
        let when = when?;
        let pos = self.at(&when);
        self.expectation(when.value, pos, known)
    }
}

/// The spec's `ClientCapabilities` for what is declared.
fn capabilities_object(c: &ClientCapabilitiesDoc) -> Value {
    let mut caps = Map::new();
    if let Some(roots) = &c.roots {
        let mut r = Map::new();
        if roots.list_changed {
            r.insert("listChanged".into(), json!(true));
        }
        caps.insert("roots".into(), Value::Object(r));
    }
    if let Some(sampling) = &c.sampling {
        let mut s = Map::new();
        if sampling.context {
            s.insert("context".into(), json!({}));
        }
        if sampling.tools {
            s.insert("tools".into(), json!({}));
        }
        caps.insert("sampling".into(), Value::Object(s));
    }
    if let Some(elicitation) = &c.elicitation {
        let mut e = Map::new();
        if elicitation.form {
            e.insert("form".into(), json!({}));
        }
        if elicitation.url {
            e.insert("url".into(), json!({}));
        }
        caps.insert("elicitation".into(), Value::Object(e));
    }
    Value::Object(caps)
}

/// Compile a pack's `client:` block (its manifest is `file`): the default of its scenarios.
pub fn compile_client(
    file: &Arc<SourceFile>,
    doc: At<ClientDoc>,
    params: &[String],
) -> Result<ClientScript, LoadErrors> {
    let mut c = Compiler::new(file);
    let mut known: BTreeSet<String> = BUILTIN_VARS.iter().map(|s| s.to_string()).collect();
    known.extend(params.iter().cloned());
    match c.client(doc, &known) {
        Some(script) if c.errors.is_empty() => Ok(script),
        _ => Err(c.errors),
    }
}
