//! The import picture of `src/` against its floors and layers, keyed by folder:
//!
//! - `src/lib.rs`'s doc lists the floors bottom up (`//! N. `floor` …`), one folder each;
//! - each floor's `mod.rs` lists its modules in layers the same way, and so do the folders in
//!   [`SUB_LAYERED`] for their children;
//! - a file imports only from its own floor or a lower one, and inside a layered folder only
//!   from its own layer or a lower one;
//! - no files import each other in a circle, directly or through others.
//!
//! Derived from the source text (`crate::…`, `super::…` and `self::…` paths, grouped imports
//! included), so a new upward import or a new circle fails here with the line that made it.
//! A module and its own submodules (a folder's `mod.rs` and the files inside it) are one
//! unit: their imports of each other are neither layered nor circles.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module folders (under `src/`) whose children are layered by their `mod.rs`, besides the
/// root and the floors.
const SUB_LAYERED: &[&str] = &["language/dsl", "run/client", "run/engine"];

/// Circles still there, each owned by another change, with the reason: (the folder all its
/// files lie in, why). A circle inside such a folder passes; an entry whose circle is gone
/// fails (remove it).
const KNOWN_CIRCLES: &[(&str, &str)] = &[];

type Module = Vec<String>;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// `//! N. `a`, `b`` lines of a file's doc: name → layer.
fn layers_of(file: &Path) -> BTreeMap<String, usize> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("//! ") else {
            continue;
        };
        let Some((number, names)) = rest.split_once(". ") else {
            continue;
        };
        let Ok(layer) = number.trim().parse::<usize>() else {
            continue;
        };
        if !names.starts_with('`') {
            continue;
        }
        // `a`, `b` — text: the names before any prose
        let names = names.split(" —").next().unwrap_or("");
        for name in names.split('`').skip(1).step_by(2) {
            out.insert(name.to_string(), layer);
        }
    }
    out
}

/// The folders that list their children in layers, as module paths: the root, each floor,
/// [`SUB_LAYERED`].
fn layered() -> Vec<Module> {
    let mut out = vec![vec![]];
    for floor in layers_of(&src().join("lib.rs")).keys() {
        out.push(vec![floor.clone()]);
    }
    for sub in SUB_LAYERED {
        out.push(sub.split('/').map(str::to_string).collect());
    }
    out
}

/// The file whose doc lists a folder's layers.
fn doc_file(folder: &Module) -> PathBuf {
    if folder.is_empty() {
        return src().join("lib.rs");
    }
    let dir = src().join(folder.join("/"));
    if dir.join("mod.rs").exists() {
        dir.join("mod.rs")
    } else {
        dir.with_extension("rs")
    }
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

/// The module a file is (`src/run/engine/mod.rs` → `run::engine`).
fn module_of(file: &Path) -> Module {
    let rel = file.strip_prefix(src()).expect("under src");
    let mut parts: Module = rel
        .components()
        .map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// Every module of `src/` and its file (`main.rs` left out: it is the binary).
fn modules() -> BTreeMap<Module, PathBuf> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files
        .into_iter()
        .filter(|f| !f.ends_with("main.rs") || f.parent() != Some(&src()))
        .map(|f| (module_of(&f), f))
        .collect()
}

/// The children a folder holds (`a.rs` and `a/` are `a`).
fn children(folder: &Module, modules: &BTreeMap<Module, PathBuf>) -> BTreeSet<String> {
    modules
        .keys()
        .filter(|m| m.len() > folder.len() && m.starts_with(folder))
        .map(|m| m[folder.len()].clone())
        .collect()
}

/// Inline modules (`mod tests {` … `}` in rustfmt's layout) by line range, with their path
/// and whether they are test code (`#[cfg(test)]` on the line before).
fn inline_scopes(lines: &[&str], base: &Module) -> Vec<(usize, usize, Module, bool)> {
    let mut out = Vec::new();
    let mut stack: Vec<(String, String, usize, bool)> = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let decl = trimmed
            .strip_prefix("pub ")
            .or_else(|| {
                trimmed
                    .split_once(") ")
                    .filter(|_| trimmed.starts_with("pub("))
                    .map(|(_, r)| r)
            })
            .unwrap_or(trimmed);
        if let Some(name) = decl.strip_prefix("mod ").and_then(|r| r.strip_suffix(" {")) {
            let test = n > 0 && lines[n - 1].trim() == "#[cfg(test)]";
            stack.push((indent.to_string(), name.to_string(), n, test));
            continue;
        }
        if let Some((open_indent, ..)) = stack.last()
            && *line == format!("{open_indent}}}")
        {
            let (_, name, start, test) = stack.pop().expect("an open module");
            let test = test || stack.iter().any(|s| s.3);
            let mut path = base.clone();
            path.extend(stack.iter().map(|s| s.1.clone()));
            path.push(name);
            out.push((start, n, path, test));
        }
    }
    out
}

