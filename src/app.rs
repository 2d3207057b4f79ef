//! What each command does: wiring CLI → dsl → engine → reports → exit code.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::Parser;
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde_json::Value;

use crate::cli::{
    CallArgs, Cli, ColorChoice, Command, DiffArgs, Format, RunArgs, SchemaKind, SnapshotArgs,
    UsageError, exit,
};
use crate::client::{ConnectErrorKind, Connection};
use crate::contract::{self, Snapshot};
use crate::dsl::{self, Scenario};
use crate::engine::{self, RunConfig};
use crate::era::Era;
use crate::report::model::{RunReport, SuiteResult};
use crate::report::{self, ConsoleOptions};
use crate::select::{Shard, TagExpr, split_file_line};

mod eval_compare;
mod watch;

pub fn main() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    exit::OK
                }
                _ => exit::INVALID_INPUT,
            };
        }
    };
    match cli.command {
        Command::Schema { kind } => {
            outln!(
                "{}",
                match kind {
                    SchemaKind::Scenario => schema_text(),
                    SchemaKind::Rules => rules_schema_text(),
                    SchemaKind::Config => config_schema_text(),
                    SchemaKind::Pack => pack_schema_text(),
                }
            );
            exit::OK
        }
        Command::Report {
            command: crate::cli::ReportCommand::Merge { files, junit, json },
        } => merge(&files, junit.as_deref(), json.as_deref()),
        Command::Init(args) => runtime().block_on(crate::init::init(args)),
        Command::Snapshot(args) => runtime().block_on(snapshot(args)),
        Command::Diff(args) => diff(args),
        Command::Eval {
            command: crate::cli::EvalCommand::Compare(args),
        } => eval_compare::eval_compare(args),
        Command::Validate { paths, format } => validate(&paths, format),
        Command::List {
            paths,
            markdown,
            format,
        } => list(&paths, markdown, format),
        Command::Run(args) if args.watch => watch::watch(args),
        Command::Run(args) => run(args),
        Command::Call(args) => runtime().block_on(call(args)),
    }
}

/// The DSL schema as committed in `schema/scenario.schema.json`.
pub fn schema_text() -> String {
    serde_json::to_string_pretty(&dsl::scenario_schema()).expect("schema serializes")
}

/// The pack manifest schema as committed in `schema/pack.schema.json`.
pub fn pack_schema_text() -> String {
    serde_json::to_string_pretty(&dsl::pack_schema()).expect("schema serializes")
}

/// The project configuration schema as committed in `schema/config.schema.json`.
pub fn config_schema_text() -> String {
    let schema = schemars::schema_for!(crate::config::ConfigDoc);
    serde_json::to_string_pretty(&schema).expect("schema serializes")
}

/// The contract rules schema as committed in `schema/rules.schema.json`.
pub fn rules_schema_text() -> String {
    let schema = schemars::schema_for!(contract::rules::RulesDoc);
    serde_json::to_string_pretty(&schema).expect("schema serializes")
}

/// A single-threaded runtime: one connection at a time is I/O-bound, and cross-thread
/// wake-ups would cost more than they give.
fn runtime() -> tokio::runtime::Runtime {
    runtime_for(1)
}

/// A runtime for `concurrency` connections at once: worker threads only when several
/// scenarios run in parallel.
fn runtime_for(concurrency: usize) -> tokio::runtime::Runtime {
    let mut builder = if concurrency <= 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(
            concurrency.min(
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1),
            ),
        );
        b
    };
    builder.enable_all().build().expect("tokio runtime")
}

fn usage(e: UsageError) -> i32 {
    errln!("error: {}", e.0);
    exit::INVALID_INPUT
}

/// Scenarios of a run that keep their compiled steps (see `ParamInputs::keep_compiled`).
const KEEP_COMPILED: usize = 64;

/// Load for `validate` and `list`: no parameter values are needed (required parameters
/// may stay unset), but everything else is checked. `validate` only counts the steps, so
/// it drops them once checked (`release_steps`).
fn load(
    paths: &[PathBuf],
    release_steps: bool,
    format: Format,
) -> Result<dsl::load::LoadedSet, i32> {
    let inputs = dsl::pack::ParamInputs {
        release_steps,
        ..Default::default()
    };
    dsl::load::load_all(paths, &inputs).map_err(|errors| invalid(&errors, format))
}

/// Report input errors (exit 2): rendered on stderr, or with `--format json` as the
/// document on stdout (`{"ok": false, "errors": [...]}`), so a script reads one stream.
fn invalid(errors: &dsl::LoadErrors, format: Format) -> i32 {
    match format {
        Format::Text => errln!("{}", errors.render()),
        Format::Json => {
            let doc = serde_json::json!({ "ok": false, "errors": errors.to_json() });
            outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
    }
    exit::INVALID_INPUT
}

/// Files `validate` checks besides scenarios and packs.
#[derive(Debug, Clone, Copy)]
enum OtherInput {
    Config,
    Baseline,
    Rules,
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
        let text = crate::source::read_text(path).ok()?;
        let keys: Vec<&str> = text
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with([' ', '\t', '#', '-']))
            .filter_map(|l| l.split_once(':').map(|(k, _)| k.trim()))
            .collect();
        let any = |names: &[&str]| keys.iter().any(|k| names.contains(k));
        if any(&["scenario", "steps"]) {
            None
        } else if any(&["server", "client"]) {
            Some(OtherInput::Baseline)
        } else if any(&["fail", "ignore", "accept"]) {
            Some(OtherInput::Rules)
        } else {
            None
        }
    }

    fn check(self, path: &Path) -> Result<&'static str, dsl::LoadErrors> {
        match self {
            OtherInput::Config => crate::config::Config::find(Some(path)).map(|_| "configuration"),
            OtherInput::Baseline => crate::baseline::Baseline::load(path).map(|_| "baseline"),
            OtherInput::Rules => contract::rules::Rules::load(path).map(|_| "contract rules"),
        }
    }
}

