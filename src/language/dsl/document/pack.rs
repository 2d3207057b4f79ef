//! A pack's manifest: name, version, parameters, requirements, imports, step groups.

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Deserialize;

use super::StepDoc;
use super::client::ClientDoc;
use super::workload::LoadDoc;
use crate::ground::yaml::value::{At, TValue};

/// A pack's manifest (`pack.yaml`): a shareable, versioned folder of scenarios with typed
/// parameters, requirements, imports of other packs and reusable step groups.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "mcpspec pack")]
pub struct PackDoc {
    /// Pack name: lowercase letters, digits and `-` (a built-in pack is imported by name).
    pub name: At<String>,
    /// Semantic version, e.g. `1.4.0` (imports may require a range such as `^1.0`).
    pub version: At<String>,
    /// What the pack checks, in one sentence.
    #[serde(default)]
    pub description: Option<String>,
    /// Typed parameters, available to the pack's scenarios and groups as template
    /// variables. Set them with `--set`, `parameters:` in mcpspec.yaml,
    /// `MCPSPEC_PARAM_<NAME>`, or an importing pack's `with:`.
    #[serde(default)]
    pub parameters: IndexMap<String, At<ParamDecl>>,
    /// What the server must offer; when unmet, every scenario of the pack is skipped with
    /// the reason.
    #[serde(default)]
    pub requires: Option<At<PackRequires>>,
    /// Other packs this one runs too: relative folders or built-in pack names.
    #[serde(default)]
    pub imports: Vec<At<ImportDoc>>,
    /// Scenario files and folders, relative to the pack folder. Default: every `*.yaml`
    /// under the folder except `pack.yaml`.
    #[serde(default)]
    pub scenarios: Option<Vec<At<String>>>,
    /// Reusable step groups, called from a scenario step with `use: NAME`.
    #[serde(default)]
    pub groups: IndexMap<String, At<GroupDoc>>,
    /// The default `fresh` of the pack's scenarios (a scenario's own `fresh` wins):
    /// `false` lets them share a warm server process over stdio, `true` gives each one a
    /// process of its own.
    #[serde(default)]
    pub fresh: Option<bool>,
    /// The default `client:` of the pack's scenarios (a scenario's own wins).
    #[serde(default)]
    pub client: Option<At<ClientDoc>>,
    /// The load profile and budgets of `mcpspec load` when it runs the pack: below the
    /// command line and a scenario's own `load:`, above `mcpspec.yaml`'s. Budgets hold for
    /// the whole run (or a `method` or `tool`); `weight` and `each` belong to a scenario.
    #[serde(default)]
    pub load: Option<At<LoadDoc>>,
}

/// One declared parameter (of a pack or a step group).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ParamDecl {
    /// Value type; values given as text (`--set`, environment) are converted to it.
    #[serde(rename = "type", default)]
    pub type_: ParamType,
    /// Value when none is given. Without one (and without `required`), the parameter
    /// stays unset unless given.
    #[serde(default)]
    pub default: Option<TValue>,
    /// What the parameter means (shown by `mcpspec list`).
    #[serde(default)]
    pub description: Option<String>,
    /// The value is a credential: redacted from every output.
    #[serde(default)]
    pub secret: bool,
    /// Running the pack without a value is an error.
    #[serde(default)]
    pub required: bool,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum ParamType {
    #[default]
    String,
    Number,
    Integer,
    Boolean,
}

impl ParamType {
    pub fn name(self) -> &'static str {
        match self {
            ParamType::String => "string",
            ParamType::Number => "number",
            ParamType::Integer => "integer",
            ParamType::Boolean => "boolean",
        }
    }
}

/// Requirements of a whole pack.
#[derive(Debug, Clone, Deserialize, JsonSchema, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PackRequires {
    /// The connection's era must match one of these (`legacy`, `modern`, a revision).
    #[serde(default)]
    pub eras: Vec<At<String>>,
    /// Server capabilities that must be declared (dotted paths, as in scenarios).
    #[serde(default)]
    pub capabilities: Vec<At<String>>,
}

/// An import of another pack.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ImportDoc {
    /// A folder holding a `pack.yaml` (relative to this pack's folder), or a built-in
    /// pack name such as `conformance-2026-07-28`. One of `pack`, `git`, `archive`.
    #[serde(default)]
    pub pack: Option<At<String>>,
    /// A git repository URL (`https://`, `ssh://`, `git@host:path`, `file://`) holding the
    /// pack; needs `rev:`. Pinned by `mcpspec.lock`.
    #[serde(default)]
    pub git: Option<At<String>>,
    /// With `git:`: a tag, branch or commit.
    #[serde(default)]
    pub rev: Option<At<String>>,
    /// With `git:` or `archive:`: the pack's folder inside the repository or archive
    /// (default: its root).
    #[serde(default)]
    pub path: Option<At<String>>,
    /// A `.tar.gz` or `.zip` URL holding the pack; needs `sha256:`.
    #[serde(default)]
    pub archive: Option<At<String>>,
    /// With `archive:`: the archive's SHA-256, 64 hex digits (`mcpspec pack build` prints it).
    #[serde(default)]
    pub sha256: Option<At<String>>,
    /// With `git:` or `archive:`: `env:VAR`, a token for a private repository or archive
    /// (read from the environment, never written anywhere).
    #[serde(default)]
    pub token: Option<At<String>>,
    /// Required version range (semver, e.g. `^1.0`, `>=1.2, <2`).
    #[serde(default)]
    pub version: Option<At<String>>,
    /// Values for the imported pack's parameters (below `--set`, mcpspec.yaml and the
    /// environment in precedence).
    #[serde(default)]
    pub with: IndexMap<String, TValue>,
}

impl ImportDoc {
    /// What the import names (`pack:`, `git:` or `archive:`), where errors about it point.
    pub fn target(&self) -> Option<&At<String>> {
        self.pack
            .as_ref()
            .or(self.git.as_ref())
            .or(self.archive.as_ref())
    }

    /// A `git:` or `archive:` import, fetched into the cache.
    pub fn is_remote(&self) -> bool {
        self.git.is_some() || self.archive.is_some()
    }
}

/// A reusable sequence of steps with parameters.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GroupDoc {
    #[serde(default)]
    pub description: Option<String>,
    /// Arguments the call passes with `with:`; template variables inside the group.
    #[serde(default)]
    pub parameters: IndexMap<String, At<ParamDecl>>,
    /// The steps, expanded in place of the call. Their captures are visible to the
    /// caller's later steps.
    pub steps: Vec<At<StepDoc>>,
}
