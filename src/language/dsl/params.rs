//! Pack parameters: values given from outside the packs (`--set`, mcpspec.yaml, the
//! environment), their environment variable names, and conversion to the declared type.
//! Below both packs (`dsl::pack`) and compilation (`dsl::compile`), which check
//! the arguments of step-group calls with the same rules; the hook that fetches remote
//! imports ([`RemoteImports`]) is declared here so that this file names nothing above it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use indexmap::IndexMap;
use serde_json::Value;

use super::document::{ImportDoc, ParamType};
use crate::ground::load_error::{LoadError, did_you_mean};
use crate::ground::source::{Pos, SourceFile};
use crate::ground::yaml::value::At;

/// A parameter value given from outside the packs (`--set` or mcpspec.yaml).
#[derive(Debug, Clone)]
pub struct Given {
    pub value: Value,
    /// Where it was given: a position in mcpspec.yaml, or `None` for the command line.
    pub pos: Option<Pos>,
    /// A text value (command line, environment): converted to the declared type.
    pub from_text: bool,
}

/// Parameter values from outside the packs, and how strictly to check them.
#[derive(Debug, Default, Clone)]
pub struct ParamInputs {
    /// `--set` over mcpspec.yaml `parameters:` (already merged, the flag winning).
    pub given: IndexMap<String, Given>,
    /// Read `MCPSPEC_PARAM_<NAME>` for declared parameters.
    pub env: bool,
    /// Unset `required` parameters are errors (runs; `validate` and `list` do not need values).
    pub check_required: bool,
    /// Drop each scenario's compiled steps once it has been validated (runs): the engine
    /// compiles them again when the scenario's turn comes, so memory does not grow with
    /// the number of scenarios loaded ([`super::scenario::Released`]).
    pub release_steps: bool,
    /// With `release_steps`: how many scenarios keep their compiled steps all the same, so
    /// that small runs (and one huge scenario) are not compiled twice; memory stays bounded
    /// past this count.
    pub keep_compiled: usize,
    /// Fetches `git:` and `archive:` imports (none: such imports are errors).
    pub remote: Option<Arc<dyn RemoteImports>>,
    /// Parameters given without a value known here (`validate`: an `env:VAR` of
    /// mcpspec.yaml whose variable is not set): defined in templates all the same.
    pub unvalued: Vec<String>,
}

/// Fetching is not the dsl's job: the caller hands the resolver one of these (in
/// [`ParamInputs::remote`]), which turns a `git:` or `archive:` import into a local folder.
pub trait RemoteImports: std::fmt::Debug + Send + Sync {
    /// The folder of the pack the import names, or the error at the import.
    fn fetch(&self, file: &Arc<SourceFile>, import: &ImportDoc) -> Result<Fetched, LoadError>;

    /// Where the pack in `dir` came from, when it is a remote pack made local (how
    /// `mcpspec list` shows it); `None` for local folders.
    fn origin_of(&self, dir: &Path) -> Option<String>;

    /// How reports name the folder of the remote pack made local in `dir`: the pack's name,
    /// the revision it came from and its path in the repository or archive
    /// (`platform@v1.2.0 packs/platform/`, a file's path inside the pack follows), never the
    /// cache folder. `None` for local folders.
    fn shown_of(&self, _dir: &Path) -> Option<String> {
        None
    }

    /// A `pack:` import that leaves the folder of the remote pack made local in `dir`
    /// (`pack: ../shared`): the pack at that folder of the same repository at the same
    /// commit (or of the same archive), or the error at the import (a folder outside the
    /// repository or archive). `None` when `dir` is no remote pack.
    fn relative(
        &self,
        dir: &Path,
        file: &Arc<SourceFile>,
        target: &At<String>,
    ) -> Option<Result<Fetched, LoadError>>;
}

/// A remote pack made local.
#[derive(Debug, Clone)]
pub struct Fetched {
    pub dir: PathBuf,
}

impl ParamInputs {
    /// Whether the scenario loaded after `loaded` others drops its compiled steps.
    pub fn releases(&self, loaded: usize) -> bool {
        self.release_steps && loaded >= self.keep_compiled
    }

    /// Names defined in every scenario's templates.
    pub fn names(&self) -> Vec<String> {
        self.given.keys().chain(&self.unvalued).cloned().collect()
    }
}

/// Prefix of the parameters' environment variables.
pub const ENV_PREFIX: &str = "MCPSPEC_PARAM_";

/// `MCPSPEC_PARAM_<NAME>`: the environment variable of a parameter.
pub fn env_name(param: &str) -> String {
    format!(
        "{ENV_PREFIX}{}",
        param.to_ascii_uppercase().replace('-', "_")
    )
}

