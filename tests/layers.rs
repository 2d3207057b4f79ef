//! The import picture of `src/` against the layer list in `src/lib.rs`'s doc: every
//! `crate::<module>` a top-level module names must be on its own layer or below, and no
//! two top-level modules may import each other. Derived from the source text (`use
//! crate::…` lines and `crate::…` paths), so a new upward import fails here with the line
//! that made it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Imports that break the layers today, each owned by another change and with the reason it
/// is still here. Remove an entry when its import is gone (the test says so).
const KNOWN: &[(&str, &str, &str)] = &[];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The layers of `lib.rs`'s doc, bottom up: lines `//! N. `a`, `b`, …`.
fn layers() -> BTreeMap<String, usize> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).expect("src/lib.rs");
    let mut out = BTreeMap::new();
    for line in lib.lines() {
        let Some(rest) = line.strip_prefix("//! ") else {
            continue;
        };
        let Some((number, names)) = rest.split_once(". ") else {
            continue;
        };
        let Ok(layer) = number.trim().parse::<usize>() else {
            continue;
        };
        for name in names.split('`').skip(1).step_by(2) {
            out.insert(name.to_string(), layer);
        }
    }
    out
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`src/app/init/render.rs` → `app`).
fn top_module(path: &Path) -> String {
    let rel = path.strip_prefix(src()).expect("under src");
    let first = rel.components().next().expect("a component");
    let name = first.as_os_str().to_string_lossy();
    name.trim_end_matches(".rs").to_string()
}

/// The top-level modules a line names through `crate::`, comments left out.
fn named_modules(line: &str) -> Vec<String> {
    let code = line.split("//").next().unwrap_or("");
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `use crate::{a, b::c};`
            let inner = group.split('}').next().unwrap_or("");
            for part in inner.split(',') {
                let name = part.trim().split("::").next().unwrap_or("").trim();
                if !name.is_empty() {
                    out.push(name.to_string());
                }
            }
            continue;
        }
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.push(name);
        }
    }
    out
}

/// `from` → `to` → the first place (`file:line`) that imports it.
fn graph() -> BTreeMap<String, BTreeMap<String, String>> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.sort();
    let mut edges: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for file in files {
        let from = top_module(&file);
        if from == "lib" || from == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("readable source");
        for (n, line) in text.lines().enumerate() {
            for to in named_modules(line) {
                if to != from {
                    edges
                        .entry(from.clone())
                        .or_default()
                        .entry(to)
                        .or_insert_with(|| {
                            format!("{}:{}", file.strip_prefix(src()).unwrap().display(), n + 1)
                        });
                }
            }
        }
    }
    edges
}

fn known(from: &str, to: &str) -> bool {
    KNOWN
        .iter()
        .any(|(a, b, _)| (*a == from && *b == to) || (*a == to && *b == from))
}

#[test]
fn the_layer_doc_names_every_top_level_module() {
    let layers = layers();
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| top_module(f))
        .filter(|m| m != "lib" && m != "main")
        .collect();
    let missing: Vec<&String> = modules
        .iter()
        .filter(|m| !layers.contains_key(*m))
        .collect();
    assert!(
        missing.is_empty(),
        "not in lib.rs's layer list: {missing:?}"
    );
    let stale: Vec<&String> = layers.keys().filter(|m| !modules.contains(*m)).collect();
    assert!(
        stale.is_empty(),
        "in lib.rs's layer list but not in src/: {stale:?}"
    );
}

#[test]
fn imports_go_down_the_layers() {
    let layers = layers();
    let mut wrong = Vec::new();
    for (from, tos) in graph() {
        for (to, at) in tos {
            let (Some(a), Some(b)) = (layers.get(&from), layers.get(&to)) else {
                continue;
            };
            if b > a && !known(&from, &to) {
                wrong.push(format!(
                    "{from} (layer {a}) imports {to} (layer {b}) at {at}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "upward imports:\n{}", wrong.join("\n"));
}

#[test]
fn no_two_top_level_modules_import_each_other() {
    let graph = graph();
    let mut cycles = Vec::new();
    for (from, tos) in &graph {
        for (to, at) in tos {
            if from < to
                && let Some(back) = graph.get(to).and_then(|t| t.get(from))
                && !known(from, to)
            {
                cycles.push(format!("{from} ↔ {to} ({at}; {back})"));
            }
        }
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

/// The reports read results in the result vocabulary (`outcome`, `exchange`), never in the
/// language or the assertions that produced them: a report renders what ran, whoever made it.
#[test]
fn reports_read_results_without_the_language() {
    let graph = graph();
    let report = graph.get("report").cloned().unwrap_or_default();
    let wrong: Vec<String> = ["dsl", "assert", "engine", "client"]
        .iter()
        .filter_map(|m| {
            report
                .get(*m)
                .map(|at| format!("report imports {m} at {at}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Every known exception still exists: when one is fixed, its entry goes.
#[test]
fn known_exceptions_are_still_needed() {
    let graph = graph();
    for (a, b, why) in KNOWN {
        let there = graph.get(*a).is_some_and(|t| t.contains_key(*b))
            || graph.get(*b).is_some_and(|t| t.contains_key(*a));
        assert!(there, "{a} ↔ {b} is gone: remove it from KNOWN ({why})");
    }
}

#[test]
fn the_reader_sees_grouped_and_full_paths() {
    assert_eq!(
        named_modules("use crate::{dsl, report::model::Level};"),
        ["dsl", "report"]
    );
    assert_eq!(
        named_modules("    let x = crate::client::open(); // crate::engine"),
        ["client"]
    );
}