/// `validate` with no paths checks what `run` with no paths would load: the
/// configuration in the working directory, its `paths:` and its baseline.
fn validate_config_paths() -> Result<Vec<(PathBuf, Option<OtherInput>)>, i32> {
    let nothing = || {
        usage(UsageError(format!(
            "nothing to validate: give files, folders or packs (or `paths:` in {})",
            crate::config::DEFAULT_FILE
        )))
    };
    let config_file = PathBuf::from(crate::config::DEFAULT_FILE);
    match crate::config::Config::find(None) {
        Ok(None) => Err(nothing()),
        // The configuration is reported below (with its errors, if any) as any other file.
        Err(_) => Ok(vec![(config_file, Some(OtherInput::Config))]),
        Ok(Some(config)) if config.doc.paths.is_empty() => Err(nothing()),
        Ok(Some(config)) => {
            let mut paths = vec![(config_file, Some(OtherInput::Config))];
            paths.extend(config.paths().into_iter().map(|p| {
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

fn validate(paths: &[PathBuf], format: Format) -> i32 {
    let paths = if paths.is_empty() {
        match validate_config_paths() {
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
    let mut errors = dsl::LoadErrors::default();
    let mut others = Vec::new();
    for (path, kind) in paths {
        match kind {
            Some(kind) => match kind.check(&path) {
                Ok(what) => others.push((path.display().to_string(), what)),
                Err(e) => errors.0.extend(e.0),
            },
            None => scenario_paths.push(path),
        }
    }
    let loaded = if scenario_paths.is_empty() {
        None
    } else {
        let inputs = dsl::pack::ParamInputs {
            release_steps: true,
            ..Default::default()
        };
        match dsl::load::load_all(&scenario_paths, &inputs) {
            Ok(loaded) => Some(loaded),
            Err(e) => {
                errors.0.extend(e.0);
                None
            }
        }
    };
    if !errors.is_empty() {
        return invalid(&errors, format);
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
    match format {
        Format::Text => {
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
            });
            outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
    }
    exit::OK
}

fn list(paths: &[PathBuf], markdown: bool, format: Format) -> i32 {
    if format == Format::Json {
        return list_json(paths);
    }
    let mut out = std::io::stdout().lock();
    if paths.is_empty() {
        let _ = writeln!(
            out,
            "built-in packs (run by name, e.g. `mcpspec run conformance --stdio ...`):"
        );
        for pack in dsl::builtin::pack_names() {
            let n = dsl::builtin::pack_files(pack).count();
            let about = dsl::load::load_all(&[PathBuf::from(pack)], &Default::default())
                .ok()
                .and_then(|l| l.packs.into_iter().find(|p| p.name == pack))
                .map(|p| {
                    format!(
                        " {}{}",
                        p.version,
                        p.description.map(|d| format!(" — {d}")).unwrap_or_default()
                    )
                })
                .unwrap_or_default();
            let _ = writeln!(out, "  {pack}{about} ({n} file(s))");
        }
        for (alias, packs) in dsl::builtin::aliases() {
            let _ = writeln!(out, "  {alias} = {}", packs.join(" + "));
        }
        return exit::OK;
    }
    let loaded = match load(paths, false, Format::Text) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let text = if markdown {
        checks_markdown(&loaded.scenarios)
    } else {
        format!(
            "{}{}",
            packs_text(&loaded.packs),
            checks_text(&loaded.scenarios)
        )
    };
    let _ = out.write_all(text.as_bytes());
    exit::OK
}

/// `list --format json`: the built-in packs (no paths), or the packs and scenarios with
/// their checks — the same facts as the text, as one document on stdout.
fn list_json(paths: &[PathBuf]) -> i32 {
    let doc = if paths.is_empty() {
        let packs: Vec<Value> = dsl::builtin::pack_names()
            .into_iter()
            .map(|pack| {
                let info = dsl::load::load_all(&[PathBuf::from(pack)], &Default::default())
                    .ok()
                    .and_then(|l| l.packs.into_iter().find(|p| p.name == pack));
                serde_json::json!({
                    "name": pack,
                    "version": info.as_ref().map(|p| p.version.clone()),
                    "description": info.as_ref().and_then(|p| p.description.clone()),
                    "files": dsl::builtin::pack_files(pack).count(),
                })
            })
            .collect();
        let aliases: serde_json::Map<String, Value> = dsl::builtin::aliases()
            .iter()
            .map(|(alias, packs)| (alias.to_string(), serde_json::json!(packs)))
            .collect();
        serde_json::json!({ "builtinPacks": packs, "aliases": aliases })
    } else {
        let loaded = match load(paths, false, Format::Json) {
            Ok(s) => s,
            Err(code) => return code,
        };
        serde_json::json!({
            "packs": loaded.packs.iter().map(pack_json).collect::<Vec<_>>(),
            "scenarios": loaded.scenarios.iter().map(scenario_json).collect::<Vec<_>>(),
        })
    };
    outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    exit::OK
}

/// A pack as `list --format json` shows it (secret defaults masked, as in the text).
fn pack_json(p: &dsl::pack::PackInfo) -> Value {
    let parameters: Vec<Value> = p
        .parameters
        .iter()
        .map(|(name, decl)| {
            let default = match &decl.default {
                Some(_) if decl.secret => Value::String("***".into()),
                Some(d) => d.to_json(),
                None => Value::Null,
            };
            serde_json::json!({
                "name": name,
                "type": decl.type_.name(),
                "required": decl.required,
                "secret": decl.secret,
                "default": default,
                "description": decl.description,
                "env": dsl::pack::env_name(name),
            })
        })
        .collect();
    let groups: Vec<Value> = p
        .groups
        .iter()
        .map(|(name, params)| serde_json::json!({ "name": name, "parameters": params }))
        .collect();
    serde_json::json!({
        "name": p.name,
        "version": p.version,
        "manifest": p.manifest,
        "description": p.description,
        "parameters": parameters,
        "requires": p.requires,
        "imports": p.imports,
        "groups": groups,
    })
}

/// A scenario and its checks as `list --format json` shows them.
fn scenario_json(s: &Scenario) -> Value {
    let steps: Vec<Value> = s
        .steps
        .iter()
        .map(|step| {
            serde_json::json!({
                "name": step.name,
                "id": format!("{}:{}", s.id, step.name),
                "level": step.level,
                "line": step.pos.line,
                "description": step.description,
            })
        })
        .collect();
    serde_json::json!({
        "id": s.id,
        "description": s.description,
        "pack": s.pack,
        "eras": s.eras.iter().map(|e| e.label()).collect::<Vec<_>>(),
        "tags": s.tags,
        "file": s.file.name,
        "line": s.pos.line,
        "steps": steps,
    })
}

/// The packs of a `list`: what each declares (parameter values are never shown, only
/// defaults of parameters that are not secret).
fn packs_text(packs: &[dsl::pack::PackInfo]) -> String {
    let mut out = String::new();
    for p in packs {
        out.push_str(&format!(
            "pack {} {}  {}
",
            p.name, p.version, p.manifest
        ));
        if let Some(d) = &p.description {
            out.push_str(&format!(
                "    {d}
"
            ));
        }
        for (name, decl) in &p.parameters {
            let mut traits = vec![decl.type_.name().to_string()];
            if decl.required {
                traits.push("required".into());
            }
            if decl.secret {
                traits.push("secret".into());
            }
            let default = match &decl.default {
                Some(_) if decl.secret => " = ***".to_string(),
                Some(d) => format!(" = {}", d.to_json()),
                None => String::new(),
            };
            let about = decl
                .description
                .as_ref()
                .map(|d| format!("  {d}"))
                .unwrap_or_default();
            out.push_str(&format!(
                "    parameter {name} ({}){default}{about}  [{}]
",
                traits.join(", "),
                dsl::pack::env_name(name)
            ));
        }
        if let Some(r) = &p.requires {
            out.push_str(&format!(
                "    requires {r}
"
            ));
        }
        for i in &p.imports {
            out.push_str(&format!(
                "    imports {i}
"
            ));
        }
        for (g, params) in &p.groups {
            out.push_str(&format!(
                "    group {g}({})
",
                params.join(", ")
            ));
        }
    }
    if !packs.is_empty() {
        out.push('\n');
    }
    out
}

fn eras_label(s: &Scenario) -> String {
    if s.eras.is_empty() {
        "all eras".to_string()
    } else {
        s.eras
            .iter()
            .map(|e| e.label())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn checks_text(scenarios: &[Scenario]) -> String {
    let mut out = String::new();
    for s in scenarios {
        let tags = if s.tags.is_empty() {
            String::new()
        } else {
            format!(" [{}]", s.tags.join(", "))
        };
        out.push_str(&format!("{} ({}){tags}  {}\n", s.id, eras_label(s), s.pos));
        for step in &s.steps {
            out.push_str(&format!("  {}:{}\n", s.id, step.name));
        }
    }
    out
}

/// The checks of scenarios as Markdown (the README's check tables are generated with this).
pub fn checks_markdown(scenarios: &[Scenario]) -> String {
    let mut out = String::new();
    let mut pack: Option<&str> = None;
    for s in scenarios {
        if s.pack.as_deref() != pack {
            pack = s.pack.as_deref();
            if let Some(p) = pack {
                out.push_str(&format!("#### `{p}`\n\n"));
            }
        }
        out.push_str(&format!(
            "**`{}`** ({}){}\n\n",
            s.id,
            eras_label(s),
            s.description
                .as_ref()
                .map(|d| format!(" — {d}"))
                .unwrap_or_default()
        ));
        out.push_str("| check | level | rule |\n|---|---|---|\n");
        for step in &s.steps {
            let level = match step.level {
                crate::report::model::Level::Must => "MUST",
                crate::report::model::Level::Should => "SHOULD",
            };
            let rule = step
                .description
                .as_deref()
                .unwrap_or("")
                .replace('|', "\\|")
                .replace('\n', " ");
            out.push_str(&format!("| `{}` | {level} | {rule} |\n", step.name));
        }
        out.push('\n');
    }
    out
}

fn selection(args: &RunArgs) -> Result<Option<GlobSet>, UsageError> {
    if args.filters.is_empty() {
        return Ok(None);
    }
    let mut builder = GlobSetBuilder::new();
    for f in &args.filters {
        builder.add(Glob::new(f).map_err(|e| UsageError(format!("--filter `{f}`: {e}")))?);
    }
    builder
        .build()
        .map(Some)
        .map_err(|e| UsageError(format!("--filter: {e}")))
}

fn run(mut args: RunArgs) -> i32 {
    let mut secrets = Vec::new();
    let mut config_params = Vec::new();
    match crate::config::Config::find(args.config.as_deref()) {
        Ok(Some(config)) => {
            let name = args.target_name.clone();
            let applied = config.apply(&mut args, name.as_deref()).and_then(|()| {
                config_params = config.parameters(&mut secrets)?;
                Ok(())
            });
            if let Err(errors) = applied {
                errln!("{}", errors.render());
                return exit::INVALID_INPUT;
            }
        }
        Ok(None) if args.target_name.is_some() => {
            return usage(UsageError(format!(
                "--target needs a configuration file ({} or --config FILE)",
                crate::config::DEFAULT_FILE
            )));
        }
        Ok(None) => {}
        Err(errors) => {
            errln!("{}", errors.render());
            return exit::INVALID_INPUT;
        }
    }
    if args.paths.is_empty() {
        return usage(UsageError(
            "nothing to run: give scenario files, folders or packs (or `paths:` in mcpspec.yaml)"
                .into(),
        ));
    }
    let (target, target_secrets) = match args.target.to_target() {
        Ok(t) => t,
        Err(e) => return usage(e),
    };
    let eras = match args
        .eras
        .iter()
        .map(|e| Era::parse(e))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(e) => e,
        Err(e) => return usage(UsageError(format!("--era: {e}"))),
    };
    let filter = match selection(&args) {
        Ok(f) => f,
        Err(e) => return usage(e),
    };
    let tag_exprs = match args
        .tags
        .iter()
        .map(|t| TagExpr::parse(t))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(t) => t,
        Err(e) => return usage(UsageError(format!("--tag: {e}"))),
    };
    let shard = match args.shard.as_deref().map(Shard::parse).transpose() {
        Ok(s) => s,
        Err(e) => return usage(UsageError(e)),
    };
    // `FILE:LINE` arguments select the scenario (or the step, with the steps before it)
    // at that line.
    let located: Vec<(PathBuf, Option<u32>)> =
        args.paths.iter().map(|p| split_file_line(p)).collect();
    let paths: Vec<PathBuf> = located.iter().map(|(p, _)| p.clone()).collect();
    secrets.extend(target_secrets);
    let cli_params = match parse_params(&args.set, &mut secrets) {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    // Parameter values: `--set` over mcpspec.yaml; packs add the environment, `with:` and
    // defaults below these.
    let mut inputs = dsl::pack::ParamInputs {
        given: config_params.into_iter().collect(),
        env: true,
        check_required: true,
        release_steps: true,
        keep_compiled: KEEP_COMPILED,
    };
    for (name, value) in cli_params {
        let given = dsl::pack::Given {
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
    engine::security::add_derived_params(&target, &mut params, &mut secrets);
    let scenarios = match dsl::load::load_all(&paths, &inputs) {
        Ok(loaded) => {
            secrets.extend(loaded.secrets);
            loaded.scenarios
        }
        Err(errors) => {
            errln!("{}", errors.render());
            return exit::INVALID_INPUT;
        }
    };
    // The baseline's entries must name scenarios and checks that exist (whether or not
    // they run in this selection).
    let baseline = match &args.expected_failures {
        Some(path) => {
            let known = scenarios
                .iter()
                .map(|s| (s.id.as_str(), s.step_names()))
                .collect();
            match crate::baseline::Baseline::load(path)
                .and_then(|b| b.check_known(&known).map(|()| b))
            {
                Ok(b) => Some(b),
                Err(errors) => {
                    errln!("{}", errors.render());
                    return exit::INVALID_INPUT;
                }
            }
        }
        None => None,
    };
    let mut selected: Vec<Scenario> = scenarios
        .into_iter()
        .filter(|s| tag_exprs.is_empty() || tag_exprs.iter().any(|e| e.matches(&s.tags)))
        .collect();
    for (path, line) in &located {
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
    let mut items = engine::plan(&selected, &eras);
    if let Some(f) = &filter {
        items.retain(|item| f.is_match(&item.scenario.id) || f.is_match(item.id()));
    }
    // --watch: the scenarios of the files that changed (none of them: everything).
    watch::retain_changed(&mut items, &args.only_files);
    let last_run_path = crate::last_run::path_for(args.config.as_deref());
    let mut last_run = crate::last_run::LastRun::load(&last_run_path);
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
    let shard_info = shard.map(|shard| {
        let ids: Vec<String> = items.iter().map(|item| item.id()).collect();
        let full_run: Vec<&str> = ids.iter().map(String::as_str).collect();
        crate::report::model::ShardInfo::new(shard.index + 1, shard.count, &full_run)
    });
    if items.is_empty() {
        errln!("error: no scenario matches the selection (paths, --tag, --filter, --era)");
        return exit::INVALID_INPUT;
    }
    if let Some(shard) = shard {
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
    crate::redact::remember(&secrets);
    // `--json -`: stdout carries the JSON result alone, the console report goes to stderr.
    let console_to_stderr = is_stdout(args.json.as_deref());
    let console = ConsoleOptions {
        color: use_color(args.color, console_to_stderr),
        verbose: args.verbose,
        secrets: secrets.clone(),
        redaction: Default::default(),
    };
    let config = RunConfig {
        target,
        params,
        keep_passing_transcripts: args.junit.is_some() || args.json.is_some(),
        wire_validate: args.wire_validate,
        tool_calls: Default::default(),
        eras,
        jobs: args.jobs.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        }),
    };
    let strict = args.strict;
    let mut stdout: Box<dyn Write + Send> = if console_to_stderr {
        Box::new(std::io::stderr())
    } else {
        Box::new(std::io::stdout())
    };
    let concurrency = config.jobs.min(items.len());
    let rt = runtime_for(concurrency);
    let mut progress = Progress::new(items.len());
    let mut seen = report::Seen::default();
    let mut report = rt.block_on(async {
        crate::signals::install();
        // A signal stops the run, which still writes what finished (see `engine::run`).
        crate::signals::defer_exit();
        engine::run(items, &config, crate::signals::interrupted(), |suite| {
            // Show expected failures as such while streaming (staleness is judged at the end).
            let shown = match &baseline {
                Some(b) => {
                    std::borrow::Cow::Owned(crate::baseline::relabel_suite(b, suite, strict))
                }
                None => std::borrow::Cow::Borrowed(suite),
            };
            progress.clear();
            let _ =
                stdout.write_all(report::render_streamed(&shown, &console, &mut seen).as_bytes());
            let _ = stdout.flush();
            progress.advance();
        })
        .await
    });
    progress.clear();
    report.shard = shard_info;
    let applied = baseline
        .as_ref()
        .map(|b| crate::baseline::apply(b, &mut report, strict));
    if let Some(applied) = &applied {
        report.stale_entries = applied
            .stale
            .iter()
            .map(|s| crate::report::model::StaleEntry {
                entry: s.entry.clone(),
                file: s.pos.file_name().to_string(),
                line: s.pos.line,
                message: s.message.clone(),
            })
            .collect();
    }
    let _ = stdout.write_all(report::render_summary(&report, &console).as_bytes());
    if let Some(applied) = &applied {
        for stale in &applied.stale {
            errln!("{}", stale.render());
        }
    }
    if let Err(code) = write_reports(
        &report,
        args.junit.as_deref(),
        args.json.as_deref(),
        &secrets,
    ) {
        return code;
    }
    if let (Some(path), Some(signal)) = (&args.write_baseline, &report.interrupted) {
        // The unfinished suites are not failures of the server: no baseline from them.
        errln!(
            "no baseline written to {}: the run was interrupted ({signal})",
            path.display()
        );
    } else if let Some(path) = &args.write_baseline {
        if let Err(code) = write_reports_file(path, crate::baseline::write_from(&report, strict)) {
            return code;
        }
        errln!(
            "baseline of this run's failures written to {}",
            path.display()
        );
    }
    last_run.update(&report, strict);
    if let Err(e) = last_run.save(&last_run_path) {
        errln!("warning: --last-failed record not updated: {e}");
    }
    let code = match crate::signals::received() {
        Some(signal) => {
            // Anything started after the handler's kill (the run stopped right after it).
            crate::signals::kill_all();
            signal
        }
        None => exit_code(&report, applied.as_ref(), strict),
    };
    // The process ends next: its memory goes back to the system at once, so the results
    // and compiled steps of a large run are not freed one allocation at a time first.
    std::mem::forget(report);
    std::mem::forget(selected);
    code
}

fn write_reports(
    report: &RunReport,
    junit: Option<&Path>,
    json: Option<&Path>,
    secrets: &[String],
) -> Result<(), i32> {
    if let Some(path) = junit {
        write_reports_file(path, report::to_junit(report, secrets))?;
    }
    if let Some(path) = json {
        if is_stdout(Some(path)) {
            outln!("{}", report::to_json(report, secrets).trim_end());
        } else {
            write_reports_file(path, report::to_json(report, secrets))?;
        }
    }
    Ok(())
}

/// A report path of `-`: stdout.
fn is_stdout(path: Option<&Path>) -> bool {
    path.is_some_and(|p| p.as_os_str() == "-")
}

/// 4 when the server could not be started/reached, 3 when authentication failed,
/// 1 when a test failed, else 0.
///
/// 4 only when no suite of the run ever reached the server: a connection that failed
/// after others got through is the server's failure (1), so the code of a run never
/// depends on which connection a flaky server dropped.
pub fn exit_code(
    report: &RunReport,
    applied: Option<&crate::baseline::Applied>,
    strict: bool,
) -> i32 {
    let kinds = |k: &str| {
        report
            .suites
            .iter()
            .any(|s: &SuiteResult| s.setup_error_kind.as_deref() == Some(k))
    };
    let reached = report.suites.iter().any(|s| {
        s.era.negotiated.is_some()
            || matches!(s.setup_error_kind.as_deref(), Some("auth" | "protocol"))
    });
    // A baseline may cover a connection failure; without one, it decides the code.
    let uncovered = applied.is_none_or(|a| a.unexpected > 0);
    if uncovered && !reached && (kinds("start") || kinds("unreachable")) {
        exit::UNREACHABLE
    } else if uncovered && kinds("auth") {
        exit::AUTH_REQUIRED
    } else if let Some(a) = applied {
        if a.is_ok() { exit::OK } else { exit::FAILED }
    } else if report.summary.is_green() && !(strict && report.summary.warnings > 0) {
        exit::OK
    } else {
        exit::FAILED
    }
}

/// Color for the console report, written to stdout (or stderr, `to_stderr`).
fn use_color(choice: ColorChoice, to_stderr: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            let terminal = if to_stderr {
                std::io::stderr().is_terminal()
            } else {
                std::io::stdout().is_terminal()
            };
            terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

async fn call(args: CallArgs) -> i32 {
    let params = match args
        .params
        .as_deref()
        .map(serde_json::from_str::<Value>)
        .transpose()
    {
        Ok(p) => p,
        Err(e) => return usage(UsageError(format!("--params is not valid JSON: {e}"))),
    };
    let (mut conn, secrets) = match open(&args.target, &args.era).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let id = conn.next_id();
    let out = conn.build_plain(&args.method, params, Some(id));
    let n = &conn.negotiated;
    errln!(
        "# era {} ({}){}",
        n.kind.as_str(),
        n.revision,
        n.note
            .as_ref()
            .map(|x| format!(": {x}"))
            .unwrap_or_default()
    );
    let code = match conn.send(&out).await {
        Ok(ex) => match &ex.response {
            Some(resp) => {
                let text = serde_json::to_string_pretty(resp).unwrap_or_default();
                outln!("{}", report::redact(&text, &secrets));
                if resp.get("error").is_some() {
                    exit::FAILED
                } else {
                    exit::OK
                }
            }
            None => {
                let why = crate::assert::describe_no_response(&ex);
                errln!("error: {}", report::redact(&why, &secrets));
                exit::FAILED
            }
        },
        Err(e) => {
            errln!("error: {}", report::redact(&e.to_string(), &secrets));
            exit::FAILED
        }
    };
    conn.close().await;
    code
}

fn connect_exit(kind: ConnectErrorKind) -> i32 {
    match kind {
        ConnectErrorKind::Start | ConnectErrorKind::Unreachable => exit::UNREACHABLE,
        ConnectErrorKind::Auth => exit::AUTH_REQUIRED,
        ConnectErrorKind::Protocol => exit::FAILED,
    }
}

pub(crate) async fn open(
    args: &crate::cli::TargetArgs,
    era: &str,
) -> Result<(Connection, Vec<String>), i32> {
    let (target, secrets) = args.to_target().map_err(usage)?;
    let era = Era::parse(era).map_err(|e| usage(UsageError(format!("--era: {e}"))))?;
    crate::signals::install();
    match Connection::open(&target, &era.label, &era.request).await {
        Ok(c) => Ok((c, secrets)),
        Err(e) => Err(connect_failed(&e, &secrets)),
    }
}

/// Print why a connection failed (redacted, with the server's last stderr lines); the
/// exit code that goes with it.
pub(crate) fn connect_failed(e: &crate::client::ConnectError, secrets: &[String]) -> i32 {
    errln!("error: {}", report::redact(&e.message, secrets));
    if let Some(tail) = &e.stderr_tail {
        errln!(
            "server stderr (last lines):\n{}",
            report::redact(tail, secrets)
        );
    }
    connect_exit(e.kind)
}

async fn snapshot(args: SnapshotArgs) -> i32 {
    let (mut conn, secrets) = match open(&args.target, &args.era).await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let taken = contract::take_snapshot(&mut conn, args.profile.as_deref()).await;
    conn.close().await;
    let snap = match taken {
        Ok(s) => s,
        Err(e) => {
            errln!("error: {}", report::redact(&e, &secrets));
            return exit::FAILED;
        }
    };
    let dir = match &args.profile {
        Some(p) => args.out.join(p),
        None => args.out.clone(),
    };
    if let Err(e) = snap.write(&dir) {
        errln!("error: cannot write {}: {e}", dir.display());
        return exit::INVALID_INPUT;
    }
    errln!(
        "snapshot of {} ({} tools, {} resources, {} templates, {} prompts) written to {}",
        snap.label("the server"),
        snap.tools.len(),
        snap.resources.len(),
        snap.resource_templates.len(),
        snap.prompts.len(),
        dir.display()
    );
    let masks = snap.masks();
    if masks > 0 {
        errln!("note: {masks} secret value(s) redacted from the snapshot (shown as ***)");
    }
    exit::OK
}

fn diff(args: DiffArgs) -> i32 {
    let load = |p: &Path| {
        Snapshot::read(p).map_err(|e| {
            errln!("error: {e}");
            exit::INVALID_INPUT
        })
    };
    let (base, cand) = match (load(&args.baseline), load(&args.candidate)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(c), _) | (_, Err(c)) => return c,
    };
    let rules = match &args.rules {
        Some(p) => match contract::rules::Rules::load(p) {
            Ok(r) => r,
            Err(errors) => {
                errln!("{}", errors.render());
                return exit::INVALID_INPUT;
            }
        },
        None => contract::rules::Rules::default(),
    };
    let labels = (
        base.label(&args.baseline.display().to_string()),
        cand.label(&args.candidate.display().to_string()),
    );
    let report = contract::diff_snapshots(&base, &cand, labels);
    let judgement = contract::rules::judge(&rules, &report, chrono::Utc::now().date_naive());
    let text = match args.format {
        Format::Text => contract::output::to_text(&report, &judgement),
        Format::Json => contract::output::to_json(&report, &judgement),
    };
    out!("{text}");
    if let Some(path) = &args.junit
        && let Err(code) = write_reports_file(path, contract::output::to_junit(&report, &judgement))
    {
        return code;
    }
    if judgement.fails() {
        exit::FAILED
    } else {
        exit::OK
    }
}

fn write_reports_file(path: &Path, text: String) -> Result<(), i32> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = std::fs::create_dir_all(dir);
    }
    std::fs::write(path, text).map_err(|e| {
        errln!("error: cannot write {}: {e}", path.display());
        exit::INVALID_INPUT
    })
}

/// The reports given to `report merge`: the shards of each sharded run (several runs may
/// be merged, e.g. one per era), each exactly once, none missing; and no suite given twice
/// (which also covers results of unsharded runs).
fn check_shards(files: &[PathBuf], reports: &[RunReport]) -> Result<(), String> {
    let name = |i: usize| files[i].display().to_string();
    // Run id → N and, for each K, the file that holds shard K; in order of appearance.
    let mut runs: Vec<(&str, usize, Vec<Option<usize>>)> = Vec::new();
    for (i, shard) in reports.iter().enumerate() {
        let Some(shard) = &shard.shard else {
            continue;
        };
        let at = match runs
            .iter()
            .position(|(id, n, _)| *id == shard.run_id && *n == shard.count)
        {
            Some(at) => at,
            None => {
                runs.push((shard.run_id.as_str(), shard.count, vec![None; shard.count]));
                runs.len() - 1
            }
        };
        match runs[at].2.get_mut(shard.index.wrapping_sub(1)) {
            Some(Some(earlier)) => {
                return Err(format!(
                    "shard {} of run {} is given twice: {} and {}",
                    shard.label(),
                    shard.run_id,
                    name(*earlier),
                    name(i)
                ));
            }
            Some(slot) => *slot = Some(i),
            None => return Err(format!("{}: invalid shard {}", name(i), shard.label())),
        }
    }
    for (id, n, seen) in &runs {
        let missing: Vec<String> = (1..=*n)
            .filter(|k| seen[k - 1].is_none())
            .map(|k| format!("{k}/{n}"))
            .collect();
        if !missing.is_empty() {
            let given: Vec<String> = seen.iter().flatten().map(|&i| name(i)).collect();
            return Err(format!(
                "missing shard{} {} of run {id} (given: {})",
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", "),
                given.join(", ")
            ));
        }
    }
    let mut suites: HashMap<(&str, usize), usize> = HashMap::new();
    for (i, report) in reports.iter().enumerate() {
        for suite in &report.suites {
            if let Some(earlier) = suites.insert((suite.id.as_str(), suite.ordinal), i) {
                return Err(format!(
                    "suite `{}` is in both {} and {}: a result is given twice",
                    suite.id,
                    name(earlier),
                    name(i)
                ));
            }
        }
    }
    Ok(())
}

/// `mcpspec report merge`: shard results → one report, in the order of the full run.
fn merge(files: &[PathBuf], junit: Option<&Path>, json: Option<&Path>) -> i32 {
    let mut reports = Vec::new();
    for f in files {
        let text = match crate::source::read_text(f) {
            Ok(t) => t,
            Err(e) => return usage(UsageError(format!("{}: cannot read: {e}", f.display()))),
        };
        match serde_json::from_str::<RunReport>(&text) {
            Ok(r) => reports.push(r),
            Err(e) => {
                return usage(UsageError(format!(
                    "{}: not an mcpspec JSON result: {e}",
                    f.display()
                )));
            }
        }
    }
    let Some(first) = reports.first().cloned() else {
        return usage(UsageError("no result files".into()));
    };
    if let Err(e) = check_shards(files, &reports) {
        return usage(UsageError(e));
    }
    let mut suites: Vec<SuiteResult> = reports
        .iter()
        .flat_map(|r| r.suites.iter().cloned())
        .collect();
    suites.sort_by_key(|s| s.ordinal);
    let merged = RunReport {
        started_at: reports
            .iter()
            .map(|r| r.started_at.clone())
            .min()
            .unwrap_or_default(),
        duration: reports.iter().map(|r| r.duration).max().unwrap_or_default(),
        summary: crate::report::model::Summary::from_suites(&suites),
        stale_entries: reports
            .iter()
            .flat_map(|r| r.stale_entries.iter().cloned())
            .collect(),
        interrupted: reports.iter().find_map(|r| r.interrupted.clone()),
        suites,
        ..first
    };
    let console = ConsoleOptions {
        color: false,
        verbose: false,
        secrets: Vec::new(),
        redaction: Default::default(),
    };
    let summary = report::render_summary(&merged, &console);
    if is_stdout(json) {
        err!("{summary}");
    } else {
        out!("{summary}");
    }
    if let Err(code) = write_reports(&merged, junit, json, &[]) {
        return code;
    }
    if !merged.stale_entries.is_empty() {
        return exit::FAILED;
    }
    exit_code(&merged, None, false)
}

/// A one-line progress indicator on stderr: only on a terminal, only once a run has
/// taken longer than a moment, cleared before each suite's report is printed.
struct Progress {
    enabled: bool,
    total: usize,
    done: usize,
    started: std::time::Instant,
    shown: bool,
}

impl Progress {
    const AFTER: std::time::Duration = std::time::Duration::from_millis(800);

    fn new(total: usize) -> Progress {
        Progress {
            enabled: std::io::stderr().is_terminal() && total > 1,
            total,
            done: 0,
            started: std::time::Instant::now(),
            shown: false,
        }
    }

    fn advance(&mut self) {
        self.done += 1;
        if self.enabled && self.done < self.total && self.started.elapsed() >= Self::AFTER {
            err!(
                "\r[{}/{}] {:.1}s",
                self.done,
                self.total,
                self.started.elapsed().as_secs_f64()
            );
            self.shown = true;
        }
    }

    fn clear(&mut self) {
        if self.shown {
            err!("\r\x1b[2K");
            self.shown = false;
        }
    }
}

/// `--set NAME=VALUE` parameters; `NAME=env:VAR` reads the environment and is a secret.
fn parse_params(
    sets: &[String],
    secrets: &mut Vec<String>,
) -> Result<serde_json::Map<String, Value>, UsageError> {
    let mut params = serde_json::Map::new();
    for set in sets {
        let Some((name, value)) = set.split_once('=') else {
            return Err(UsageError(format!("--set `{set}`: expected NAME=VALUE")));
        };
        if !crate::dsl::load::is_variable_name(name) {
            return Err(UsageError(format!(
                "--set `{set}`: `{name}` is not a variable name (letters, digits, `_`)"
            )));
        }
        let value = match value.strip_prefix("env:") {
            Some(var) => {
                let v = std::env::var(var).map_err(|_| {
                    UsageError(format!(
                        "--set {name}=env:{var}: the environment variable is not set"
                    ))
                })?;
                if !v.is_empty() {
                    secrets.push(v.clone());
                }
                v
            }
            None => value.to_string(),
        };
        // Tokens are credentials however they were given (the security pack's
        // `wrong_audience_token`, `expired_token`, `other_user_token`).
        if name.ends_with("_token") && !value.is_empty() {
            secrets.push(value.clone());
        }
        params.insert(name.to_string(), Value::String(value));
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::EraInfo;

    fn suite(negotiated: Option<&str>, kind: Option<&str>) -> SuiteResult {
        SuiteResult {
            id: "s@legacy".into(),
            ordinal: 0,
            scenario: "s".into(),
            description: None,
            file: "s.yaml".into(),
            line: 1,
            pack: None,
            era: EraInfo {
                requested: "legacy".into(),
                negotiated: negotiated.map(str::to_string),
                ..EraInfo::default()
            },
            started_at: String::new(),
            duration: Default::default(),
            setup_error: kind.map(|k| format!("{k} error")),
            setup_error_kind: kind.map(str::to_string),
            steps: Vec::new(),
            stderr_tail: None,
        }
    }

    fn report(suites: Vec<SuiteResult>) -> RunReport {
        RunReport {
            mcpspec_version: String::new(),
            target: String::new(),
            transport: "http".into(),
            started_at: String::new(),
            duration: Default::default(),
            summary: crate::report::model::Summary::from_suites(&suites),
            suites,
            stale_entries: Vec::new(),
            interrupted: None,
            shard: None,
        }
    }

    /// 4 only for a target no suite reached: a connection that failed after others got
    /// through is a failure of the server (1), whichever connection it was.
    #[test]
    fn unreachable_only_when_never_reached() {
        let never = report(vec![
            suite(None, Some("unreachable")),
            suite(None, Some("unreachable")),
        ]);
        assert_eq!(exit_code(&never, None, false), exit::UNREACHABLE);
        for reached in [
            suite(Some("2025-11-25"), None),
            suite(None, Some("protocol")),
        ] {
            let later = report(vec![reached, suite(None, Some("unreachable"))]);
            assert_eq!(exit_code(&later, None, false), exit::FAILED);
        }
    }
}