/// A value as the declared type. Text values (command line, environment) are parsed;
/// YAML values must already have the type.
pub fn coerce(value: &Value, ty: ParamType, from_text: bool) -> Result<Value, WrongType> {
    let text = value.as_str().filter(|_| from_text);
    let ok = match (ty, value) {
        (ParamType::String, Value::String(_)) => Some(value.clone()),
        (ParamType::Number, Value::Number(_)) => Some(value.clone()),
        (ParamType::Integer, Value::Number(n)) if n.is_i64() || n.is_u64() => Some(value.clone()),
        (ParamType::Boolean, Value::Bool(_)) => Some(value.clone()),
        (ParamType::Number, _) => text
            .and_then(|t| t.trim().parse::<f64>().ok())
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        (ParamType::Integer, _) => text
            .and_then(|t| t.trim().parse::<i64>().ok())
            .map(Value::from),
        (ParamType::Boolean, _) => match text {
            Some("true") => Some(Value::Bool(true)),
            Some("false") => Some(Value::Bool(false)),
            _ => None,
        },
        (ParamType::String, _) => None,
    };
    ok.ok_or_else(|| WrongType {
        expected: ty,
        got: value.clone(),
    })
}

/// A value that is not of the declared type ([`coerce`]).
#[derive(Debug)]
pub struct WrongType {
    expected: ParamType,
    got: Value,
}

impl WrongType {
    /// What was expected and what came: the value itself, or only its kind when it is a
    /// secret's (a mistyped token must not reach the console through its own error).
    pub fn describe(&self, secret: bool) -> String {
        let kind = json_type(&self.got);
        let shown = match &self.got {
            _ if secret => format!("a {kind} (a secret: its value is not shown)"),
            Value::String(s) => format!("`{s}`"),
            other => format!("{kind} `{other}`"),
        };
        let ty = self.expected;
        let article = if ty == ParamType::Integer { "an" } else { "a" };
        format!("expected {article} {}, got {shown}", ty.name())
    }
}

/// Whether the value of parameter `name` is a secret: declared so, or named like one
/// ([`crate::ground::redact::is_secret_param`]).
pub fn is_secret(name: &str, declared_secret: bool) -> bool {
    declared_secret || crate::ground::redact::is_secret_param(name)
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "mapping",
    }
}

pub(super) fn type_error(pos: Pos, name: &str, what: &str, e: &str) -> LoadError {
    LoadError::at(
        pos,
        format!("parameter `{name}`: {what} of the wrong type: {e}"),
    )
}

/// An argument or `with:` value for a parameter that is not declared.
pub fn unknown_parameter<'a>(
    pos: Pos,
    arg: &str,
    owner: &str,
    declared: impl Iterator<Item = &'a String> + Clone,
) -> LoadError {
    let names: Vec<&str> = declared.map(String::as_str).collect();
    let list = if names.is_empty() {
        "it declares none".to_string()
    } else {
        format!(
            "declared: {}",
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let help = match did_you_mean(arg, names.iter().copied()) {
        Some(s) => format!("did you mean `{s}`? {list}"),
        None => list,
    };
    LoadError::at(pos, format!("unknown parameter `{arg}` for `{owner}`")).with_help(help)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_values_convert_to_the_declared_type() {
        assert_eq!(
            coerce(&json!("3"), ParamType::Integer, true).unwrap(),
            json!(3)
        );
        assert_eq!(
            coerce(&json!("2.5"), ParamType::Number, true).unwrap(),
            json!(2.5)
        );
        assert_eq!(
            coerce(&json!("true"), ParamType::Boolean, true).unwrap(),
            json!(true)
        );
        assert_eq!(
            coerce(&json!("x"), ParamType::String, true).unwrap(),
            json!("x")
        );
        let wrong = coerce(&json!("three"), ParamType::Integer, true).unwrap_err();
        assert_eq!(wrong.describe(false), "expected an integer, got `three`");
        assert_eq!(
            wrong.describe(true),
            "expected an integer, got a string (a secret: its value is not shown)"
        );
        // YAML values must have the type already.
        assert!(coerce(&json!("3"), ParamType::Integer, false).is_err());
        assert!(coerce(&json!(3), ParamType::String, false).is_err());
        assert!(coerce(&json!(2.5), ParamType::Integer, false).is_err());
    }

    #[test]
    fn env_names_are_upper_case() {
        assert_eq!(env_name("api_token"), "MCPSPEC_PARAM_API_TOKEN");
    }
}