/// The paths written from `s[i..]`: `a::b::{c, d::e}` → `[a,b,c]`, `[a,b,d,e]`.
fn parse_tree(s: &[u8], mut i: usize) -> (Vec<Vec<String>>, usize) {
    let mut segs: Vec<String> = Vec::new();
    loop {
        while i < s.len() && s[i].is_ascii_whitespace() {
            i += 1;
        }
        if i < s.len() && s[i] == b'{' {
            i += 1;
            let mut out = Vec::new();
            while i < s.len() {
                while i < s.len() && (s[i].is_ascii_whitespace() || s[i] == b',') {
                    i += 1;
                }
                if i < s.len() && s[i] == b'}' {
                    i += 1;
                    break;
                }
                let (sub, j) = parse_tree(s, i);
                if j == i {
                    i += 1;
                    continue;
                }
                i = j;
                for p in sub {
                    let mut full = segs.clone();
                    full.extend(p.into_iter().filter(|x| x != "self"));
                    out.push(full);
                }
                // `x as y`
                let rest = std::str::from_utf8(&s[i..]).unwrap_or("");
                let trimmed = rest.trim_start();
                if let Some(after) = trimmed.strip_prefix("as ") {
                    let alias = after.trim_start();
                    let len = alias
                        .bytes()
                        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                        .count();
                    i += rest.len() - alias.len() + len;
                }
            }
            return (out, i);
        }
        let start = i;
        if i < s.len() && s[i] == b'*' {
            i += 1;
        } else {
            while i < s.len() && (s[i].is_ascii_alphanumeric() || s[i] == b'_') {
                i += 1;
            }
        }
        if i == start {
            return (vec![segs], i);
        }
        segs.push(String::from_utf8_lossy(&s[start..i]).into_owned());
        if s[i..].starts_with(b"::") {
            i += 2;
            continue;
        }
        return (vec![segs], i);
    }
}

/// The absolute paths a source text names through `crate::`, `super::` and `self::` from the
/// module `here`, each with its line and whether it is in test code; comments left out.
fn named_paths(text: &str, here: &Module) -> Vec<(Module, usize, bool)> {
    let lines: Vec<&str> = text.lines().collect();
    let scopes = inline_scopes(&lines, here);
    let code: Vec<&str> = lines
        .iter()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect();
    let joined = code.join("\n");
    let bytes = joined.as_bytes();
    let line_starts: Vec<usize> = std::iter::once(0)
        .chain(joined.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &bytes[i..];
        let starts = [&b"crate::"[..], b"super::", b"self::"]
            .iter()
            .any(|p| rest.starts_with(p));
        let boundary = i == 0
            || !(bytes[i - 1].is_ascii_alphanumeric()
                || matches!(bytes[i - 1], b'_' | b':' | b'$'));
        if !(starts && boundary) {
            i += 1;
            continue;
        }
        let line = line_starts.partition_point(|&s| s <= i) - 1;
        let (module, test) = scopes
            .iter()
            .filter(|(s, e, ..)| *s <= line && line <= *e)
            .max_by_key(|(_, _, p, _)| p.len())
            .map_or((here, false), |(_, _, p, t)| (p, *t));
        let (paths, end) = parse_tree(bytes, i);
        for p in paths {
            let mut base = module.clone();
            let mut k = 0;
            for seg in &p {
                match seg.as_str() {
                    "crate" if k == 0 => base.clear(),
                    "super" => {
                        base.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                k += 1;
            }
            base.extend(p[k..].iter().filter(|s| *s != "*").cloned());
            out.push((base, line + 1, test));
        }
        i = end.max(i + 1);
    }
    out
}

/// `from` → `to` → the first `file:line` that imports it; a module's own ancestors and
/// descendants left out, and test code (`#[cfg(test)] mod …`) unless `tests`.
fn graph(
    modules: &BTreeMap<Module, PathBuf>,
    tests: bool,
) -> BTreeMap<Module, BTreeMap<Module, String>> {
    let mut edges: BTreeMap<Module, BTreeMap<Module, String>> = BTreeMap::new();
    for (from, file) in modules {
        let text = std::fs::read_to_string(file).expect("readable source");
        for (mut to, line, test) in named_paths(&text, from) {
            if test && !tests {
                continue;
            }
            while !to.is_empty() && !modules.contains_key(&to) {
                to.pop();
            }
            if to.starts_with(from) || from.starts_with(&to) {
                continue;
            }
            let at = format!("src/{}:{line}", file.strip_prefix(src()).unwrap().display());
            edges
                .entry(from.clone())
                .or_default()
                .entry(to)
                .or_insert(at);
        }
    }
    edges
}

fn name(m: &Module) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        m.join("::")
    }
}

