//! Reading what the user gave (scenario files, project parameters) and the exit codes of
//! input errors: a usage error or invalid files, exit 2.

use std::path::PathBuf;

use crate::face::cli::{Format, UsageError, exit};
use crate::language::dsl;

use super::pack;

pub(crate) fn usage(e: UsageError) -> i32 {
    errln!("error: {}", crate::ground::load_error::bounded(e.0));
    exit::INVALID_INPUT
}

/// Load for `validate` and `list`: no parameter values are needed (required parameters
/// may stay unset), but everything else is checked. `validate` only counts the steps, so
/// it drops them once checked (`release_steps`).
pub(crate) fn load(
    paths: &[PathBuf],
    release_steps: bool,
    format: Format,
    offline: bool,
) -> Result<dsl::load::LoadedSet, i32> {
    let sources = pack::sources(offline).map_err(|errors| invalid(&errors, format))?;
    let mut inputs = dsl::params::ParamInputs {
        release_steps,
        remote: Some(sources.clone()),
        ..Default::default()
    };
    project_parameters(&mut inputs);
    dsl::load::load_all(paths, &inputs)
        .map_err(|errors| pack::unreachable_or(&sources, invalid(&errors, format)))
}

/// `parameters:` of mcpspec.yaml (in the working directory) as `validate` and `list` see
/// them: template variables of every scenario, as in `run`, but no value needed (an
/// `env:VAR` not set is a name only). A broken configuration is left to `validate` of it.
pub(crate) fn project_parameters(inputs: &mut dsl::params::ParamInputs) {
    if let Ok(Some(config)) = crate::face::config::Config::find(None) {
        let (given, unvalued) = config.parameters_to_validate();
        inputs.given = given.into_iter().collect();
        inputs.unvalued = unvalued;
    }
}

/// Report input errors (exit 2): rendered on stderr, or with `--format json` as the
/// document on stdout (`{"ok": false, "errors": [...]}`), so a script reads one stream.
pub(crate) fn invalid(errors: &crate::ground::load_error::LoadErrors, format: Format) -> i32 {
    match format {
        Format::Text => errln!("{}", errors.render()),
        Format::Json => {
            let doc = serde_json::json!({ "ok": false, "errors": errors.to_json() });
            outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
    }
    exit::INVALID_INPUT
}
