//! What a scenario can refer to besides its own variables: the parameters, and the step
//! groups of its pack. Kept with the scenario, so that a released one compiles again the same.

use std::sync::Arc;

use indexmap::IndexMap;

use super::document::GroupDoc;
use crate::ground::source::SourceFile;
use crate::ground::yaml::value::At;

/// What a scenario can refer to besides its own variables.
#[derive(Debug, Default, Clone)]
pub struct Scope {
    /// Parameter names (`--set`, the pack's parameters): defined template variables.
    pub params: Vec<String>,
    /// The step groups of the scenario's pack.
    pub groups: Option<Arc<Groups>>,
}

/// The step groups of one pack, with the manifest they point into.
#[derive(Debug)]
pub struct Groups {
    pub pack: String,
    pub file: Arc<SourceFile>,
    pub groups: IndexMap<String, At<GroupDoc>>,
}
