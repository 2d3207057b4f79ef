//! Scenarios as the engine runs them: validated, with compiled JSONPaths, regexes and
//! schemas, and a source position on every node that can fail.

use std::sync::Arc;
use std::time::Duration;

use indexmap::IndexMap;
use regex::Regex;
use serde_json_path::JsonPath;

use super::model::{CodeSpec, JsonType, LengthSpec};
use super::value::TValue;
use crate::era::EraSelector;
use crate::report::model::Level;
use crate::source::{Pos, SourceFile};

#[derive(Debug)]
pub struct Scenario {
    pub id: String,
    pub description: Option<String>,
    pub tags: Vec<String>,
    /// Empty: applies to every era.
    pub eras: Vec<EraSelector>,
    pub vars: Vec<(String, TValue)>,
    pub steps: Vec<Step>,
    pub file: Arc<SourceFile>,
    pub pos: Pos,
    pub pack: Option<String>,
}

#[derive(Debug)]
pub struct Step {
    pub name: String,
    pub pos: Pos,
    pub eras: Option<Vec<EraSelector>>,
    pub transport: Option<super::model::TransportKind>,
    pub level: Level,
    pub timeout: Option<Duration>,
    pub action: Action,
    pub expects: Vec<Expect>,
    pub captures: Vec<Capture>,
    /// Template variables this step refers to.
    pub uses: std::collections::BTreeSet<String>,
}

#[derive(Debug)]
pub enum Action {
    Request {
        method: String,
        params: Option<TValue>,
        id: Option<TValue>,
        meta: IndexMap<String, TValue>,
        headers: IndexMap<String, TValue>,
        paginate: bool,
    },
    Notification {
        method: String,
        params: Option<TValue>,
        meta: IndexMap<String, TValue>,
        headers: IndexMap<String, TValue>,
    },
    Raw {
        body: TValue,
        headers: IndexMap<String, TValue>,
        http_method: Option<String>,
    },
    /// Snapshot the live server and diff it with a baseline snapshot.
    Contract {
        baseline: std::path::PathBuf,
        rules: crate::contract::rules::Rules,
    },
}

#[derive(Debug)]
pub struct Capture {
    pub name: String,
    pub path: JsonPath,
    pub source: String,
    pub pos: Pos,
}

#[derive(Debug)]
pub struct Expect {
    pub pos: Pos,
    pub kind: ExpectKind,
}

#[derive(Debug)]
pub enum ExpectKind {
    Path {
        path: JsonPath,
        source: String,
        predicates: Vec<Predicate>,
    },
    Schema {
        path: Option<(JsonPath, String)>,
        validator: Arc<jsonschema::Validator>,
    },
    Error {
        code: Option<CodeSpec>,
        message: Option<Regex>,
        data: Option<TValue>,
    },
    IsError(bool),
    OutputSchema,
    Http {
        status: Option<CodeSpec>,
        headers: Vec<(String, Option<Regex>)>,
    },
    NoResponse(bool),
}

impl ExpectKind {
    /// The expectation kind's name as written in YAML (JUnit `failure type`).
    pub fn name(&self) -> &'static str {
        match self {
            ExpectKind::Path { .. } => "path",
            ExpectKind::Schema { .. } => "schema",
            ExpectKind::Error { .. } => "error",
            ExpectKind::IsError(_) => "isError",
            ExpectKind::OutputSchema => "outputSchema",
            ExpectKind::Http { .. } => "http",
            ExpectKind::NoResponse(_) => "noResponse",
        }
    }
}

#[derive(Debug)]
pub enum Predicate {
    Equals(TValue),
    NotEquals(TValue),
    Contains(TValue),
    Matches(Regex),
    Type(JsonType),
    Length(LengthSpec),
    Exists(bool),
    OneOf(Vec<TValue>),
    Compare(CompareOp, f64),
}

#[derive(Debug, Clone, Copy)]
pub enum CompareOp {
    Gt,
    Gte,
    Lt,
    Lte,
}

impl CompareOp {
    /// The YAML key.
    pub fn name(self) -> &'static str {
        match self {
            CompareOp::Gt => "gt",
            CompareOp::Gte => "gte",
            CompareOp::Lt => "lt",
            CompareOp::Lte => "lte",
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            CompareOp::Gt => ">",
            CompareOp::Gte => ">=",
            CompareOp::Lt => "<",
            CompareOp::Lte => "<=",
        }
    }
    pub fn holds(self, actual: f64, bound: f64) -> bool {
        match self {
            CompareOp::Gt => actual > bound,
            CompareOp::Gte => actual >= bound,
            CompareOp::Lt => actual < bound,
            CompareOp::Lte => actual <= bound,
        }
    }
}
