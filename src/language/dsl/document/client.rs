//! The client a scenario plays: the capabilities it declares and its scripted answers to
//! what the server asks back (roots, elicitation, sampling), the same in both eras.

use schemars::JsonSchema;
use serde::Deserialize;

use super::expect::Expectation;
use crate::ground::yaml::value::{At, TValue};

/// `client:` of a scenario (else of its pack, else of `mcpspec.yaml`: each a default for
/// the next). The capabilities declared go in the legacy `initialize` and in every modern
/// request's `_meta`; each declared capability needs its answers.
#[derive(Debug, Clone, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[serde(rename = "Client")]
pub struct ClientDoc {
    /// The client capabilities declared: `roots`, `sampling`, `elicitation`.
    #[serde(default)]
    pub capabilities: Option<At<ClientCapabilitiesDoc>>,
    /// `roots/list` is answered with these roots (file URIs; templates allowed).
    #[serde(default)]
    pub roots: Option<At<Vec<RootDoc>>>,
    /// Answers to `elicitation/create`, the first whose `when` holds.
    #[serde(default)]
    pub elicitation: Option<At<Vec<At<ElicitationAnswerDoc>>>>,
    /// Answers to `sampling/createMessage`, the first whose `when` holds.
    #[serde(default)]
    pub sampling: Option<At<Vec<At<SamplingAnswerDoc>>>>,
    /// Modern era: how many `input_required` rounds a request may take before the step
    /// fails (default 8).
    #[serde(default)]
    #[schemars(range(min = *super::limits::MAX_ROUNDS.start(), max = *super::limits::MAX_ROUNDS.end()))]
    pub max_rounds: Option<At<u32>>,
}

/// Client capabilities, as in the spec's `ClientCapabilities`.
#[derive(Debug, Clone, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClientCapabilitiesDoc {
    #[serde(default)]
    pub roots: Option<At<RootsCapabilityDoc>>,
    #[serde(default)]
    pub sampling: Option<At<SamplingCapabilityDoc>>,
    #[serde(default)]
    pub elicitation: Option<At<ElicitationCapabilityDoc>>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RootsCapabilityDoc {
    /// Declare `listChanged` (legacy: the client may notify a change of its roots).
    #[serde(default)]
    pub list_changed: bool,
}

#[derive(Debug, Clone, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SamplingCapabilityDoc {
    /// Declare `sampling.tools` (tool use inside sampling).
    #[serde(default)]
    pub tools: bool,
    /// Declare `sampling.context` (`includeContext` other than `none`).
    #[serde(default)]
    pub context: bool,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ElicitationCapabilityDoc {
    /// Form-mode elicitation (default `true`).
    #[serde(default = "yes")]
    pub form: bool,
    /// URL-mode elicitation.
    #[serde(default)]
    pub url: bool,
}

impl Default for ElicitationCapabilityDoc {
    fn default() -> Self {
        Self {
            form: true,
            url: false,
        }
    }
}

fn yes() -> bool {
    true
}

/// One root of `roots/list`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RootDoc {
    /// A `file://` URI (templates allowed).
    pub uri: TValue,
    #[serde(default)]
    pub name: Option<String>,
}

/// What the user does with an elicitation.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    Accept,
    Decline,
    Cancel,
}

impl ElicitAction {
    pub fn name(self) -> &'static str {
        match self {
            ElicitAction::Accept => "accept",
            ElicitAction::Decline => "decline",
            ElicitAction::Cancel => "cancel",
        }
    }
}

/// One answer to `elicitation/create`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ElicitationAnswerDoc {
    /// Answer only requests on which this holds: a `path` on the whole request (e.g.
    /// `$.params.message`) and predicates, as in `expect`.
    #[serde(default)]
    pub when: Option<At<Expectation>>,
    pub action: At<ElicitAction>,
    /// With `accept` in form mode: the fields sent (templates allowed), over the requested
    /// schema's `default`s (SEP-1034). Without it, the defaults alone. URL mode sends none.
    #[serde(default)]
    pub content: Option<TValue>,
}

/// One answer to `sampling/createMessage`: a canned `CreateMessageResult` (text, a tool
/// use, or both), a model profile's real answer, or a refusal.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SamplingAnswerDoc {
    /// Answer only requests on which this holds (see elicitation's `when`).
    #[serde(default)]
    pub when: Option<At<Expectation>>,
    /// The assistant message's text (templates allowed).
    #[serde(default)]
    pub text: Option<TValue>,
    /// The model name reported (default `mcpspec-scripted`).
    #[serde(default)]
    pub model: Option<String>,
    /// The stop reason (default `endTurn`; `toolUse` with `toolUse:`).
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// Sampling with tools (2025-11-25): the assistant calls one of the tools the request
    /// offers, a `tool_use` content block. The server's next request, carrying the
    /// `tool_result`, is matched by `when:` as any other.
    #[serde(default)]
    pub tool_use: Option<At<ToolUseDoc>>,
    /// A real model answers instead of the script: the name of a model profile of the
    /// run's `--models FILE` (the `models:` of an eval set). The server's messages,
    /// `systemPrompt`, `maxTokens`, `temperature`, `stopSequences` and `tools` go to the
    /// model; its reply (text or tool uses) is the `CreateMessageResult`.
    #[serde(default)]
    pub profile: Option<At<String>>,
    /// `true`: the user rejects the request (JSON-RPC error -1, "User rejected sampling
    /// request").
    #[serde(default)]
    pub refuse: bool,
}

/// A scripted `tool_use` content block of a sampling answer.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolUseDoc {
    /// The tool called (one of the request's `tools`).
    pub name: String,
    /// Its arguments (an object; templates allowed; default `{}`).
    #[serde(default)]
    pub input: Option<TValue>,
    /// The tool use's id (default `toolu_1`), which the server's `tool_result` must name.
    #[serde(default)]
    pub id: Option<String>,
}
