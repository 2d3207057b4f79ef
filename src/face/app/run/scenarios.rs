//! The scenarios a run is asked for: the paths, tags, filter and eras on the command line,
//! loaded and selected.

use std::collections::BTreeMap;
use std::path::PathBuf;

use globset::GlobSet;
use serde_json::Value;

use super::{KEEP_COMPILED, parse_params, selection};
use crate::face::app::inputs::usage;
use crate::face::cli::{RunArgs, UsageError, exit};
use crate::face::select::{Shard, TagExpr, split_file_line};
use crate::language::dsl::{self, Scenario};
use crate::protocol::era::Era;
use crate::results::report::result::ShardInfo;
use crate::run::engine::{self, Item};

/// What the command line asks for besides the paths, parsed.
pub(in crate::face::app) struct Asked {
    target: crate::run::client::Target,
    target_secrets: Vec<String>,
    pub eras: Vec<Era>,
    pub filter: Option<GlobSet>,
    tags: Vec<TagExpr>,
    shard: Option<Shard>,
    /// `FILE:LINE` arguments select the scenario (or the step, with the steps before it)
    /// at that line.
    located: Vec<(PathBuf, Option<u32>)>,
}

impl Asked {
    pub(in crate::face::app) fn parse(args: &RunArgs) -> Result<Asked, UsageError> {
        let (target, target_secrets) = args.target.to_target()?;
        let eras = args
            .eras
            .iter()
            .map(|e| Era::parse(e))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| UsageError(format!("--era: {e}")))?;
        let filter = selection(args)?;
        let tags = args
            .tags
            .iter()
            .map(|t| TagExpr::parse(t))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| UsageError(format!("--tag: {e}")))?;
        Ok(Asked {
            target,
            target_secrets,
            eras,
            filter,
            tags,
            shard: args
                .shard
                .as_deref()
                .map(Shard::parse)
                .transpose()
                .map_err(UsageError)?,
            located: args.paths.iter().map(|p| split_file_line(p)).collect(),
        })
    }
}

/// What a run runs, loaded.
pub(in crate::face::app) struct Loaded {
    pub target: crate::run::client::Target,
    pub params: serde_json::Map<String, Value>,
    /// The scenarios the tags select (`FILE:LINE` steps cut).
    pub selected: Vec<Scenario>,
    pub baseline: Option<crate::face::baseline::Baseline>,
}

