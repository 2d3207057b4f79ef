//! The client a scenario plays, compiled: the capabilities object it declares and its
//! scripted answers, each with its `when` compiled once (the expectation machinery).

use serde_json::Value;

use super::expect::Expect;
use crate::ground::yaml::value::TValue;
use crate::language::dsl::document::ElicitAction;

/// Default bound on the `input_required` rounds of one request (modern era).
pub const DEFAULT_MAX_ROUNDS: u32 = 8;

#[derive(Debug)]
pub struct ClientScript {
    /// The spec's `ClientCapabilities` object, as sent.
    pub capabilities: Value,
    /// `roots/list`'s roots (a `roots` step replaces them for its scenario).
    pub roots: Roots,
    /// `roots: {listChanged: true}` is declared: the client notifies a change of its roots.
    pub roots_list_changed: bool,
    pub elicitation: Vec<Answer<ElicitReply>>,
    pub sampling: Vec<Answer<SamplingReply>>,
    pub max_rounds: u32,
}

/// A list of roots: (uri, name), the uri a template.
pub type Roots = Vec<(TValue, Option<String>)>;

/// One scripted answer: used when `when` holds on the server's request (or always).
#[derive(Debug)]
pub struct Answer<T> {
    pub when: Option<Expect>,
    pub reply: T,
}

#[derive(Debug)]
pub struct ElicitReply {
    pub action: ElicitAction,
    /// `accept`: fields over the requested schema's defaults.
    pub content: Option<TValue>,
}

#[derive(Debug)]
pub enum SamplingReply {
    Message {
        text: Option<TValue>,
        /// A `tool_use` block (sampling with tools).
        tool_use: Option<ToolUseReply>,
        model: String,
        stop_reason: String,
    },
    Refuse,
    /// A real model answers: the run's model profile of this name.
    Profile(String),
}

impl ClientScript {
    /// Whether the capability `name` (`roots`, `sampling`, `elicitation`) is declared.
    pub fn declares(&self, name: &str) -> bool {
        self.capabilities.get(name).is_some()
    }
}

/// A scripted `tool_use` content block.
#[derive(Debug)]
pub struct ToolUseReply {
    pub id: String,
    pub name: String,
    /// The arguments (a template), `{}` when none.
    pub input: Option<TValue>,
}

/// A `roots` step (at `at`) in a scenario whose client does not declare `roots` (`None`:
/// no client at all): the error at the step.
pub fn roots_undeclared(
    client: Option<&ClientScript>,
    at: &crate::ground::source::Pos,
) -> Option<crate::ground::load_error::LoadError> {
    if client.is_some_and(|c| c.declares("roots")) {
        return None;
    }
    let why = if client.is_some() {
        "a `roots` step, but the scenario's client does not declare `roots`"
    } else {
        "a `roots` step, but the scenario declares no client"
    };
    Some(
        crate::ground::load_error::LoadError::at(at.clone(), why).with_help(
            "declare `client: {capabilities: {roots: {listChanged: true}}, roots: [{uri: file:///…}]}` in the scenario, its pack or mcpspec.yaml",
        ),
    )
}
