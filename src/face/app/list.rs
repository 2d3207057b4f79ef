//! `mcpspec list`: the packs, scenarios and checks a set of paths holds (text, Markdown or
//! JSON).

use std::io::Write;
use std::path::PathBuf;

use serde_json::Value;

use crate::face::cli::{Format, exit};
use crate::language::dsl::{self, Scenario};
use crate::protocol::rules::REVISIONS;

use super::inputs::load;

pub(super) fn list(paths: &[PathBuf], markdown: bool, format: Format, offline: bool) -> i32 {
    if format == Format::Json {
        return list_json(paths, offline);
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
    let loaded = match load(paths, false, Format::Text, offline) {
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
pub(super) fn list_json(paths: &[PathBuf], offline: bool) -> i32 {
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
        let loaded = match load(paths, false, Format::Json, offline) {
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
pub(super) fn pack_json(p: &dsl::pack::PackInfo) -> Value {
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
                "env": dsl::params::env_name(name),
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
        "origin": p.origin,
        "groups": groups,
    })
}

/// A scenario and its checks as `list --format json` shows them.
pub(super) fn scenario_json(s: &Scenario) -> Value {
    let steps: Vec<Value> = s
        .steps
        .iter()
        .map(|step| {
            serde_json::json!({
                "name": step.name,
                "id": format!("{}:{}", s.id, step.name),
                "level": step.level,
                "rule": step.rule.map(|r| r.id),
                "levels": step.rule.map(|r| {
                    REVISIONS
                        .iter()
                        .zip(r.levels)
                        .map(|(rev, l)| (rev.to_string(), Value::from(l.as_str())))
                        .collect::<serde_json::Map<_, _>>()
                }),
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
pub(super) fn packs_text(packs: &[dsl::pack::PackInfo]) -> String {
    let mut out = String::new();
    for p in packs {
        out.push_str(&format!(
            "pack {} {}  {}
",
            p.name, p.version, p.manifest
        ));
        if let Some(origin) = &p.origin {
            out.push_str(&format!("    from {origin}\n"));
        }
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
                dsl::params::env_name(name)
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

pub(super) fn eras_label(s: &Scenario) -> String {
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

pub(super) fn checks_text(scenarios: &[Scenario]) -> String {
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

/// A step's level in one revision, as the checks table shows it: blank where the scenario
/// (or step) does not run, `-` where its rule is none (skipped), else MUST or SHOULD.
fn level_cell(s: &Scenario, step: &crate::language::dsl::Step, revision: &str) -> &'static str {
    use crate::protocol::era::{EraKind, EraSelector};
    let kind = EraKind::of_revision(revision);
    let runs = |eras: &[EraSelector]| {
        eras.is_empty() || eras.iter().any(|e| e.matches_negotiated(kind, revision))
    };
    if !runs(&s.eras) || !runs(step.eras.as_deref().unwrap_or(&[])) {
        return "";
    }
    match step.rule {
        Some(rule) => rule.level_at(revision).as_str(),
        None => match step.level {
            crate::results::outcome::Level::Must => "MUST",
            crate::results::outcome::Level::Should => "SHOULD",
        },
    }
}

/// The checks of scenarios as Markdown (the book's check tables are generated with this):
/// per step its level in each protocol revision (`protocol::rules`) and its rule.
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
        out.push_str("| check |");
        for r in REVISIONS {
            out.push_str(&format!(" {r} |"));
        }
        out.push_str(" rule |\n|---|");
        out.push_str(&"---|".repeat(REVISIONS.len()));
        out.push_str("---|\n");
        for step in &s.steps {
            let mut rule = step
                .description
                .as_deref()
                .unwrap_or("")
                .replace('|', "\\|")
                .replace('\n', " ");
            if let Some(basis) = step.rule.map(|r| r.basis).filter(|b| !b.is_empty()) {
                rule.push_str(&format!(" — *by revision:* {}", basis.replace('|', "\\|")));
            }
            out.push_str(&format!("| `{}` |", step.name));
            for r in REVISIONS {
                out.push_str(&format!(" {} |", level_cell(s, step, r)));
            }
            out.push_str(&format!(" {rule} |\n"));
        }
        out.push('\n');
    }
    out
}
