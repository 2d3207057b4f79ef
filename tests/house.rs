//! House rules on the shape of the source, checked from its text (issue #43): no production
//! file grows past [`MAX_PRODUCTION_LINES`]: a file that large holds several
//! responsibilities; split it by concept rather than raise the bound. And no production code
//! imports its parent by glob (`use super::*`): a file says what it takes and from where.

use std::path::{Path, PathBuf};

/// The most lines a file of production code may have.
const MAX_PRODUCTION_LINES: usize = 600;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `src/` folder of every workspace member (`.` included), from the root `Cargo.toml`.
fn source_folders() -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    let members = manifest
        .split_once("members = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .expect("a [workspace] members list in Cargo.toml")
        .0;
    let folders: Vec<PathBuf> = members
        .split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(|m| root().join(m).join("src"))
        .collect();
    for folder in &folders {
        assert!(folder.is_dir(), "{} is not a folder", folder.display());
    }
    folders
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source folder") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The lines of a file before its unit-test module (`#[cfg(test)]` then `mod tests`); the
/// whole file when it has none (tests in a `tests.rs` beside it are a file of their own).
fn production_lines(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    lines
        .windows(2)
        .position(|pair| {
            pair[0].trim() == "#[cfg(test)]" && {
                let next = pair[1].trim_start();
                let next = next
                    .strip_prefix("pub(crate) ")
                    .or_else(|| next.strip_prefix("pub(super) "))
                    .or_else(|| next.strip_prefix("pub "))
                    .unwrap_or(next);
                next.starts_with("mod tests")
            }
        })
        .unwrap_or(lines.len())
}

#[test]
fn production_lines_counts_up_to_the_test_module() {
    assert_eq!(production_lines("a\nb\n"), 2);
    assert_eq!(
        production_lines("a\nb\n#[cfg(test)]\nmod tests {\n x\n}\n"),
        2
    );
    assert_eq!(production_lines("a\n#[cfg(test)]\nmod tests;\n"), 1);
    assert_eq!(production_lines("a\n#[cfg(test)]\nfn helper() {}\n"), 3);
}

#[test]
fn no_production_file_passes_600_lines() {
    let mut files = Vec::new();
    for folder in source_folders() {
        rust_files(&folder, &mut files);
    }
    let mut over: Vec<(usize, String)> = files
        .iter()
        .filter_map(|file| {
            let text = std::fs::read_to_string(file).expect("readable source");
            let count = production_lines(&text);
            let name = file
                .strip_prefix(root())
                .unwrap_or(file)
                .display()
                .to_string();
            (count > MAX_PRODUCTION_LINES).then_some((count, name))
        })
        .collect();
    over.sort_by(|a, b| b.cmp(a));
    assert!(
        over.is_empty(),
        "{} files have more than {MAX_PRODUCTION_LINES} production lines (lines before \
         `#[cfg(test)] mod tests`); split each by responsibility:\n{}",
        over.len(),
        over.iter()
            .map(|(count, name)| format!("{count:>6} {name}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// The production lines of `text` (before its test module) that import their parent by glob.
fn super_globs(text: &str) -> Vec<usize> {
    text.lines()
        .take(production_lines(text))
        .enumerate()
        .filter(|(_, line)| line.trim() == "use super::*;")
        .map(|(index, _)| index + 1)
        .collect()
}

#[test]
fn super_globs_are_found_only_before_the_test_module() {
    assert_eq!(super_globs("use a::b;\nuse super::*;\n"), vec![2]);
    assert_eq!(
        super_globs("use super::A;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n"),
        Vec::<usize>::new()
    );
}

/// Checked in mcpspec's own `src/` (the example servers of the workspace still glob).
#[test]
fn no_production_file_imports_its_parent_by_glob() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut globs: Vec<String> = files
        .iter()
        .flat_map(|file| {
            let text = std::fs::read_to_string(file).expect("readable source");
            let name = file
                .strip_prefix(root())
                .unwrap_or(file)
                .display()
                .to_string();
            super_globs(&text)
                .into_iter()
                .map(move |line| format!("{name}:{line}"))
        })
        .collect();
    globs.sort();
    assert!(
        globs.is_empty(),
        "{} production files import `use super::*`; import the items they use by name \
         (from their real module):\n{}",
        globs.len(),
        globs.join("\n")
    );
}
