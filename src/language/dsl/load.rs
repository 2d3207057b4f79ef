//! Loading: the entry points that turn paths (files, folders, packs, built-in pack names)
//! into validated scenarios — discovery ([`super::discover`]), packs ([`super::pack`]) and
//! compilation ([`super::compile`]) — and the checks across all loaded scenarios.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use indexmap::IndexMap;

use super::compile::{list, parse_scenario, parse_scenarios};
use super::discover::{pack_dir, scenario_files};
use super::pack::Resolver;
use super::params::ParamInputs;
use super::scenario::Scenario;
use super::scope::Scope;
use crate::ground::load_error::{LoadError, LoadErrors, did_you_mean};
use crate::ground::source::Pos;

/// What a load produced: the scenarios, the packs they came from, the values of secret
/// pack parameters (to redact from every output), and warnings for the console (stderr).
#[derive(Debug, Default)]
pub struct LoadedSet {
    pub scenarios: Vec<Scenario>,
    pub packs: Vec<super::pack::PackInfo>,
    pub secrets: Vec<String>,
    pub warnings: Vec<String>,
}

/// Load scenarios from files and folders (folders: every `*.yaml`/`*.yml`, sorted).
pub fn load_paths(paths: &[PathBuf]) -> Result<Vec<Scenario>, LoadErrors> {
    load_all(paths, &ParamInputs::default()).map(|l| l.scenarios)
}

/// Load scenario files, folders, packs (a folder with `pack.yaml`, or that file) and
/// built-in packs by name. `inputs` are the parameters given from outside (`--set`,
/// mcpspec.yaml): template variables of every scenario, and values of pack parameters.
pub fn load_all(paths: &[PathBuf], inputs: &ParamInputs) -> Result<LoadedSet, LoadErrors> {
    let mut resolver = Resolver::new(inputs);
    let mut scenarios = Vec::new();
    let mut errors = LoadErrors::default();
    let plain = Arc::new(Scope {
        params: inputs.names(),
        groups: None,
    });
    for path in paths {
        // A name that is not a file or folder may be a built-in pack (`conformance`).
        if !path.exists()
            && let Some(packs) = path.to_str().and_then(super::builtin::resolve)
        {
            for pack in packs {
                resolver.load_builtin(pack);
            }
            continue;
        }
        if let Some(dir) = pack_dir(path) {
            resolver.load_dir(&dir);
            continue;
        }
        let (files, packs) = match scenario_files(path) {
            Ok(found) => found,
            Err(e) => {
                errors.push(e);
                continue;
            }
        };
        for dir in packs {
            resolver.load_dir(&dir);
        }
        // Read every file, compile the readable ones together, and report in file order.
        let read: Vec<_> = files
            .iter()
            .map(|f| crate::ground::load_error::read_source(f))
            .collect();
        let sources = read
            .iter()
            .filter_map(|r| r.as_ref().ok().cloned())
            .collect();
        let first = scenarios.len();
        let mut compiled =
            parse_scenarios(sources, &plain, |i| inputs.releases(first + i)).into_iter();
        for file in read {
            let loaded = file
                .map_err(LoadErrors::from)
                .and_then(|_| compiled.next().expect("one result per readable file"));
            match loaded {
                Ok(s) => scenarios.push(s),
                Err(es) => errors.0.extend(es.0),
            }
        }
    }
    // `--set` of a name no pack declares, when only packs run, is a mistake (a typo).
    if scenarios.is_empty() && !resolver.packs.is_empty() {
        let declared = resolver.declared();
        for (name, given) in &inputs.given {
            if given.pos.is_none() && !declared.contains(name) {
                let help = match did_you_mean(name, declared.iter().map(String::as_str)) {
                    Some(s) => format!(
                        "did you mean `{s}`? parameters of the packs run: {}",
                        list(&declared)
                    ),
                    None if declared.is_empty() => {
                        "the packs run declare no parameters".to_string()
                    }
                    None => format!("parameters of the packs run: {}", list(&declared)),
                };
                errors.push(
                    LoadError::file(
                        format!("--set {name}"),
                        format!("unknown parameter `{name}`"),
                    )
                    .with_help(help),
                );
            }
        }
    }
    // `MCPSPEC_PARAM_<NAME>` only ever feeds a declared pack parameter: one that names
    // none is ignored, and said so (a typo). A warning, not an error: a CI sets one
    // environment for several packs, each declaring some of it.
    let warnings = if inputs.env {
        unknown_param_env(&resolver.declared(), std::env::vars_os())
    } else {
        Vec::new()
    };
    errors.0.extend(std::mem::take(&mut resolver.errors).0);
    let mut all = std::mem::take(&mut resolver.scenarios);
    all.extend(scenarios);
    check_unique_ids(&all, &mut errors);
    if errors.is_empty() {
        let mut secrets = resolver.secrets;
        secrets.extend(named_secrets(inputs, &all));
        Ok(LoadedSet {
            scenarios: all,
            packs: resolver.packs,
            secrets,
            warnings,
        })
    } else {
        Err(errors)
    }
}