#[test]
fn every_layered_folder_lists_exactly_its_children() {
    let modules = modules();
    let mut wrong = Vec::new();
    for folder in layered() {
        let listed: BTreeSet<String> = layers_of(&doc_file(&folder)).into_keys().collect();
        let there = children(&folder, &modules);
        for m in there.difference(&listed) {
            wrong.push(format!(
                "{}: `{m}` is not in its layer list",
                doc_file(&folder).display()
            ));
        }
        for m in listed.difference(&there) {
            wrong.push(format!(
                "{}: `{m}` is listed but not there",
                doc_file(&folder).display()
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn imports_go_down_the_floors_and_layers() {
    let modules = modules();
    let layers: BTreeMap<Module, BTreeMap<String, usize>> = layered()
        .into_iter()
        .map(|f| {
            let l = layers_of(&doc_file(&f));
            (f, l)
        })
        .collect();
    let mut wrong = Vec::new();
    for (from, tos) in graph(&modules, true) {
        for (to, at) in tos {
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            let folder: Module = from[..common].to_vec();
            let Some(list) = layers.get(&folder) else {
                continue;
            };
            let (a, b) = (&from[common], &to[common]);
            if let (Some(la), Some(lb)) = (list.get(a), list.get(b))
                && lb > la
            {
                wrong.push(format!(
                    "{} (`{a}`, layer {la} of {}) imports {} (`{b}`, layer {lb}) at {at}",
                    name(&from),
                    name(&folder),
                    name(&to)
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "upward imports:\n{}", wrong.join("\n"));
}

/// Tarjan's strongly connected components: every group of files that reach each other.
fn circles(edges: &BTreeMap<Module, BTreeMap<Module, String>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        edges: &'a BTreeMap<Module, BTreeMap<Module, String>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on: BTreeSet<&'a Module>,
        out: Vec<Vec<Module>>,
    }
    fn visit<'a>(v: &'a Module, st: &mut State<'a>) {
        let n = st.index.len();
        st.index.insert(v, n);
        st.low.insert(v, n);
        st.stack.push(v);
        st.on.insert(v);
        for w in st.edges.get(v).into_iter().flat_map(|t| t.keys()) {
            if !st.index.contains_key(w) {
                visit(w, st);
                let l = st.low[w].min(st.low[v]);
                st.low.insert(v, l);
            } else if st.on.contains(w) {
                let l = st.index[w].min(st.low[v]);
                st.low.insert(v, l);
            }
        }
        if st.low[v] == st.index[v] {
            let mut group = Vec::new();
            while let Some(w) = st.stack.pop() {
                st.on.remove(w);
                group.push(w.clone());
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                st.out.push(group);
            }
        }
    }
    let mut st = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !st.index.contains_key(v) {
            visit(v, &mut st);
        }
    }
    st.out
}

/// Test code (`#[cfg(test)] mod tests`) may use a sibling's fixtures: the circles are those
/// of the code that ships.
#[test]
fn no_files_import_each_other_in_a_circle() {
    let edges = graph(&modules(), false);
    let all = circles(&edges);
    let known = |group: &Vec<Module>, folder: &str| {
        let folder: Module = folder.split("::").map(str::to_string).collect();
        group.iter().all(|m| m.starts_with(&folder))
    };
    for (folder, why) in KNOWN_CIRCLES {
        assert!(
            all.iter().any(|g| known(g, folder)),
            "no circle inside {folder} any more: remove it from KNOWN_CIRCLES ({why})"
        );
    }
    let found: Vec<String> = all
        .into_iter()
        .filter(|g| !KNOWN_CIRCLES.iter().any(|(folder, _)| known(g, folder)))
        .map(|group| {
            let inside: Vec<String> = group
                .iter()
                .flat_map(|a| {
                    edges[a]
                        .iter()
                        .filter(|(b, _)| group.contains(b))
                        .map(move |(b, at)| format!("  {} → {} at {at}", name(a), name(b)))
                })
                .collect();
            inside.join("\n")
        })
        .collect();
    assert!(found.is_empty(), "file circles:\n{}", found.join("\n\n"));
}

/// The reports read results in the result vocabulary, never in the language or the run that
/// produced them (the floors say so too: `results` is below `language` and `run`).
#[test]
fn the_results_floor_is_below_the_language_and_the_run() {
    let floors = layers_of(&src().join("lib.rs"));
    assert!(floors["results"] < floors["language"] && floors["results"] < floors["run"]);
}

#[test]
fn the_reader_resolves_grouped_relative_and_inline_paths() {
    let here: Module = vec!["run".into(), "engine".into(), "send".into()];
    let text = "use crate::{language::dsl, results::report::{result::Level, self}};\n\
                let x = crate::run::client::open(); // crate::face\n\
                use super::checks::{self as c, CheckInput};\n\
                #[cfg(test)]\nmod tests {\n    use super::super::pool;\n}\n";
    let got: Vec<String> = named_paths(text, &here)
        .into_iter()
        .map(|(m, l, test)| format!("{}@{l}{}", name(&m), if test { " (test)" } else { "" }))
        .collect();
    assert_eq!(
        got,
        [
            "language::dsl@1",
            "results::report::result::Level@1",
            "results::report@1",
            "run::client::open@2",
            "run::engine::checks@3",
            "run::engine::checks::CheckInput@3",
            "run::engine::pool@6 (test)",
        ]
    );
}

#[test]
fn a_circle_of_three_is_found() {
    let m = |s: &str| -> Module { vec![s.to_string()] };
    let mut edges: BTreeMap<Module, BTreeMap<Module, String>> = BTreeMap::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        edges.entry(m(a)).or_default().insert(m(b), String::new());
    }
    assert_eq!(circles(&edges), vec![vec![m("a"), m("b"), m("c")]]);
}
