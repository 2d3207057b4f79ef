//! A step's expectations, compiled: what its response must be, with the predicates they apply.

use std::sync::Arc;
use std::time::Duration;

use regex::Regex;

use super::PathExpr;
use crate::ground::json::path::CompiledPath;
use crate::ground::source::Pos;
use crate::ground::yaml::value::TValue;
use crate::language::dsl::document::{CodeSpec, JsonType, LengthSpec, Num};

#[derive(Debug)]
pub struct Expect {
    pub pos: Pos,
    pub kind: ExpectKind,
}

#[derive(Debug)]
pub enum ExpectKind {
    Path {
        path: PathExpr,
        source: String,
        predicates: Vec<Predicate>,
    },
    /// JSON inside a text: the `path` match decoded, then judged by `inner`.
    Json {
        path: PathExpr,
        source: String,
        inner: Box<Expect>,
    },
    Schema {
        path: Option<(CompiledPath, String)>,
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
    /// The notifications received during the step (see `document::Expectation`).
    Notifications {
        /// `None`: any method (`*`).
        method: Option<String>,
        /// `None` without a path: at least one.
        count: Option<LengthSpec>,
        /// The path evaluated on each notification, its source and the predicates.
        path: Option<(CompiledPath, String)>,
        predicates: Vec<Predicate>,
        /// Keep listening this long after the response until the expectation holds.
        within: Option<Duration>,
        /// `asked:`: the server's requests to the client, not its notifications.
        asked: bool,
    },
    /// The `input_required` rounds the request took (`Exchange::rounds`).
    Rounds(LengthSpec),
    /// The statuses a task step saw, collapsed (`Exchange::task_statuses`): the whole
    /// sequence, or (`last`) only the last status.
    TaskStatus {
        statuses: Vec<String>,
        last: bool,
    },
    /// The step's latency (`Exchange::elapsed`) against each bound.
    Duration(Vec<(CompareOp, DurationBound)>),
    /// A golden response file (see `assert::golden`).
    Snapshot(Box<SnapshotSpec>),
}

/// A `duration` bound: parsed, or a template read as a duration once rendered.
#[derive(Debug, Clone)]
pub enum DurationBound {
    Fixed(Duration),
    Template(String),
}

/// A compiled `snapshot` expectation.
#[derive(Debug)]
pub struct SnapshotSpec {
    /// The file name without `.json` (checked: a plain file name).
    pub name: String,
    /// The part of the result that is snapshotted, and its source.
    pub path: Option<(CompiledPath, String)>,
    pub sanitizers: Vec<SanitizerSpec>,
    /// `<name>@<era>.json`.
    pub per_era: bool,
}

/// A compiled snapshot sanitizer, applied in order.
#[derive(Debug, Clone)]
pub enum SanitizerSpec {
    Timestamps,
    Uuids,
    Jwts,
    /// Every match replaced by this string.
    Path(CompiledPath, String),
    /// Every match in every string replaced (`$1` expands).
    Regex(Regex, String),
}

impl ExpectKind {
    /// The expectation kind's name as written in YAML (JUnit `failure type`).
    pub fn name(&self) -> &'static str {
        match self {
            ExpectKind::Path { .. } => "path",
            ExpectKind::Schema { .. } => "schema",
            ExpectKind::Json { .. } => "json",
            ExpectKind::Error { .. } => "error",
            ExpectKind::IsError(_) => "isError",
            ExpectKind::OutputSchema => "outputSchema",
            ExpectKind::Http { .. } => "http",
            ExpectKind::NoResponse(_) => "noResponse",
            ExpectKind::Notifications { asked: false, .. } => "notifications",
            ExpectKind::Notifications { asked: true, .. } => "asked",
            ExpectKind::Rounds(_) => "rounds",
            ExpectKind::TaskStatus { .. } => "taskStatus",
            ExpectKind::Duration(_) => "duration",
            ExpectKind::Snapshot(_) => "snapshot",
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
    /// A list, or a template rendering to one.
    OneOf(TValue),
    Unique(bool),
    /// The matches, in order, are numbers that strictly increase.
    Increasing(bool),
    ValidSchema(bool),
    Compare(CompareOp, Num<f64>),
    /// At least this many matches (`minMatches`).
    MinMatches(u64),
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
    pub fn holds<T: PartialOrd>(self, actual: T, bound: T) -> bool {
        match self {
            CompareOp::Gt => actual > bound,
            CompareOp::Gte => actual >= bound,
            CompareOp::Lt => actual < bound,
            CompareOp::Lte => actual <= bound,
        }
    }
}