/// Values named like secrets ([`crate::ground::redact::is_secret_param`]): given parameters
/// (`--set`, mcpspec.yaml, declared or not) and scenario `vars` written as plain values (a
/// var rendered from a template is remembered by the engine when it is rendered).
fn named_secrets(inputs: &ParamInputs, scenarios: &[Scenario]) -> Vec<String> {
    let given = inputs
        .given
        .iter()
        .filter(|(name, _)| crate::ground::redact::is_secret_param(name))
        .filter_map(|(_, g)| crate::ground::redact::secret_text(&g.value));
    let vars = scenarios
        .iter()
        .flat_map(|s| s.vars.iter())
        .filter(|(name, _)| crate::ground::redact::is_secret_param(name))
        .filter_map(|(_, v)| crate::ground::redact::secret_text(&v.to_json()));
    given.chain(vars).collect()
}

/// A warning for each `MCPSPEC_PARAM_<NAME>` of `vars` that is the variable of no
/// parameter in `declared`. It names the variable, never its value (which may be a secret).
fn unknown_param_env(
    declared: &BTreeSet<String>,
    vars: impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> Vec<String> {
    let by_var: Vec<(String, &String)> = declared
        .iter()
        .map(|n| (super::params::env_name(n), n))
        .collect();
    let mut unknown: Vec<String> = vars
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| k.starts_with(super::params::ENV_PREFIX) && !by_var.iter().any(|(v, _)| v == k))
        .collect();
    unknown.sort();
    unknown
        .into_iter()
        .map(|var| {
            let help = match did_you_mean(&var, by_var.iter().map(|(v, _)| v.as_str())) {
                Some(s) => format!(
                    "did you mean `{s}`? parameters of the packs run: {}",
                    list(declared)
                ),
                None if declared.is_empty() => "the packs run declare no parameters".to_string(),
                None => format!("parameters of the packs run: {}", list(declared)),
            };
            format!(
                "environment variable `{var}` names no parameter of the packs run; ignored ({help})"
            )
        })
        .collect()
}

pub fn load_file(path: &Path) -> Result<Scenario, LoadErrors> {
    parse_scenario(crate::ground::load_error::read_source(path)?)
}

fn check_unique_ids(scenarios: &[Scenario], errors: &mut LoadErrors) {
    let mut seen: IndexMap<&str, &Pos> = IndexMap::new();
    for s in scenarios {
        if let Some(first) = seen.get(s.id.as_str()) {
            errors.push(
                LoadError::at(s.pos.clone(), format!("duplicate scenario id `{}`", s.id))
                    .with_help(format!("first defined at {first}")),
            );
        } else {
            seen.insert(&s.id, &s.pos);
        }
    }
}