/// The target, the parameters, the scenarios and the baseline.
pub(in crate::face::app) fn load(
    args: &RunArgs,
    asked: &mut Asked,
    config_params: Vec<(String, dsl::params::Given)>,
    secrets: &mut Vec<String>,
) -> Result<Loaded, i32> {
    let target = asked.target.clone();
    secrets.append(&mut asked.target_secrets);
    let cli_params = parse_params(&args.set, secrets).map_err(usage)?;
    // Parameter values: `--set` over mcpspec.yaml; packs add the environment, `with:` and
    // defaults below these.
    let sources = crate::face::app::pack::sources(args.offline).map_err(|errors| {
        errln!("{}", errors.render());
        exit::INVALID_INPUT
    })?;
    let mut inputs = dsl::params::ParamInputs {
        given: config_params.into_iter().collect(),
        env: true,
        check_required: true,
        release_steps: true,
        keep_compiled: KEEP_COMPILED,
        remote: Some(sources.clone()),
        unvalued: Vec::new(),
    };
    for (name, value) in cli_params {
        let given = dsl::params::Given {
            value,
            pos: None,
            from_text: true,
        };
        inputs.given.insert(name, given);
    }
    let mut params: serde_json::Map<String, Value> = inputs
        .given
        .iter()
        .map(|(k, g)| (k.clone(), g.value.clone()))
        .collect();
    // Engine-derived parameters (e.g. `alg_none_token` from the bearer token), secret.
    engine::security::add_derived_params(&target, &mut params, secrets);
    let paths: Vec<PathBuf> = asked.located.iter().map(|(p, _)| p.clone()).collect();
    let scenarios = match dsl::load::load_all(&paths, &inputs) {
        Ok(loaded) => {
            for warning in &loaded.warnings {
                errln!("warning: {warning}");
            }
            secrets.extend(loaded.secrets);
            loaded.scenarios
        }
        Err(errors) => {
            errln!("{}", errors.render());
            return Err(crate::face::app::pack::unreachable_or(
                &sources,
                exit::INVALID_INPUT,
            ));
        }
    };
    // The baseline's entries must name scenarios and checks that exist (whether or not
    // they run in this selection).
    let baseline = match &args.expected_failures {
        Some(path) => {
            let mut known: BTreeMap<&str, Vec<&str>> = scenarios
                .iter()
                .map(|s| (s.id.as_str(), s.step_names()))
                .collect();
            let loaded = crate::face::baseline::Baseline::load(path);
            // A baseline made for the whole project, run with a subset of its paths: the
            // project's other scenarios are known too (their entries are ignored, as with
            // `--filter`). Loaded only when an entry names a scenario not loaded here.
            let project = match &loaded {
                Ok(b)
                    if !args.project_paths.is_empty()
                        && b.entries
                            .iter()
                            .any(|e| !known.contains_key(e.scenario.as_str())) =>
                {
                    dsl::load::load_all(&args.project_paths, &inputs)
                        .map(|set| set.scenarios)
                        .unwrap_or_default()
                }
                _ => Vec::new(),
            };
            for s in &project {
                known.entry(s.id.as_str()).or_insert_with(|| s.step_names());
            }
            match loaded.and_then(|b| b.check_known(&known).map(|()| b)) {
                Ok(b) => Some(b),
                Err(errors) => {
                    errln!("{}", errors.render());
                    return Err(exit::INVALID_INPUT);
                }
            }
        }
        None => None,
    };
    let mut selected: Vec<Scenario> = scenarios
        .into_iter()
        .filter(|s| asked.tags.is_empty() || asked.tags.iter().any(|e| e.matches(&s.tags)))
        .collect();
    for (path, line) in &asked.located {
        if let Some(line) = line {
            let name = path.display().to_string();
            for s in selected.iter_mut().filter(|s| s.file.name == name) {
                // Keep the steps up to the one that contains the line.
                if let Some(last) = s.step_lines().iter().rposition(|l| l <= line) {
                    s.truncate_steps(last + 1);
                }
            }
        }
    }
    Ok(Loaded {
        target,
        params,
        selected,
        baseline,
    })
}

/// The items of this run: the plan of the selected scenarios, filtered (`--filter`,
/// `--watch`'s changed files, `--last-failed`) and sharded; the shard's place in the whole.
pub(super) fn select<'a>(
    args: &RunArgs,
    asked: &Asked,
    selected: &'a [Scenario],
    last_run: &crate::face::last_run::LastRun,
    last_run_path: &std::path::Path,
) -> Result<(Vec<Item<'a>>, Option<ShardInfo>), i32> {
    let mut items = engine::plan(selected, &asked.eras);
    if let Some(f) = &asked.filter {
        items.retain(|item| f.is_match(&item.scenario.id) || f.is_match(item.id()));
    }
    // --watch: the scenarios of the files that changed (none of them: everything).
    crate::face::select::retain_changed(&mut items, &args.only_files);
    if args.last_failed {
        let ids: Vec<String> = items.iter().map(|item| item.id()).collect();
        match last_run.pick(&ids) {
            Ok(keep) => {
                let mut keep = keep.into_iter();
                items.retain(|_| keep.next().unwrap_or(false));
                errln!(
                    "--last-failed: rerunning {} item(s) that failed last time ({})",
                    items.len(),
                    last_run_path.display()
                );
            }
            Err(why) => errln!("--last-failed: {why}: running everything"),
        }
    }
    for (i, item) in items.iter_mut().enumerate() {
        item.ordinal = i;
    }
    let shard_info = asked.shard.map(|shard| {
        let ids: Vec<String> = items.iter().map(|item| item.id()).collect();
        let full_run: Vec<&str> = ids.iter().map(String::as_str).collect();
        ShardInfo::new(shard.index + 1, shard.count, &full_run)
    });
    if items.is_empty() {
        errln!("error: no scenario matches the selection (paths, --tag, --filter, --era)");
        return Err(exit::INVALID_INPUT);
    }
    if let Some(shard) = asked.shard {
        items.retain(|item| shard.takes(item.ordinal));
        // More shards than items: this one is empty, but its (empty) result still counts
        // for `report merge`.
        if items.is_empty() {
            errln!(
                "note: shard {}/{} has nothing to run (fewer items than shards)",
                shard.index + 1,
                shard.count
            );
        }
    }
    Ok((items, shard_info))
}
