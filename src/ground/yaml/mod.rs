//! The one YAML front end, at the ground floor: a document read once into a tree of
//! positioned nodes ([`tree`], from granit-parser's events), typed values built from it
//! ([`de`]; positions kept per node in [`value::At`] and [`value::TValue`]), errors
//! rewritten for people ([`read`]), and scalars written so they read back as the same
//! string ([`write`]). Scenarios, packs, config, baselines and contract rules all read
//! through [`parse`]; init and baselines write through [`write`].

pub mod de;
pub mod error;
pub mod read;
pub mod recover;
pub mod schema;
pub mod tree;
pub mod value;
pub mod write;
pub mod yaml11;

pub use de::from_str;
pub use value::{At, TKind, TValue};

use std::sync::Arc;

use crate::ground::load_error::{LoadError, LoadErrors};
use crate::ground::source::SourceFile;

/// Deserialize a YAML document into `T`, turning serde errors into positioned ones.
/// A structural error (unknown key, wrong type) comes with the others of the file: see
/// [`recover`].
pub fn parse<T: serde::de::DeserializeOwned>(file: &Arc<SourceFile>) -> Result<T, LoadErrors> {
    parse_recovering(file).map_err(|(errors, _)| errors)
}

/// [`parse`], and on structural errors also the document without the entries that hold
/// them (when it reads then), so the caller checks the rest of the file in the same run
/// and reports every independent mistake at once.
pub fn parse_recovering<T: serde::de::DeserializeOwned>(
    file: &Arc<SourceFile>,
) -> Result<T, (LoadErrors, Option<recover::Recovered<T>>)> {
    if file.text.trim().is_empty() {
        return Err((LoadError::file(&file.name, "file is empty").into(), None));
    }
    // A syntax error or a reading limit is no structural error: reading the file again
    // without an entry cannot help.
    let node = tree::read(&file.text).map_err(|e| (read::yaml_error(file, &e).into(), None))?;
    de::from_node::<T>(&node)
        .map_err(|e| recover::more_structural_errors::<T>(file, read::yaml_error(file, &e)))
}
