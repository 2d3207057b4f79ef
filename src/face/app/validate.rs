//! `mcpspec validate`: check scenarios, packs and the project's other input files without
//! running anything.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::face::cli::{Format, UsageError, exit};
use crate::language::dsl;

use crate::face::app::inputs::{invalid, usage};

/// Files `validate` checks besides scenarios and packs.
#[derive(Debug, Clone, Copy)]
pub(super) enum OtherInput {
    Config,
    Baseline,
    Rules,
    EvalSet,
}

impl OtherInput {
    /// Told apart by name (`mcpspec.yaml`) or by top-level keys: a file with no scenario
    /// key (`scenario`, `steps`) and a baseline key (`server`/`client`) is a baseline, one
    /// with a rules key (`fail`/`ignore`/`accept`) is contract rules — so a typo in one of
    /// their other keys is reported by their own loader, with did-you-mean. Anything else
    /// is a scenario.
    fn of(path: &Path) -> Option<OtherInput> {
        let name = path.file_name()?.to_str()?;
        if matches!(name, "mcpspec.yaml" | "mcpspec.yml") {
            return Some(OtherInput::Config);
        }
        if !path.is_file() {
            return None;
        }
        if crate::run::eval::set::is_eval_file(path) {
            return Some(OtherInput::EvalSet);
        }
        let text = crate::ground::source::read_text(path).ok()?;
        Some(match dsl::discover::other_keys(&text)? {
            dsl::discover::OtherKeys::EvalSet => OtherInput::EvalSet,
            dsl::discover::OtherKeys::Baseline => OtherInput::Baseline,
            dsl::discover::OtherKeys::Rules => OtherInput::Rules,
        })
    }

    fn check(self, path: &Path) -> Result<&'static str, crate::ground::load_error::LoadErrors> {
        match self {
            OtherInput::Config => {
                crate::face::config::Config::find(Some(path)).map(|_| "configuration")
            }
            OtherInput::Baseline => crate::face::baseline::Baseline::load(path).map(|_| "baseline"),
            OtherInput::Rules => {
                crate::language::contract_rules::Rules::load(path).map(|_| "contract rules")
            }
            OtherInput::EvalSet => crate::run::eval::set::EvalSet::load(path).map(|_| "eval set"),
        }
    }
}

/// `validate` with no paths checks what `run` with no paths would load: the
/// configuration in the working directory, its `paths:` and its baseline.
pub(super) fn validate_config_paths(
    offline: bool,
) -> Result<Vec<(PathBuf, Option<OtherInput>)>, i32> {
    let nothing = || {
        usage(UsageError(format!(
            "nothing to validate: give files, folders or packs (or `paths:` in {})",
            crate::face::config::DEFAULT_FILE
        )))
    };
    let config_file = PathBuf::from(crate::face::config::DEFAULT_FILE);
    match crate::face::config::Config::find(None) {
        Ok(None) => Err(nothing()),
        // The configuration is reported below (with its errors, if any) as any other file.
        Err(_) => Ok(vec![(config_file, Some(OtherInput::Config))]),
        Ok(Some(config)) if config.doc.paths.is_empty() && config.doc.imports.is_empty() => {
            Err(nothing())
        }
        Ok(Some(config)) => {
            let mut paths = vec![(config_file, Some(OtherInput::Config))];
            let imported = super::pack::project_paths(&config, offline)?;
            paths.extend(config.paths().into_iter().chain(imported).map(|p| {
                let kind = OtherInput::of(&p);
                (p, kind)
            }));
            paths.extend(
                config
                    .baseline_path()
                    .map(|p| (p, Some(OtherInput::Baseline))),
            );
            Ok(paths)
        }
    }
}

