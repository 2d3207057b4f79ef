//! The one YAML front end, at the ground floor: reading with positions (serde-saphyr's
//! `Spanned`, kept per node in [`value::At`] and [`value::TValue`]) and errors rewritten
//! for people ([`read`]), and writing scalars that read back as the same string
//! ([`write`]). Scenarios, packs, config, baselines and contract rules all read through
//! [`parse`]; init and baselines write through [`write`].

pub mod read;
pub mod recover;
pub mod value;
pub mod write;

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
    match serde_saphyr::from_str_with_options::<T>(&file.text, read::options()) {
        Ok(value) => Ok(value),
        // A reading limit is no structural error: reading the file again cannot help.
        Err(e) if e.without_snippet().to_string().contains("budget breached") => {
            Err((read::yaml_error(file, &e).into(), None))
        }
        Err(e) => Err(recover::more_structural_errors::<T>(
            file,
            read::yaml_error(file, &e),
        )),
    }
}