pub(super) fn validate(paths: &[PathBuf], format: Format, offline: bool) -> i32 {
    let paths = if paths.is_empty() {
        match validate_config_paths(offline) {
            Ok(p) => p,
            Err(code) => return code,
        }
    } else {
        paths
            .iter()
            .map(|p| (p.clone(), OtherInput::of(p)))
            .collect()
    };
    // Configuration, baselines and rules files by their kind; the rest are scenarios and
    // packs. Every file's errors are reported, not only the first bad file's.
    let mut scenario_paths = Vec::new();
    let mut errors = crate::ground::load_error::LoadErrors::default();
    let mut others = Vec::new();
    for (path, kind) in paths {
        match kind {
            Some(kind) => match kind.check(&path) {
                Ok(what) => others.push((path.display().to_string(), what)),
                Err(e) => errors.0.extend(e.0),
            },
            None => {
                // Eval sets in a folder or pack are checked too (scenario loading skips them).
                let sets = crate::run::eval::set::files_under(&path);
                for set in &sets {
                    match OtherInput::EvalSet.check(set) {
                        Ok(what) => others.push((set.display().to_string(), what)),
                        Err(e) => errors.0.extend(e.0),
                    }
                }
                // A folder of eval sets only is not an empty scenario folder.
                if sets.is_empty() || crate::run::eval::set::has_other_yaml(&path) {
                    scenario_paths.push(path)
                }
            }
        }
    }
    let sources = match super::pack::sources(offline) {
        Ok(s) => s,
        Err(e) => {
            errors.0.extend(e.0);
            return invalid(&errors, format);
        }
    };
    let loaded = if scenario_paths.is_empty() {
        None
    } else {
        let mut inputs = dsl::params::ParamInputs {
            release_steps: true,
            remote: Some(sources.clone()),
            ..Default::default()
        };
        super::inputs::project_parameters(&mut inputs);
        match dsl::load::load_all(&scenario_paths, &inputs) {
            Ok(loaded) => Some(loaded),
            Err(e) => {
                errors.0.extend(e.0);
                None
            }
        }
    };
    if !errors.is_empty() {
        return super::pack::unreachable_or(&sources, invalid(&errors, format));
    }
    let scenarios = loaded.as_ref().map_or(0, |l| l.scenarios.len());
    let steps: usize = loaded
        .iter()
        .flat_map(|l| &l.scenarios)
        .map(|s| s.step_lines().len())
        .sum();
    let packs: Vec<&str> = loaded
        .iter()
        .flat_map(|l| &l.packs)
        .map(|p| p.name.as_str())
        .collect();
    let notes = yaml11_notes(loaded.as_ref());
    match format {
        Format::Text => {
            for (pos, note) in &notes {
                errln!(
                    "{}",
                    pos.snippet_with_help(
                        crate::ground::source::Severity::Warning,
                        &note_message(note),
                        "here",
                        YAML11_HELP,
                    )
                );
            }
            for (path, what) in &others {
                outln!("ok: {path} ({what})");
            }
            if loaded.is_some() {
                let packs = match packs.len() {
                    0 => String::new(),
                    n => format!(", {n} pack(s)"),
                };
                outln!("ok: {scenarios} scenario(s), {steps} step(s){packs}");
            }
        }
        Format::Json => {
            let files: Vec<Value> = others
                .iter()
                .map(|(path, what)| serde_json::json!({ "path": path, "kind": what }))
                .collect();
            let doc = serde_json::json!({
                "ok": true,
                "files": files,
                "scenarios": scenarios,
                "steps": steps,
                "packs": packs,
                "warnings": notes.iter().map(|(pos, note)| serde_json::json!({
                    "file": pos.shown_file(),
                    "line": pos.line,
                    "column": pos.col,
                    "message": note_message(note),
                })).collect::<Vec<Value>>(),
            });
            outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
    }
    exit::OK
}

/// What to do about a value a YAML 1.1 reader reads otherwise.
const YAML11_HELP: &str = "mcpspec reads YAML 1.2; to be read the same by YAML 1.1 tools, quote the value (or write `true`/`false` for a boolean)";

fn note_message(note: &crate::ground::yaml::yaml11::Yaml11Note) -> String {
    format!(
        "`{}` is read as YAML 1.2 reads it; a YAML 1.1 reader would read {}",
        note.text, note.yaml11
    )
}

/// The plain values of the loaded scenario files that a YAML 1.1 reader would read
/// otherwise (each file once), with their positions.
fn yaml11_notes(
    loaded: Option<&dsl::load::LoadedSet>,
) -> Vec<(
    crate::ground::source::Pos,
    crate::ground::yaml::yaml11::Yaml11Note,
)> {
    let mut seen = std::collections::HashSet::new();
    loaded
        .iter()
        .flat_map(|l| &l.scenarios)
        .filter(|s| seen.insert(s.file.name.clone()))
        .flat_map(|s| {
            crate::ground::yaml::yaml11::yaml11_notes(&s.file.text)
                .into_iter()
                .map(|note| {
                    (
                        crate::ground::source::Pos::new(&s.file, note.line, note.col),
                        note,
                    )
                })
        })
        .collect()
}
